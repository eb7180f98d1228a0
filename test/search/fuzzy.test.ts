import { describe, expect, it } from "vitest";
import { FuzzyIndex } from "../../src/search/fuzzy.js";

const rank = (paths: string[], query: string, limit = 10) => new FuzzyIndex(paths).search(query, limit).hits.map((h) => h.path);

/** Filler that shares letters with the queries, so ranking is tested against real competition. */
const NOISE = [
  "src/user/services/config.ts",
  "src/utils/string-helpers.ts",
  "src/server/router.ts",
  "packages/users/src/serviceVector.ts",
  "test/user/UserService.test.ts",
  "docs/services.md",
  "src/api/user-settings-view.tsx",
];

describe("FuzzyIndex ranking", () => {
  it("finds an abbreviation: usrsvc -> src/user/UserService.ts, above matches scattered across folders", () => {
    const paths = [...NOISE, "src/user/UserService.ts"];
    const hits = rank(paths, "usrsvc");
    expect(hits[0]).toBe("src/user/UserService.ts");
    expect(hits.indexOf("src/user/services/config.ts")).toBeGreaterThan(hits.indexOf("test/user/UserService.test.ts"));
  });

  it("puts a file whose name contains the query first, even when deep, above path-only matches", () => {
    const paths = ["config/app/main.ts", "config/settings.ts", "a/b/c/d/e/my-config.ts", "src/conf/ig.ts"];
    const hits = rank(paths, "config");
    expect(hits[0]).toBe("a/b/c/d/e/my-config.ts");
    expect(hits.slice(1, 3).sort()).toEqual(["config/app/main.ts", "config/settings.ts"]);
    expect(hits[3]).toBe("src/conf/ig.ts");
  });

  it("ranks an exact name, then the name without extension, then a name prefix, then a word start, then inside a word", () => {
    const paths = ["z/reconfig.ts", "z/AppConfig.ts", "z/config-loader.ts", "z/config.ts", "z/config"];
    expect(rank(paths, "config")).toEqual(["z/config", "z/config.ts", "z/config-loader.ts", "z/AppConfig.ts", "z/reconfig.ts"]);
  });

  it("matches case-insensitively and prefers shallow paths on ties", () => {
    expect(rank(["a/b/c/Readme.md", "README.md", "docs/readme.md"], "readme")).toEqual(["README.md", "docs/readme.md", "a/b/c/Readme.md"]);
  });

  it("takes path fragments: a slash in the query matches across folders, above abbreviations of the name", () => {
    const paths = [...NOISE, "src/user/UserService.ts", "src/userland/usrvice.ts"];
    expect(rank(paths, "user/UserSer")[0]).toBe("src/user/UserService.ts");
    expect(rank(paths, "src/user/")[0]).toBe("src/user/UserService.ts");
    expect(rank(paths, "api/user")).toEqual(["src/api/user-settings-view.tsx"]);
  });

  it("requires every space-separated term", () => {
    const paths = ["src/user/UserService.ts", "src/user/UserModel.ts", "src/order/OrderService.ts"];
    expect(rank(paths, "user service")).toEqual(["src/user/UserService.ts"]);
  });

  it("returns nothing for a query no path contains as a subsequence, and counts every match in total", () => {
    const index = new FuzzyIndex(NOISE);
    expect(index.search("qqq", 10)).toEqual({ hits: [], total: 0, approximate: [] });
    expect(index.search("   ", 10)).toEqual({ hits: [], total: 0, approximate: [] });
    const some = index.search("s", 2);
    expect(some.hits).toHaveLength(2);
    expect(some.total).toBe(NOISE.length);
  });

  it("honours the limit across tiers and an accept filter", () => {
    const paths = Array.from({ length: 50 }, (_, i) => `dir${i % 5}/file${i}.ts`);
    const index = new FuzzyIndex(paths);
    expect(index.search("file", 7).hits).toHaveLength(7);
    const only = index.search("file", 100, (p) => p.startsWith("dir3/"));
    expect(only.total).toBe(10);
    expect(only.hits.every((h) => h.path.startsWith("dir3/"))).toBe(true);
  });

  it("scores lower tiers only when the upper ones leave room, and gives the same answer from a warm cache", () => {
    const paths = [...NOISE, "src/user/UserService.ts"];
    const index = new FuzzyIndex(paths);
    const cold = index.search("usrsvc", 5).hits;
    expect(index.search("usrsvc", 5).hits).toEqual(cold);
  });

  it("told of adds and removes, ranks exactly as a fresh index of the same paths", () => {
    const first = Array.from({ length: 300 }, (_, i) => `src/m${i % 7}/Module${i}.ts`);
    const index = new FuzzyIndex(first);
    const next = [...first.slice(0, 10), ...first.slice(11, 40), ...first.slice(140), "src/new/Fresh.ts", first[10]];
    for (const p of first) if (!next.includes(p)) index.remove(p);
    index.add("src/new/Fresh.ts");
    const fresh = new FuzzyIndex(next);
    for (const q of ["module1", "mdl", "fresh", "m3/", "src"]) expect(index.search(q, 50)).toEqual(fresh.search(q, 50));
    expect(index.size).toBe(next.length);
  });

  it("a small limit gives the first hits of a large one, ties included", () => {
    const paths = Array.from(
      { length: 2000 },
      (_, i) => `${["src", "lib", "a/b"][i % 3]}/${["cart", "Cart", "my-cart", "carts", "xcartx"][i % 5]}${i % 11}.ts`,
    );
    const index = new FuzzyIndex(paths);
    const all = index.search("cart", 2000).hits;
    for (const k of [1, 7, 20, 333]) expect(index.search("cart", k).hits).toEqual(all.slice(0, k));
    expect(index.search("crt", 15).hits).toEqual(index.search("crt", 2000).hits.slice(0, 15));
  });

  it("treats _ - . and spaces in names alike", () => {
    const paths = ["src/tools/file-write.ts", "src/tools/file_read.ts", "docs/user guide.md", "lib/index.ts"];
    expect(rank(paths, "file_write")[0]).toBe("src/tools/file-write.ts");
    expect(rank(paths, "file-read")[0]).toBe("src/tools/file_read.ts");
    expect(rank(paths, "user_guide")).toEqual(["docs/user guide.md"]);
    expect(rank(paths, "index.ts")[0]).toBe("lib/index.ts");
  });

  it("falls back to names one letter off when exact matches are few, ranked below them, and says which", () => {
    const paths = [...NOISE, "src/tools/file-write.ts", "src/dispatch/dispatcher.ts", "src/dispatch/dispatch-queue.ts", "a/fiel-writer-old.ts"];
    const index = new FuzzyIndex(paths);
    const typo = index.search("dispatcehr", 10);
    expect(typo.hits[0].path).toBe("src/dispatch/dispatcher.ts");
    expect(typo.approximate).toContain("src/dispatch/dispatcher.ts");
    // an exact subsequence (fiel-writer-old) ranks above the typo of the name (file-write)
    const fiel = index.search("fiel_write", 10);
    expect(fiel.hits.map((h) => h.path).slice(0, 2)).toEqual(["a/fiel-writer-old.ts", "src/tools/file-write.ts"]);
    expect(fiel.approximate).toEqual(["src/tools/file-write.ts"]);
    expect(fiel.total).toBe(2);
  });

  it("puts a typo of the name above a query scattered across folders, which a large tree nearly always has", () => {
    const paths = ["test/user/test/dto/price/serviceStream.md", "src/user/UserService.ts"];
    const r = new FuzzyIndex(paths).search("UserSrevice", 10);
    expect(r.hits.map((h) => h.path)).toEqual(["src/user/UserService.ts", "test/user/test/dto/price/serviceStream.md"]);
    expect(r.approximate).toEqual(["src/user/UserService.ts"]);
    expect(r.total).toBe(2); // each path once, though both tiers found UserService.ts
  });

  it("allows one typo per query and none in short terms, where it would match nearly anything", () => {
    const paths = ["src/framing.test.ts", "src/tools/file-write.ts"];
    expect(new FuzzyIndex(paths).search("fiel wirte", 10).hits).toEqual([]); // a typo in each term
    expect(new FuzzyIndex(paths).search("flie wirte", 10).hits.map((h) => h.path)).toEqual(["src/tools/file-write.ts"]); // flie is a subsequence
    expect(new FuzzyIndex(["src/abcd.ts"]).search("abdc", 10).hits).toEqual([]); // 4 letters: exact only
    expect(new FuzzyIndex(["src/abcde.ts"]).search("abdce", 10).hits.map((h) => h.path)).toEqual(["src/abcde.ts"]);
  });

  it("suggests as typos only names near the query, not every name that holds it scattered once a letter is dropped", () => {
    const near = [
      "src/tools/list-dir.ts",
      "src/vfs/pipeline.ts",
      "src/platform/supervisor.ts",
      "src/search/ripgrep.ts",
      "src/workspace.ts",
      "src/dispatch/dispatcher.ts",
    ];
    const far = [
      "test/compile-off-by-default.test.ts",
      "src/tools/git-rollback-lines.ts",
      "src/tools/git-conflict-resolve.ts",
      "src/tools/git-changelist-edit.ts",
      "src/tools/lsp-implementation.ts",
      "src/search/glob.ts",
    ];
    const index = new FuzzyIndex([...far, ...near]);
    expect(index.search("globls", 10)).toMatchObject({ hits: [], approximate: [] }); // 2 to 5 edits from any name
    expect(index.search("listdir", 10).hits.map((h) => h.path)).toEqual(["src/tools/list-dir.ts"]); // an exact abbreviation, no typo
    for (const [typo, path] of [
      ["pipleine", "src/vfs/pipeline.ts"],
      ["suprevisor", "src/platform/supervisor.ts"],
      ["ripgerp", "src/search/ripgrep.ts"],
      ["workspcae", "src/workspace.ts"],
      ["lsit-dir", "src/tools/list-dir.ts"],
    ]) {
      expect(index.search(typo, 10), typo).toMatchObject({ hits: [{ path }], approximate: [path] });
    }
    // a longer word leaves room for a letter left out besides the typo: dspatcehr is 2 edits from dispatcher
    expect(index.search("dspatcehr", 10).approximate).toEqual(["src/dispatch/dispatcher.ts"]);
  });

  it("leaves the typo fallback out once exact matches are plenty", () => {
    const paths = [...Array.from({ length: 10 }, (_, i) => `src/dispatcher${i}.ts`), "src/dispatcehr-typo-target.ts"];
    const r = new FuzzyIndex(paths).search("dispatcher", 20);
    expect(r.approximate).toEqual([]);
    expect(r.hits).toHaveLength(10);
  });
});
