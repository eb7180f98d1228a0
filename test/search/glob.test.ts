import { describe, expect, it } from "vitest";
import { generatePaths } from "../../bench/search-paths.js";
import { GlobSyntaxError, globMatcher, pathFilter } from "../../src/search/glob.js";

const matching = (glob: string, paths: string[]) => paths.filter(globMatcher(glob));
const PATHS = ["a.ts", "src/a.ts", "src/deep/b.ts", "src/deep/b.tsx", "src/c.test.ts", "lib/x.js", "src.ts", ".env", "docs/a?.md"];

describe("globMatcher", () => {
  it("a pattern without a slash matches the file name at any depth", () => {
    expect(matching("*.ts", PATHS)).toEqual(["a.ts", "src/a.ts", "src/deep/b.ts", "src/c.test.ts", "src.ts"]);
    expect(matching("a.ts", PATHS)).toEqual(["a.ts", "src/a.ts"]);
    expect(matching("*.test.ts", PATHS)).toEqual(["src/c.test.ts"]);
  });

  it("a pattern with a slash matches the whole path; * stays in one folder, ** spans folders", () => {
    expect(matching("src/*.ts", PATHS)).toEqual(["src/a.ts", "src/c.test.ts"]);
    expect(matching("src/**/*.ts", PATHS)).toEqual(["src/a.ts", "src/deep/b.ts", "src/c.test.ts"]);
    expect(matching("src/**", PATHS)).toEqual(["src/a.ts", "src/deep/b.ts", "src/deep/b.tsx", "src/c.test.ts"]);
    expect(matching("**/b.ts", PATHS)).toEqual(["src/deep/b.ts"]);
    expect(matching("/a.ts", PATHS)).toEqual(["a.ts"]);
    expect(matching("**", PATHS)).toEqual(PATHS);
    expect(matching("src/**/deep/*", PATHS)).toEqual(["src/deep/b.ts", "src/deep/b.tsx"]);
  });

  it("supports ?, [classes], [!negated] and {choices}; regex characters are literal", () => {
    expect(matching("?.ts", PATHS)).toEqual(["a.ts", "src/a.ts", "src/deep/b.ts"]);
    expect(matching("src/?.ts", PATHS)).toEqual(["src/a.ts"]);
    expect(matching("[ab].ts", PATHS)).toEqual(["a.ts", "src/a.ts", "src/deep/b.ts"]);
    expect(matching("[!a].ts", PATHS)).toEqual(["src/deep/b.ts"]);
    expect(matching("[^a].ts", PATHS)).toEqual(["src/deep/b.ts"]);
    expect(matching("[a-c].ts", PATHS)).toEqual(["a.ts", "src/a.ts", "src/deep/b.ts"]);
    expect(matching("*.{ts,tsx}", PATHS).filter((p) => p.includes("deep"))).toEqual(["src/deep/b.ts", "src/deep/b.tsx"]);
    expect(matching("{src/deep/*.tsx,lib/**}", PATHS)).toEqual(["src/deep/b.tsx", "lib/x.js"]);
    expect(matching("*.js", PATHS)).toEqual(["lib/x.js"]);
    expect(matching("src.ts", PATHS)).toEqual(["src.ts"]);
    expect(matching("a\\?.md", PATHS)).toEqual(["docs/a?.md"]);
    expect(matching(".env", PATHS)).toEqual([".env"]);
    expect(matching("[]x]*", ["]a", "xb", "ab"])).toEqual(["]a", "xb"]); // a `]` first in a class is literal
    expect(matching("[a-]", ["a", "-", "b"])).toEqual(["a", "-"]);
  });

  it("follows ripgrep where the old RegExp translation did not: ** that is not a whole component is *, classes never match /", () => {
    expect(matching("src/**.ts", PATHS)).toEqual(["src/a.ts", "src/c.test.ts"]); // the RegExp also took src/deep/b.ts
    expect(matching("x**b.txt", ["x/ab.txt", "xab.txt"])).toEqual(["xab.txt"]);
    expect(matching("a[!x]b", ["a/b", "acb"])).toEqual(["acb"]);
    expect(matching("{**/b.ts,x}", PATHS)).toEqual(["src/deep/b.ts"]);
  });

  it("drops an empty choice as rg does, unless every choice is empty", () => {
    const names = ["a", "ab", "b", "ba"];
    expect(matching("a{,b}", names)).toEqual(["ab"]);
    expect(matching("a{b,}", names)).toEqual(["ab"]);
    expect(matching("{,b}a", names)).toEqual(["ba"]);
    expect(matching("{a,,b}", names)).toEqual(["a", "b"]);
    expect(matching("{,}a", names)).toEqual(["a"]);
    expect(matching("a{}", names)).toEqual(["a"]);
  });

  it("refuses what rg refuses, with rg's words", () => {
    const problem = (glob: string) => {
      try {
        globMatcher(glob);
      } catch (e) {
        expect(e).toBeInstanceOf(GlobSyntaxError);
        return (e as Error).message;
      }
      return "accepted";
    };
    expect(problem("[z-a]")).toBe("error parsing glob '[z-a]': invalid range; 'z' > 'a'");
    expect(problem("[oops")).toMatch(/unclosed character class; missing '\]'/);
    expect(problem("{a,b")).toMatch(/unclosed alternate group; missing '}'/);
    expect(problem("a}")).toMatch(/unopened alternate group; missing '{'/);
    expect(problem("a\\")).toMatch(/dangling '\\'/);
    expect(problem("{a,{b,c}}")).toBe("accepted"); // rg nests them
  });

  it("matches in time linear in the path: the glob that froze the daemon answers, right", () => {
    const glob = "**a**a**a**a**a**a**a**a**a**a**a**a**b";
    const match = globMatcher(glob);
    expect(match("a".repeat(40))).toBe(false);
    expect(match("a".repeat(40) + "b")).toBe(true);
    expect(match(`x/${"a".repeat(5000)}`)).toBe(false);
    const anchored = globMatcher(`d/${"*a".repeat(30)}*b`);
    expect(anchored(`d/${"a".repeat(4000)}`)).toBe(false);
    expect(anchored(`d/${"a".repeat(30)}b`)).toBe(true);
  });

  it("keeps answering right when a pattern needs more DFA states than it caches", () => {
    // `*a` and 14 `?`: a DFA state per pattern of the last 15 characters, 2^15 of them on a random run of a and b
    let x = 7;
    const random = (n: number) => Array.from({ length: n }, () => (((x = (x * 1103515245 + 12345) & 0x7fffffff) >> 16) & 1 ? "a" : "b")).join("");
    const glob = `*a${"?".repeat(14)}`;
    const match = globMatcher(glob);
    const old = legacyGlobRegExp(glob); // no backtracking blow-up in this one
    const names = Array.from({ length: 400 }, (_, i) => random(30 + (i % 50)));
    expect(names.filter(match)).toEqual(names.filter((p) => old.test(p))); // through the DFA's restarts, then the plain NFA
    expect(match(`${random(3000)}a${"b".repeat(14)}`)).toBe(true);
    expect(match(`${random(3000)}${"b".repeat(15)}`)).toBe(false);
  });

  it("agrees with the old RegExp translation on ordinary globs, over thousands of generated paths", () => {
    const paths = [...generatePaths(4000, 3), ...PATHS, "src/a/b/c/d.test.ts", "test/fixtures/x.json", "a.min.js", "pkg/dist/a.min.js"];
    const ordinary = [
      "*.ts",
      "*.test.ts",
      "*.spec.ts",
      "*.{ts,tsx}",
      "*.min.js",
      "src/*.ts",
      "src/**/*.ts",
      "src/**",
      "**/*.md",
      "**/test/**",
      "test/**/fixtures/*",
      "{src,libs}/**/*.js",
      "[a-c]*.ts",
      "[!a-m]*.go",
      "?????.py",
      "apps/*/*",
      "/packages/*/index.ts",
      "*config*",
      "**/api/**/*.ts",
      "docs/*.md",
      "*.json",
      "*[Ss]ervice*",
      "vendor/**/*.{css,md}",
    ];
    for (const glob of ordinary) {
      const old = legacyGlobRegExp(glob);
      expect(paths.filter(globMatcher(glob)), glob).toEqual(paths.filter((p) => old.test(p)));
    }
  });
});

