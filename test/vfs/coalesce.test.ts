import { describe, expect, it } from "vitest";
import { type RawChange, coalesce } from "../../src/vfs/coalesce.js";

const ev = (path: string, kind: RawChange["kind"]): RawChange => ({ path, kind });

describe("coalesce", () => {
  it("keeps one change per path, in order of first appearance", () => {
    expect(coalesce([ev("b", "update"), ev("a", "create"), ev("b", "update")])).toEqual([
      { path: "b", kind: "modified" },
      { path: "a", kind: "created" },
    ]);
  });

  it("create then delete cancels out", () => {
    expect(coalesce([ev("a", "create"), ev("a", "update"), ev("a", "delete")])).toEqual([]);
  });

  it("delete then create is a modification", () => {
    expect(coalesce([ev("a", "delete"), ev("a", "create")])).toEqual([{ path: "a", kind: "modified" }]);
  });

  it("a modification after a creation stays a creation", () => {
    expect(coalesce([ev("a", "create"), ev("a", "update")])).toEqual([{ path: "a", kind: "created" }]);
  });

  it("a modification then a deletion is a deletion", () => {
    expect(coalesce([ev("a", "update"), ev("a", "delete")])).toEqual([{ path: "a", kind: "deleted" }]);
  });

  it("created, deleted and created again within the window is a creation", () => {
    expect(coalesce([ev("a", "create"), ev("a", "delete"), ev("a", "create")])).toEqual([{ path: "a", kind: "created" }]);
  });

  it("deleted, created and deleted again is a deletion", () => {
    expect(coalesce([ev("a", "delete"), ev("a", "create"), ev("a", "delete")])).toEqual([{ path: "a", kind: "deleted" }]);
  });

  it("an empty window is no change", () => {
    expect(coalesce([])).toEqual([]);
  });
});
