import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";
import { DEFAULT_IGNORES, IgnoreRules } from "../../src/vfs/ignore-rules.js";
import { listGit, ruleChanges } from "../../src/vfs/listing.js";
import { tmpWorkspace } from "../helpers/tmp.js";

describe("IgnoreRules", () => {
  it("applies folder rules only to folders and ignores everything under an ignored folder", () => {
    const r = new IgnoreRules();
    r.addFile("", "build/\n*.log\n");
    expect(r.ignores("build", true)).toBe(true);
    expect(r.ignores("build", false)).toBe(false);
    expect(r.ignores("build/a/b.txt", false)).toBe(true);
    expect(r.ignores("src/x.log", false)).toBe(true);
    expect(r.ignores("src/x.txt", false)).toBe(false);
  });

  it("lets the deepest .gitignore decide, negations included", () => {
    const r = new IgnoreRules();
    r.addFile("", "*.gen.ts\n");
    r.addFile("pkg", "!keep.gen.ts\nlocal/\n");
    expect(r.ignores("a.gen.ts", false)).toBe(true);
    expect(r.ignores("pkg/keep.gen.ts", false)).toBe(false);
    expect(r.ignores("pkg/other.gen.ts", false)).toBe(true);
    expect(r.ignores("pkg/local/x", false)).toBe(true);
    expect(r.ignores("local/x", false)).toBe(false);
  });

  it("judges the files of a folder a deeper .gitignore re-includes by their own names, as git check-ignore does", () => {
    // git -c core.excludesFile=<the root rules> check-ignore --no-index gives the same for each of these
    const r = new IgnoreRules(["node_modules/", "dist/", "*.log"]);
    r.addFile("run0", "!dist\n");
    expect(r.ignores("run0/dist", true)).toBe(false);
    expect(r.ignores("run0/dist/plain.txt", false)).toBe(false);
    expect(r.ignores("run0/dist/x.log", false)).toBe(true);
    expect(r.ignores("run0/dist/node_modules", true)).toBe(true);
    expect(r.ignores("run0/dist/node_modules", false)).toBe(false); // a file of that name: node_modules/ names folders
    expect(r.ignores("run0/dist/node_modules/x.js", false)).toBe(true);
    expect(r.ignores("dist/plain.txt", false)).toBe(true);
  });

  // the cases below were found by test/property/ignore-rules-git.test.ts against git
  it("matches case-sensitively, as git does unless core.ignoreCase is set", () => {
    const r = new IgnoreRules(["a"]);
    r.addFile("", "b/\n");
    expect(r.ignores("A", false)).toBe(false); // seed 1732066448
    expect(r.ignores("B/x", false)).toBe(false);
    expect(r.ignores("b/x", false)).toBe(true);
    const folded = new IgnoreRules(["a"], true);
    expect(folded.ignores("A", false)).toBe(true);
  });

  it("reads every line of the root rules files, not each file as one pattern", () => {
    // seed -884457054: info/exclude "[ab]\na" left "a" unignored (the package took the whole text for one pattern)
    const r = new IgnoreRules(["# global\n*.tmp\n", "[ab]\na\n"]);
    expect(r.ignores("a", false)).toBe(true);
    expect(r.ignores("x/b", false)).toBe(true);
    expect(r.ignores("x.tmp", false)).toBe(true);
    expect(r.ignores("c", false)).toBe(false);
  });

  it("matches patterns as git's wildmatch does (each row as git check-ignore --no-index answers it)", () => {
    const rows: [pattern: string, path: string, ignored: boolean][] = [
      ["/a?b", "a/b", false], // `?` never matches a `/`
      ["a[/]b", "a/b", false], // nor does a class
      ["a/**/b", "a/b", true],
      ["a/**/b", "a/x/y/b", true],
      ["**/y", "x/y", true],
      ["x/**", "x/y/z", true],
      ["x/*", "x/y/z", true], // x/y is ignored, so is what it holds
      ["*.b", "x/a.b", true],
      ["/*.b", "x/a.b", false],
      ["\\!a", "!a", true],
      ["a\\ ", "a ", true], // an escaped trailing space stays
      ["a  ", "a", true], // unescaped ones go
      ["[[:foo:]]", "a", false], // an unknown class matches nothing
      ["[a", "a", false], // nor does an unclosed bracket
      ["[a", "[a", false],
      ["[]a]", "]", true],
      ["[!]a]", "b", true],
      ["a\\", "a", false], // a trailing backslash matches nothing
    ];
    for (const [pattern, rel, ignored] of rows) {
      const r = new IgnoreRules();
      r.addFile("", `${pattern}\n`);
      expect(r.ignores(rel, false), `${pattern} on ${rel}`).toBe(ignored);
    }
  });

  it("never watches .git folders, and has defaults for trees outside git", () => {
    const r = new IgnoreRules(DEFAULT_IGNORES);
    expect(r.ignores(".git", true)).toBe(true);
    expect(r.ignores("sub/.git/config", false)).toBe(true);
    expect(r.ignores("node_modules/x/index.js", false)).toBe(true);
    expect(r.ignores("src/index.js", false)).toBe(false);
  });
});

