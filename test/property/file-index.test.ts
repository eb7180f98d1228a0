/**
 * FileIndex against a plain Map (paths in the order they were added, entries as set) on seeded random adds, updates
 * and removes: the same paths in the same order, the same entries, folders, children, paths under a folder and
 * journal. The index shares one frozen entry among the files nothing is known of yet; this holds that it reads the
 * same as each file's own `{}` did.
 */
import { describe, expect, it } from "vitest";
import { FileIndex, type IndexEntry, parentOf } from "../../src/vfs/file-index.js";

/** mulberry32: a small seeded generator, so that a failure replays. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FOLDERS = ["", "a", "a/b", "a/b/c", "a/bb", "b", "b/a", "src/vfs", "src/vfs/deep/er"];
const NAMES = ["x.txt", "y.ts", "a", "b", "index.ts", "README.md"];

function entryOf(r: () => number): IndexEntry {
  const pick = Math.floor(r() * 4);
  if (pick === 0) return {};
  if (pick === 1) return { size: Math.floor(r() * 100), mtimeMs: Math.floor(r() * 1e6) };
  if (pick === 2) return { size: 3, mtimeMs: 5, hash: r() < 0.5 ? null : "0123456789abcdef" };
  return { hash: undefined };
}

/** Every folder holding a file of `paths` at any depth, "" included when there is a file. */
function foldersOf(paths: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const p of paths)
    for (let d = parentOf(p); ; d = parentOf(d)) {
      out.add(d);
      if (d === "") break;
    }
  return out;
}

describe("FileIndex against a plain Map", () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}: 3,000 random adds, updates and removes`, () => {
      const r = random(seed);
      const index = new FileIndex();
      const oracle = new Map<string, IndexEntry>();
      const journal: { path: string; added: boolean }[] = [];
      const start = index.generation;
      for (let step = 0; step < 3_000; step++) {
        const folder = FOLDERS[Math.floor(r() * FOLDERS.length)];
        const rel = folder ? `${folder}/${NAMES[Math.floor(r() * NAMES.length)]}` : NAMES[Math.floor(r() * NAMES.length)];
        if (r() < 0.35) {
          const had = oracle.delete(rel);
          if (had) journal.push({ path: rel, added: false });
          expect(index.delete(rel)).toBe(had);
        } else {
          const entry = entryOf(r);
          if (!oracle.has(rel)) journal.push({ path: rel, added: true });
          oracle.set(rel, entry);
          index.set(rel, entry);
        }
        if (step % 50 !== 0) continue;
        expect(index.paths()).toEqual([...oracle.keys()]);
        expect(index.size).toBe(oracle.size);
        for (const [p, e] of oracle) expect(index.get(p)).toEqual(e);
        const folders = foldersOf(oracle.keys());
        for (const d of [...FOLDERS, "a/b/c/d", "src", "src/vfs/deep"]) {
          expect(index.hasFolder(d), d).toBe(folders.has(d));
          expect(new Set(index.children(d)), d).toEqual(new Set([...oracle.keys()].filter((p) => parentOf(p) === d)));
          expect(new Set(index.under(d)), d).toEqual(new Set([...oracle.keys()].filter((p) => d === "" || p.startsWith(`${d}/`))));
        }
        expect(index.folderCount()).toBe(new Set([...oracle.keys()].map(parentOf)).size);
      }
      expect(index.changesSince(start)).toEqual(journal);
      for (const name of NAMES) expect(index.has(name)).toBe(oracle.has(name));
    });
  }

  it("a file nothing is known of reads as an empty entry, and an entry set later replaces it", () => {
    const index = new FileIndex();
    index.set("a/x.txt", {});
    index.set("a/y.txt", {});
    expect(index.get("a/x.txt")).toEqual({});
    index.set("a/x.txt", { size: 1, mtimeMs: 2, hash: "00000000000000ff" });
    expect(index.get("a/x.txt")).toEqual({ size: 1, mtimeMs: 2, hash: "00000000000000ff" });
    expect(index.get("a/y.txt")).toEqual({}); // the other unknown file is untouched by the first one's update
    index.set("a/x.txt", { hash: null });
    expect(index.get("a/x.txt")).toEqual({ hash: null }); // null (too large to hash) is known, not unknown
  });
});
