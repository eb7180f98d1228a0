/**
 * find_file's matcher told of adds and removes (as the VFS index changes) against one built afresh from the same paths:
 * the same hits, scores, totals and typo notes for every query, with queries in between (a query that narrows the last
 * one reuses its candidates, which adds and removes must keep right).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FuzzyIndex } from "../../src/search/fuzzy.js";
import { check } from "./runs.js";

/** Few distinct segments, so paths share folders and names, and queries hit many of them. */
const segment = fc.constantFrom(
  "src",
  "lib",
  "user",
  "User",
  "service",
  "Service.ts",
  "index.ts",
  "a_b",
  "a-b",
  "cfg",
  "Config.json",
  "x",
  "main.go",
  "README.md",
  "é",
);
const pathArb = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("/"));
const query = fc.oneof(
  fc.constantFrom("user", "usrsvc", "serv", "src/", "user/serv", "index.ts", "cfg json", "a_b", "readme", "Srevice", "confgi", "x", "é", "main"),
  fc.array(fc.constantFrom("u", "s", "e", "r", "v", "/", ".", "_", " ", "c", "i", "n"), { minLength: 1, maxLength: 6 }).map((c) => c.join("")),
);
const op = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), path: pathArb }),
  fc.record({ kind: fc.constant("remove" as const), path: pathArb }),
  fc.record({ kind: fc.constant("search" as const), query, limit: fc.integer({ min: 1, max: 30 }) }),
);

describe("FuzzyIndex, told of changes, against a fresh build", () => {
  it("ranks exactly as a fresh index of the same paths, for any adds, removes and queries between them", async () => {
    await check(
      fc.property(
        fc.uniqueArray(pathArb, { maxLength: 40 }),
        fc.array(op, { maxLength: 30 }),
        fc.array(query, { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(pathArb, pathArb), { maxLength: 6 }),
        (initial, ops, finals, churn) => {
          const index = new FuzzyIndex(initial);
          const paths = new Set(initial);
          const compare = (q: string, limit: number) => expect(index.search(q, limit)).toEqual(new FuzzyIndex([...paths].sort()).search(q, limit));
          for (const o of ops) {
            if (o.kind === "add") {
              index.add(o.path);
              paths.add(o.path);
            } else if (o.kind === "remove") {
              expect(index.remove(o.path)).toBe(paths.delete(o.path));
            } else compare(o.query, o.limit);
          }
          expect(index.size).toBe(paths.size);
          // narrowing: each query after one it extends, with a path removed and one added between some (a slot reused)
          let step = 0;
          for (const q of finals) {
            for (let end = 1; end <= q.length; end++, step++) {
              const [gone, added] = churn[step % (churn.length + 1)] ?? [];
              if (gone !== undefined && paths.delete(gone)) index.remove(gone);
              if (added !== undefined) {
                paths.add(added);
                index.add(added);
              }
              compare(q.slice(0, end), 10);
            }
          }
          const under = (p: string) => p.startsWith("src/");
          for (const q of finals) expect(index.search(q, 10, under, "src")).toEqual(new FuzzyIndex([...paths]).search(q, 10, under));
        },
      ),
      200,
    );
  });
});
