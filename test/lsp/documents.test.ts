import { describe, expect, it } from "vitest";
import { DocumentStore } from "../../src/lsp/documents.js";

describe("DocumentStore", () => {
  it("opens once, then changes only when the content differs, with versions that always grow", () => {
    const store = new DocumentStore(4);
    const [open] = store.open("a.ts", "typescript", "a\n", "h1");
    expect(open).toMatchObject({ kind: "open", doc: { version: 1, lines: ["a"] } });
    expect(store.open("a.ts", "typescript", "a\n", "h1")).toEqual([]);
    const [change] = store.open("a.ts", "typescript", "b\n", "h2");
    expect(change).toMatchObject({ kind: "change", doc: { version: 2, hash: "h2" } });
    expect(store.update("a.ts", "b\n", "h2")).toEqual([]);
    expect(store.update("a.ts", "c\n", "h3")).toMatchObject([{ kind: "change", doc: { version: 3 } }]);
  });

  it("ignores bus changes of files that are not open, and closes a deleted one", () => {
    const store = new DocumentStore(4);
    expect(store.update("x.ts", "x", "h")).toEqual([]);
    store.open("a.ts", "typescript", "a", "h1");
    expect(store.update("a.ts", null, null)).toEqual([{ kind: "close", path: "a.ts" }]);
    expect(store.paths()).toEqual([]);
    // Reopened after the delete: a new version, never the old one again.
    expect(store.open("a.ts", "typescript", "a", "h1")).toMatchObject([{ kind: "open", doc: { version: 2 } }]);
  });

  it("closes the least recently used document above the limit", () => {
    const store = new DocumentStore(2);
    store.open("a.ts", "typescript", "a", "ha");
    store.open("b.ts", "typescript", "b", "hb");
    store.open("a.ts", "typescript", "a", "ha"); // a is now the most recent
    const actions = store.open("c.ts", "typescript", "c", "hc");
    expect(actions.map((a) => a.kind)).toEqual(["close", "open"]);
    expect(actions[0]).toEqual({ kind: "close", path: "b.ts" });
    expect(store.paths()).toEqual(["a.ts", "c.ts"]);
  });

  it("opens beyond the limit when told not to evict, then trims the least recently used", () => {
    const store = new DocumentStore(2);
    store.open("a.ts", "typescript", "a", "ha");
    store.open("b.ts", "typescript", "b", "hb");
    expect(store.open("c.ts", "typescript", "c", "hc", false).map((a) => a.kind)).toEqual(["open"]);
    expect(store.paths()).toEqual(["a.ts", "b.ts", "c.ts"]);
    expect(store.trim()).toEqual([{ kind: "close", path: "a.ts" }]);
    expect(store.trim()).toEqual([]);
  });
});
