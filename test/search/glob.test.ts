import { describe, expect, it } from "vitest";
import { globMatcher } from "../../src/search/glob.js";

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
  });

  it("supports ?, [classes], [!negated] and {choices}; regex characters are literal", () => {
    expect(matching("?.ts", PATHS)).toEqual(["a.ts", "src/a.ts", "src/deep/b.ts"]);
    expect(matching("src/?.ts", PATHS)).toEqual(["src/a.ts"]);
    expect(matching("[ab].ts", PATHS)).toEqual(["a.ts", "src/a.ts", "src/deep/b.ts"]);
    expect(matching("[!a].ts", PATHS)).toEqual(["src/deep/b.ts"]);
    expect(matching("*.{ts,tsx}", PATHS).filter((p) => p.includes("deep"))).toEqual(["src/deep/b.ts", "src/deep/b.tsx"]);
    expect(matching("*.js", PATHS)).toEqual(["lib/x.js"]);
    expect(matching("src.ts", PATHS)).toEqual(["src.ts"]);
    expect(matching("a\\?.md", PATHS)).toEqual(["docs/a?.md"]);
    expect(matching(".env", PATHS)).toEqual([".env"]);
  });
});