/** find_file's glob before the matcher above (a RegExp, which backtracks): the reference for ordinary globs. */
function legacyGlobRegExp(glob: string): RegExp {
  const anchored = glob.includes("/");
  const source = legacyTranslate(glob.startsWith("/") ? glob.slice(1) : glob);
  return new RegExp(anchored ? `^${source}$` : `(?:^|/)${source}$`);
}

function legacyTranslate(glob: string): string {
  const escapeRegex = (c: string) => (/[.+*?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c);
  let out = "";
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const slashAfter = glob[i + 2] === "/";
        const atSegmentStart = i === 0 || glob[i - 1] === "/";
        if (atSegmentStart && slashAfter) {
          out += "(?:[^/]*/)*";
          i += 2;
        } else {
          out += ".*";
          i += 1;
        }
      } else out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close < 0) out += "\\[";
      else {
        let body = glob.slice(i + 1, close).replace(/\\/g, "\\\\");
        if (body.startsWith("!")) body = `^${body.slice(1)}`;
        out += `[${body}]`;
        i = close;
      }
    } else if (c === "{") {
      braces++;
      out += "(?:";
    } else if (c === "}" && braces > 0) {
      braces--;
      out += ")";
    } else if (c === "," && braces > 0) out += "|";
    else if (c === "\\" && i + 1 < glob.length) out += escapeRegex(glob[++i]);
    else out += escapeRegex(c);
  }
  return out + ")".repeat(braces);
}

