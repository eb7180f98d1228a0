import { describe, expect, it } from "vitest";
import { FileIndex } from "../../src/vfs/file-index.js";

describe("FileIndex", () => {
  it("knows its folders at any depth, and forgets one when its last file goes", () => {
    const index = new FileIndex();
    for (const p of ["a/b/c/x.txt", "a/b/y.txt", "a/z.txt", "top.txt"]) index.set(p, {});
    expect(["a", "a/b", "a/b/c", ""].every((d) => index.hasFolder(d))).toBe(true);
    expect(index.hasFolder("a/b/c/x.txt") || index.hasFolder("b") || index.hasFolder("a/b/c/d")).toBe(false);
    expect(index.under("a/b").sort()).toEqual(["a/b/c/x.txt", "a/b/y.txt"]);
    expect(index.under("").sort()).toEqual(["a/b/c/x.txt", "a/b/y.txt", "a/z.txt", "top.txt"]);
    index.delete("a/b/c/x.txt");
    expect(index.hasFolder("a/b/c")).toBe(false);
    expect(index.hasFolder("a/b")).toBe(true);
    expect(index.under("a")).not.toContain("a/b/c/x.txt");
    index.delete("a/b/y.txt");
    index.delete("a/z.txt");
    expect(index.hasFolder("a")).toBe(false);
    expect(index.under("a")).toEqual([]);
  });

  it("says what was added and removed since a generation, in order, until it has forgotten", () => {
    const index = new FileIndex();
    index.set("a.txt", {});
    const g = index.generation;
    index.set("b.txt", {});
    index.set("a.txt", { size: 1 }); // known already: no change to the set of paths
    index.delete("a.txt");
    index.set("a.txt", {});
    expect(index.changesSince(g)).toEqual([
      { path: "b.txt", added: true },
      { path: "a.txt", added: false },
      { path: "a.txt", added: true },
    ]);
    expect(index.changesSince(index.generation)).toEqual([]);
    for (let i = 0; i < 60_000; i++) index.set(`f${i}`, {});
    expect(index.changesSince(g)).toBeUndefined(); // too far back: derive afresh
    expect(index.changesSince(index.generation - 2)).toEqual([
      { path: "f59998", added: true },
      { path: "f59999", added: true },
    ]);
  });
});
