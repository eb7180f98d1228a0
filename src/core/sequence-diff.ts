/**
 * The one diff of interned sequences (lines or tokens as small integers, equal numbers equal elements), placing changes
 * where git does: xdiff's histogram diff (xhistogram.c, from JGit), then xdiff's slides (diff-compact.ts). The line diff
 * (line-diff.ts) runs it with the lines' text, so the slides use git's indent heuristic as `git diff` does; the merges
 * (merge/) run it without, as `git merge` (merge-ort) does, so conflicts start and end where git's do.
 *
 * Histogram anchors each region on the longest common run of its rarest element, then diffs both sides of it the same
 * way. Anchoring on rare lines aligns code as a reader does: a moved or inserted block of `}` and blank lines does not
 * pull unrelated braces into pairs the way a shortest edit script may. A region whose common elements are all frequent
 * (each more than MAX_CHAIN times) falls back to git's Myers (myers.ts) on that region, as xhistogram.c does.
 */
import { type Block, type CompactSide, blocksOf, compactBlocks } from "./diff-compact.js";
import { xdiffMyers } from "./myers.js";

/** One change: `aCount` elements of `a` at `aStart` became `bCount` elements of `b` at `bStart` (0-based). */
export interface Change {
  aStart: number;
  aCount: number;
  bStart: number;
  bCount: number;
}

/** Git's xhistogram limit: an element occurring more often than this in a region cannot anchor it (then Myers). */
export const MAX_CHAIN = 64;

/** Strings as small integers (equal strings, equal ids), shared by the sequences one diff or merge compares. */
export class Interner {
  private readonly ids = new Map<string, number>();

  get size(): number {
    return this.ids.size;
  }

  id(s: string): number {
    let n = this.ids.get(s);
    if (n === undefined) this.ids.set(s, (n = this.ids.size));
    return n;
  }

  all(items: readonly string[]): Int32Array {
    const out = new Int32Array(items.length);
    for (let i = 0; i < items.length; i++) out[i] = this.id(items[i]);
    return out;
  }
}

/**
 * The occurrences of each value in the current region of a, as xhistogram.c's index: first[v] -> next[pos] in ascending
 * positions, with count[v]. Values are interned ids, so arrays indexed by value replace git's hash table; allocated once
 * per diff (for values below `values`, a of `length`) and cleared after each region, not per region.
 */
export class Occurrences {
  readonly first: Int32Array;
  readonly count: Int32Array;
  readonly next: Int32Array;

  constructor(values: number, length: number) {
    this.first = new Int32Array(values).fill(-1);
    this.count = new Int32Array(values);
    this.next = new Int32Array(length);
  }

  /** Tables for a diff of a against b. */
  static of(a: Int32Array, b: Int32Array): Occurrences {
    let values = 0;
    for (const x of [a, b]) for (let i = 0; i < x.length; i++) if (x[i] >= values) values = x[i] + 1;
    return new Occurrences(values, a.length);
  }
}

/** A region of both sequences: a[a0, a1) against b[b0, b1). */
type Region = [a0: number, a1: number, b0: number, b1: number];

/**
 * xhistogram.c's find_lcs over a region: the longest common run of its rarest elements, "fallback" when every common
 * element is too frequent, null when nothing is common. The occurrences of an element inside the run just tried are
 * skipped, as git does.
 */
function rarestRun(a: Int32Array, b: Int32Array, tables: Occurrences, [a0, a1, b0, b1]: Region): Block | "fallback" | null {
  const { first, count, next } = tables;
  for (let i = a1 - 1; i >= a0; i--) {
    const v = a[i];
    next[i] = first[v];
    first[v] = i;
    count[v]++;
  }
  let cnt = MAX_CHAIN + 1;
  let hasCommon = false;
  let span = 0;
  let best: Block | null = null;
  for (let bi = b0; bi < b1; ) {
    let nextB = bi + 1;
    const v = b[bi];
    const head = v < first.length ? first[v] : -1;
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
  for (let i = a0; i < a1; i++) {
    first[a[i]] = -1;
    count[a[i]] = 0;
  }
  return hasCommon && cnt > MAX_CHAIN ? "fallback" : best;
}

/**
 * xhistogram.c's histogram_diff over a region (the whole of a and b by default): the matched blocks, sorted, before any
 * slide. Each region is indexed whole, with no common prefix or suffix taken off first (git does not either: it changes
 * which run of which element is the rarest).
 */
export function histogram(a: Int32Array, b: Int32Array, tables = Occurrences.of(a, b), region: Region = [0, a.length, 0, b.length]): Block[] {
  const blocks: Block[] = [];
  const stack: Region[] = [region];
  while (stack.length) {
    const [a0, a1, b0, b1] = stack.pop()!;
    if (a0 === a1 || b0 === b1) continue;
    const run = rarestRun(a, b, tables, [a0, a1, b0, b1]);
    if (run === "fallback") for (const block of myers(a, b, [a0, a1, b0, b1])) blocks.push(block);
    else if (run) {
      const [x, y, len] = run;
      blocks.push(run);
      stack.push([x + len, a1, y + len, b1], [a0, x, b0, y]);
    }
  }
  return blocks.sort((x, y) => x[0] - y[0]);
}

/** The fallback of a region whose common elements are all frequent: git's Myers on the region alone (xdl_fall_back_diff). */
function myers(a: Int32Array, b: Int32Array, [a0, a1, b0, b1]: Region): Block[] {
  const { ca, cb } = xdiffMyers(a.subarray(a0, a1), b.subarray(b0, b1));
  return blocksOf(ca, cb, a0, b0);
}

/**
 * The diff of two sequences as git places it: histogram, then every ambiguous group slid as xdiff's xdl_change_compact
 * does, with the indent heuristic when the sides carry their lines' text. `tables`: Occurrences to reuse.
 */
export function diffBlocks(a: CompactSide, b: CompactSide, tables?: Occurrences): Block[] {
  return compactBlocks(a, b, histogram(a.keys, b.keys, tables));
}

/** The changes from `a` to `b`, in order, placed as `git merge` places them (no indent heuristic). */
export function diffSequences(a: Int32Array, b: Int32Array): Change[] {
  const changes: Change[] = [];
  let i = 0;
  let j = 0;
  for (const [x, y, len] of [...diffBlocks({ keys: a }, { keys: b }), [a.length, b.length, 0] as const]) {
    if (x > i || y > j) changes.push({ aStart: i, aCount: x - i, bStart: j, bCount: y - j });
    i = x + len;
    j = y + len;
  }
  return changes;
}
