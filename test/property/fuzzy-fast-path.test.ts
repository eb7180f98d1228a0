/**
 * find_file's matcher against the plain one it replaced (fuzzy-plain.ts: every path's strings tested, no folder masks,
 * no name buffer): the same hits, scores, totals and typo notes on seeded random trees and queries, with adds,
 * removes, narrowing queries and a folder filter between them. Names mix case, separators, digits and characters past
 * Latin-1 (those take the string path; a Σ lower-cases by what follows it, so a folder's matching form might not start
 * with its parent's, which the folder facts worked out from the parent's must not assume), and queries are cut from the
 * paths, so every tier is reached. Folders nest up to four deep, so facts are chained through parents.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FuzzyIndex } from "../../src/search/fuzzy.js";
import { PlainFuzzyIndex } from "./fuzzy-plain.js";
import { check } from "./runs.js";

const LATIN_WORDS = ["src", "user", "Service", "auth", "login", "cfg", "Config", "a_b", "a-b", "x", "main", "test", "v2"];
const WIDER_WORDS = ["名前", "é", "Ωmega", "ΟΔΟΣ", "aΣ."];
const word = fc.constantFrom(...LATIN_WORDS, ...WIDER_WORDS);
const segment = fc.array(word, { minLength: 1, maxLength: 3 }).map((w) => w.join(""));
const nameArb = fc.tuple(segment, fc.constantFrom("", ".ts", ".test.ts", ".md", "_x.json", " y.go")).map(([s, e]) => s + e);
const pathArb = fc.tuple(fc.array(segment, { maxLength: 4 }), nameArb).map(([dirs, name]) => [...dirs, name].join("/"));

/** A query cut from a path: a piece of it, a subsequence of it, or either with one letter swapped, dropped or changed. */
function queryFrom(path: string, r: number[]): string {
  const lower = r[0] % 2 ? path : path.toLowerCase();
  const from = r[1] % lower.length;
  const to = Math.min(lower.length, from + 1 + (r[2] % 12));
  let q = lower.slice(from, to);
  if (r[3] % 3 === 0) q = [...q].filter((_, k) => (r[4] >> k) & 1 || k === 0).join(""); // a subsequence
  if (r[5] % 4 === 0 && q.length > 2) {
    const k = r[6] % (q.length - 1);
    q = r[7] % 2 ? q.slice(0, k) + q[k + 1] + q[k] + q.slice(k + 2) : q.slice(0, k) + q.slice(k + 1); // a swap, a drop
  }
  if (r[8] % 5 === 0) q = `${q} ${lower.slice(0, 3)}`; // two terms
  return q.trim() || "x";
}
const cut = fc.array(fc.nat(), { minLength: 9, maxLength: 9 });
const op = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), path: pathArb }),
  fc.record({ kind: fc.constant("remove" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("search" as const), at: fc.nat(), cut, limit: fc.integer({ min: 1, max: 25 }) }),
  fc.record({ kind: fc.constant("narrow" as const), at: fc.nat(), cut }),
);

/**
 * Paths in three folders only, so a folder holds dozens of files: its letter bits (32 files a word) span words, and a
 * remove in the middle moves the bits of the files after it.
 */
const crowdedPathArb = fc.tuple(fc.constantFrom("", "src", "src/user"), nameArb).map(([dir, name]) => (dir ? `${dir}/${name}` : name));
const crowdedOp = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), path: crowdedPathArb }),
  fc.record({ kind: fc.constant("remove" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("search" as const), at: fc.nat(), cut, limit: fc.integer({ min: 1, max: 25 }) }),
  fc.record({ kind: fc.constant("narrow" as const), at: fc.nat(), cut }),
);

/**
 * Names that tie on the substring tiers' bounds (a first letter and a length: an exact name, its stem, a start) in
 * crowded folders, a few past 255 characters (whose lengths the index does not keep), and queries that are often a
 * whole name or stem: the bound-first scoring must pick what scoring every candidate would.
 */