describe("listGit's rules", () => {
  const reader = (root: string) => (args: string[]) =>
    new Promise<string>((resolve, reject) =>
      execFile("git", args, { cwd: root, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" } }, (err, out) =>
        err ? reject(err) : resolve(out),
      ),
    );

  it("know the untracked .gitignore files that ignore themselves, which git reads but does not list", async () => {
    // seed -1922912924: a root .gitignore that ignores itself; a cache folder as pytest leaves it
    const ws = tmpWorkspace({
      git: true,
      files: {
        ".gitignore": "*.tmp\n.gitignore\n",
        ".pytest_cache/.gitignore": "# Created by pytest automatically.\n*\n",
        ".pytest_cache/v/cache/lastfailed": "{}",
        "a.txt": "",
      },
    });
    try {
      const listing = await listGit(reader(ws.dir), ws.dir, `${ws.dir}/.git`);
      expect(listing.files).toEqual(["a.txt"]);
      expect(listing.rules.ignores("x.tmp", false)).toBe(true);
      expect(listing.rules.ignores(".pytest_cache/v/cache/nodeids", false)).toBe(true);
      expect(listing.rules.ignores("b.txt", false)).toBe(false);
    } finally {
      ws.cleanup();
    }
  });

  it("fold case when the repository says core.ignoreCase", async () => {
    const ws = tmpWorkspace({ git: true, files: { ".gitignore": "build/\n", "src/a.ts": "" } });
    try {
      expect((await listGit(reader(ws.dir), ws.dir, `${ws.dir}/.git`)).rules.ignores("Build/x", false)).toBe(false);
      await reader(ws.dir)(["config", "core.ignoreCase", "true"]);
      expect((await listGit(reader(ws.dir), ws.dir, `${ws.dir}/.git`)).rules.ignores("Build/x", false)).toBe(true);
    } finally {
      ws.cleanup();
    }
  });
});

describe("ruleChanges", () => {
  const rules = (text: string) => {
    const r = new IgnoreRules();
    r.addFile("", text);
    return r;
  };

  it("moves only what the rules explain, leaving changes on disk to their own events", () => {
    const indexed = ["a.txt", "gen/x.txt", "gone.txt", "tracked.log"];
    const listing = { files: ["a.txt", "tracked.log", "was-ignored.log", "new.txt"], rules: rules("gen/\n*.log\n!was-ignored.log\n") };
    const { added, removed } = ruleChanges(indexed, (p) => indexed.includes(p), listing, rules("*.log\n"));
    expect(removed).toEqual(["gen/x.txt"]); // gone.txt is not ignored: being deleted, its event reports it
    expect(added).toEqual(["was-ignored.log"]); // new.txt was not ignored before: being created, its event reports it
  });
});
