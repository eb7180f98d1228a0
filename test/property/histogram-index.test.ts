/**
 * Issue 23: the histogram's index of positions (core/sequence-diff.ts Occurrences) answers as xhistogram.c's per-region
 * table did, on sequences large and repetitive enough to reach what git's files of the other property tests rarely do:
 * regions many levels deep, anchors occurring 2 to 64 times (their runs' counts bounded by the other elements'), the
 * Myers fallback of regions whose common elements all occur more often, values b has and a lacks, and small regions
 * of one array asked after another array's index (a range's contents pass). The reference is the table as the port of
 * xhistogram.c had it: filled from the region of a, emptied after.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Block } from "../../src/core/diff-compact.js";
import { MAX_CHAIN, Occurrences, histogram } from "../../src/core/sequence-diff.js";
import { check } from "./runs.js";

type Region = [a0: number, a1: number, b0: number, b1: number];

/** xhistogram.c's find_lcs with its table filled from the region and emptied after (the port before the index). */
function referenceRun(a: Int32Array, b: Int32Array, values: number, [a0, a1, b0, b1]: Region): Block | "fallback" | null {
  const first = new Int32Array(values).fill(-1);
  const count = new Int32Array(values);
  const next = new Int32Array(a.length);
  for (let i = a1 - 1; i >= a0; i--) {
    next[i] = first[a[i]];
    first[a[i]] = i;
    count[a[i]]++;
  }
  let cnt = MAX_CHAIN + 1;
  let hasCommon = false;
  let span = 0;
  let best: Block | null = null;
  for (let bi = b0; bi < b1; ) {
    let nextB = bi + 1;
    const v = b[bi];
    const head = v < values ? first[v] : -1;
    if (head !== -1) hasCommon = true;
    if (head !== -1 && count[v] <= cnt) {
      for (let as = head; ; ) {
        let np = next[as];
        let bs = bi;
        let ae = as;
        let be = bi;
        let rc = count[v];
        while (a0 < as && b0 < bs && a[as - 1] === b[bs - 1]) {
          as--;
          bs--;
          if (rc > 1) rc = Math.min(rc, count[a[as]]);
        }
        while (ae < a1 - 1 && be < b1 - 1 && a[ae + 1] === b[be + 1]) {
          ae++;
          be++;
          if (rc > 1) rc = Math.min(rc, count[a[ae]]);
        }
        if (nextB <= be) nextB = be + 1;
        if (span < ae - as || rc < cnt) {
          span = ae - as;
          best = [as, bs, ae - as + 1];
          cnt = rc;
        }
        while (np !== -1 && np <= ae) np = next[np];
        if (np === -1) break;
        as = np;
      }
    }
    bi = nextB;
  }
  return hasCommon && cnt > MAX_CHAIN ? "fallback" : best;
}

/** The reference histogram's blocks, with "fallback" regions marked (the Myers there is the same code either way). */
function referenceBlocks(a: Int32Array, b: Int32Array, values: number, region: Region): (Block | Region)[] {
  const out: (Block | Region)[] = [];
  const stack: Region[] = [region];
  while (stack.length) {
    const [a0, a1, b0, b1] = stack.pop()!;
    if (a0 === a1 || b0 === b1) continue;
    const run = referenceRun(a, b, values, [a0, a1, b0, b1]);
    if (run === "fallback") out.push([a0, a1, b0, b1]);
    else if (run) {
      const [x, y, len] = run;
      out.push(run);
      stack.push([x + len, a1, y + len, b1], [a0, x, b0, y]);
    }
  }
  return out;
}

/**
 * A sequence of `n` values: mostly unique ones (a line of code), some of a few values repeated 2 to 70 times (braces,
 * blank lines), and, with `frequent`, most of them from three values (every common element too frequent: Myers).
 */
const sequence = fc
  .record({
    n: fc.integer({ min: 0, max: 1500 }),
    pool: fc.integer({ min: 1, max: 40 }),
    repeatShare: fc.double({ min: 0, max: 1, noNaN: true }),
    frequent: fc.boolean(),
    seed: fc.integer(),
  })
  .map(({ n, pool, repeatShare, frequent, seed }) => {
    let x = seed | 1;
    const rand = () => ((x = (Math.imul(x, 1103515245) + 12345) | 0) >>> 8) / 0x1000000;
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      if (frequent && rand() < 0.9) out[i] = Math.floor(rand() * 3);
      else if (rand() < repeatShare) out[i] = 3 + Math.floor(rand() * pool);
      else out[i] = 100 + i;
    }
    return out;
  });

/** b: a with runs replaced, inserted and deleted (new values among them, some a never has). */
const edits = fc.array(
  fc.record({
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    cut: fc.integer({ min: 0, max: 30 }),
    add: fc.array(fc.integer({ min: 0, max: 6000 }), { maxLength: 20 }),
  }),
  {
    maxLength: 25,
  },
);

function edited(a: Int32Array, list: { at: number; cut: number; add: number[] }[]): Int32Array {
  const out = [...a];
  for (const e of list) out.splice(Math.floor(e.at * out.length), e.cut, ...e.add);
  return Int32Array.from(out);
}

describe("the histogram's position index against the per-region table (issue 23)", () => {
  it("anchors every region where git's table does, and falls back where it does", async () => {
    await check(
      fc.property(sequence, edits, (a, list) => {
        const b = edited(a, list);
        let values = 0;
        for (const x of [a, b]) for (const v of x) values = Math.max(values, v + 1);
        const region: Region = [0, a.length, 0, b.length];
        const expected = referenceBlocks(a, b, values, region);
        const fallbacks = expected.filter((x) => x.length === 4) as Region[];
        const blocks = histogram(a, b, new Occurrences(values));
        // Outside the fallback regions, the same blocks; inside them, Myers' (the same function in both).
        const outside = (blk: Block) => !fallbacks.some(([a0, a1]) => a0 <= blk[0] && blk[0] < a1);
        expect(blocks.filter(outside)).toEqual((expected.filter((x) => x.length === 3) as Block[]).sort((x, y) => x[0] - y[0]));
      }),
      300,
    );
  });

  it("answers regions of another array after a whole diff's index, one after another, as a range's contents pass asks", async () => {
    await check(
      fc.property(sequence, edits, fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (a, list, p, q) => {
        const b = edited(a, list);
        let values = 0;
        for (const x of [a, b]) for (const v of x) values = Math.max(values, v + 1);
        const tables = new Occurrences(values);
        histogram(a, b, tables);
        // Another array (the contents of the same lines, say): a region of it, the one after, the whole; then a again.
        const other = Int32Array.from(a, (v) => v % 7);
        const otherB = Int32Array.from(b, (v) => v % 7);
        const ka = Math.floor(p * a.length);
        const kb = Math.floor(q * b.length);
        const asked: [Int32Array, Int32Array, Region][] = [
          [other, otherB, [0, ka, 0, kb]],
          [other, otherB, [ka, a.length, kb, b.length]],
          [other, otherB, [0, a.length, 0, b.length]],
          [a, b, [ka, a.length, kb, b.length]],
        ];
        for (const [x, y, region] of asked) {
          const expected = referenceBlocks(x, y, values, region);
          if (expected.some((e) => e.length === 4)) continue; // a fallback: Myers' blocks, the same code either way
          expect(histogram(x, y, tables, region)).toEqual((expected as Block[]).sort((m, n) => m[0] - n[0]));
        }
      }),
      200,
    );
  });
});