const LONG = "n".repeat(250);
const boundName = fc
  .tuple(fc.constantFrom("c", "cf", "cfg", "Cfg", "cfgx", "xcfg", "c_fg", "a", `cfg${LONG}`, `x${LONG}cfg`), fc.constantFrom("", ".ts", ".md", ".d.ts"))
  .map(([s, e]) => s + e);
const boundPathArb = fc.tuple(fc.constantFrom("", "src", "src/cfg", "cfg/a"), boundName).map(([dir, name]) => (dir ? `${dir}/${name}` : name));
const boundOp = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), path: boundPathArb }),
  fc.record({ kind: fc.constant("remove" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("search" as const), at: fc.nat(), cut, limit: fc.integer({ min: 1, max: 25 }) }),
  fc.record({ kind: fc.constant("exact" as const), at: fc.nat(), stem: fc.boolean(), limit: fc.integer({ min: 1, max: 8 }) }),
);

type Op = (typeof op extends fc.Arbitrary<infer T> ? T : never) | { kind: "exact"; at: number; stem: boolean; limit: number }; // crowdedOp's are the same kinds

/** Runs `ops` on an index of `initial` and on the plain matcher, comparing every query's answer. */
function sameAsPlain(initial: string[], ops: Op[]): void {
  const index = new FuzzyIndex(initial);
  const paths = new Set(initial);
  const plain = () => new PlainFuzzyIndex([...paths]);
  const some = (at: number) => [...paths][at % Math.max(1, paths.size)] ?? "src/x.ts";
  for (const o of ops) {
    if (o.kind === "add") {
      index.add(o.path);
      paths.add(o.path);
    } else if (o.kind === "remove") {
      const gone = some(o.at);
      expect(index.remove(gone)).toBe(paths.delete(gone));
    } else if (o.kind === "search") {
      const q = queryFrom(some(o.at), o.cut);
      expect(index.search(q, o.limit), q).toEqual(plain().search(q, o.limit));
    } else if (o.kind === "exact") {
      // a whole name, or its stem: the bounds' top classes
      const name = some(o.at).slice(some(o.at).lastIndexOf("/") + 1);
      const q = o.stem && name.lastIndexOf(".") > 0 ? name.slice(0, name.lastIndexOf(".")) : name;
      expect(index.search(q, o.limit), q).toEqual(plain().search(q, o.limit));
    } else {
      // typing on: each prefix of the query in turn, in the scope of a folder filter and without one
      const q = queryFrom(some(o.at), o.cut);
      const under = (p: string) => p.startsWith("src");
      const reference = plain();
      for (let end = 1; end <= q.length; end++) {
        expect(index.search(q.slice(0, end), 10), q.slice(0, end)).toEqual(reference.search(q.slice(0, end), 10));
        expect(index.search(q.slice(0, end), 10, under, "src")).toEqual(reference.search(q.slice(0, end), 10, under));
      }
    }
  }
}

describe("FuzzyIndex against the plain matcher it replaced", () => {
  it("ranks every query exactly as the plain matcher does, in crowded folders (letter bits over several words), through removes in the middle", async () => {
    await check(
      fc.property(fc.uniqueArray(crowdedPathArb, { minLength: 40, maxLength: 200, size: "max" }), fc.array(crowdedOp, { maxLength: 30 }), sameAsPlain),
      60,
    );
  });

  it("ranks every query exactly as the plain matcher does where many names tie on the substring bounds, some past 255 characters", async () => {
    await check(fc.property(fc.uniqueArray(boundPathArb, { minLength: 10, maxLength: 40 }), fc.array(boundOp, { maxLength: 30 }), sameAsPlain), 150);
  });

  it("ranks every query exactly as the plain matcher does, through adds, removes and narrowing queries", async () => {
    await check(fc.property(fc.uniqueArray(pathArb, { minLength: 1, maxLength: 120 }), fc.array(op, { maxLength: 40 }), sameAsPlain), 150);
  });
});