describe("pathFilter: a glob as rg's -g reads it", () => {
  const TREE = ["abc/x.txt", "abc/abd.txt", "d/abc.txt", "d/e/f.ts", ".hid", "x.ts", "#c", "a ", "!a"];
  const kept = (glob: string) => TREE.filter(pathFilter(glob));

  it("negates with a leading !, leaving out every file under a folder it matches", () => {
    expect(kept("!a*")).toEqual(["d/e/f.ts", ".hid", "x.ts", "#c", "!a"]); // abc/x.txt goes with abc/
    expect(kept("!*.ts")).toEqual(["abc/x.txt", "abc/abd.txt", "d/abc.txt", ".hid", "#c", "a ", "!a"]);
    expect(kept("!d/**")).toEqual(["abc/x.txt", "abc/abd.txt", ".hid", "x.ts", "#c", "a ", "!a"]);
    expect(kept("!abc/")).toEqual(["d/abc.txt", "d/e/f.ts", ".hid", "x.ts", "#c", "a ", "!a"]); // folders only
    expect(kept("!")).toEqual([]);
    expect(kept("!!a")).toEqual(TREE.filter((p) => p !== "!a"));
    expect(kept("\\!a")).toEqual(["!a"]);
    expect(kept("!/")).toEqual(TREE); // rg: an anchor with nothing after it matches nothing
    expect(kept("!\\/")).toEqual(TREE.filter((p) => !p.includes("/"))); // an escaped trailing `/`: every folder
  });

  it("trims trailing whitespace unless escaped, and takes a blank glob or a comment for none", () => {
    expect(kept("x.ts  ")).toEqual(["x.ts"]);
    expect(kept("a\\ ")).toEqual(["a "]);
    expect(kept(" ")).toEqual(TREE);
    expect(kept("#c")).toEqual(TREE);
    expect(kept("\\#c")).toEqual(["#c"]);
    expect(kept("!#c")).toEqual(TREE.filter((p) => p !== "#c"));
  });
});
