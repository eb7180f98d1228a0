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
 * The occurrences of each value in a region of a, as xhistogram.c's index answers them: the first one, the ones after
 * it in ascending positions, and their count. Values are interned ids, so arrays indexed by value replace git's hash
 * table. Where git fills its table from the whole region and empties it after, this keeps the positions of the first
 * region asked (the whole of a, for a diff; its recursion asks only regions inside it), grouped by value and ascending
 * (`at[start[v]] ..`, `size[v]` of them), and works out a value's count in a region the first time the region asks,
 * by binary search: a region then costs the values looked up in it, not two passes over its part of a. The arrays by
 * value are scratch for values below `values`, made once per diff, valid where their stamp is the current one (so
 * nothing is cleared: a small region indexed, as a range's contents pass asks, costs its own length).
 */
export class Occurrences {
  /** The indexed positions: per value, its stamp, where its positions start in `at`, how many. */
  private readonly indexStamp: Int32Array;
  private readonly start: Int32Array;
  private readonly size: Int32Array;
  private indexSerial = 0;
  private indexed?: Int32Array;
  private w0 = 0;
  private w1 = 0;
  /** Positions of the indexed region of a, grouped by value, ascending within a value. */
  at = new Int32Array(0);
  /** The current region: per value, its stamp, its count in the region, the index in `at` of its first position there. */
  private readonly regionStamp: Int32Array;
  private readonly counts: Int32Array;
  readonly low: Int32Array;
  private serial = 0;
  private a0 = 0;
  private a1 = 0;

  constructor(readonly values: number) {
    this.indexStamp = new Int32Array(values);
    this.start = new Int32Array(values);
    this.size = new Int32Array(values);
    this.regionStamp = new Int32Array(values);
    this.counts = new Int32Array(values);
    this.low = new Int32Array(values);
  }

  /** Tables for a diff of a against b. */
  static of(a: Int32Array, b: Int32Array): Occurrences {
    let values = 0;
    for (const x of [a, b]) for (let i = 0; i < x.length; i++) if (x[i] >= values) values = x[i] + 1;
    return new Occurrences(values);
  }

  /** Starts the region a[a0, a1): indexed anew when it is not inside the last one indexed of this `a`. */
  region(a: Int32Array, a0: number, a1: number): void {
    if (this.indexed !== a || a0 < this.w0 || a1 > this.w1) this.index(a, a0, a1);
    this.serial++;
    this.a0 = a0;
    this.a1 = a1;
  }

  private index(a: Int32Array, w0: number, w1: number): void {
    const stamp = ++this.indexSerial;
    const { indexStamp, start, size } = this;
    for (let i = w0; i < w1; i++) {
      const v = a[i];
      if (indexStamp[v] !== stamp) {
        indexStamp[v] = stamp;
        size[v] = 0;
      }
      size[v]++;
    }
    // Each value's first slot, values in the order they first occur. `low` is scratch until a region asks: here it
    // marks a value given its slot (-1 - stamp), then is its fill cursor.
    const fill = this.low;
    let next = 0;
    for (let i = w0; i < w1; i++) {
      const v = a[i];
      if (fill[v] === -1 - stamp) continue;
      start[v] = next;
      fill[v] = -1 - stamp;
      next += size[v];
    }
    if (this.at.length < w1 - w0) this.at = new Int32Array(w1 - w0);
    const at = this.at;
    for (let i = w0; i < w1; i++) {
      const v = a[i];
      if (fill[v] < 0) fill[v] = start[v];
      at[fill[v]++] = i;
    }
    this.indexed = a;
    this.w0 = w0;
    this.w1 = w1;
  }

  /** How often value v occurs in the region (0: never, or a value a does not have); sets low[v]. */
  count(v: number): number {
    if (v >= this.values || this.indexStamp[v] !== this.indexSerial) return 0;
    if (this.regionStamp[v] === this.serial) return this.counts[v];
    const at = this.at;
    let lo = this.start[v];
    const end = lo + this.size[v];
    let hi = end;
    // The first position at or after a0, then the first at or after a1.
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (at[mid] < this.a0) lo = mid + 1;
      else hi = mid;
    }
    const first = lo;
    hi = end;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (at[mid] < this.a1) lo = mid + 1;
      else hi = mid;
    }
    this.regionStamp[v] = this.serial;
    this.low[v] = first;
    return (this.counts[v] = lo - first);
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
  tables.region(a, a0, a1);
  const { at, low } = tables;
  let cnt = MAX_CHAIN + 1;
  let hasCommon = false;
  let span = 0;
  let best: Block | null = null;
  for (let bi = b0; bi < b1; ) {
    let nextB = bi + 1;
    const v = b[bi];
    const count = tables.count(v);
    if (count > 0) hasCommon = true;
    if (count > 0 && count <= cnt) {
      // v's positions in the region: at[k] for k in [low[v], end).
      const end = low[v] + count;
      for (let k = low[v]; ; ) {
        let as = at[k];
        let np = k + 1;
        let bs = bi;
        let ae = as;
        let be = bi;
        let rc = count;
        while (a0 < as && b0 < bs && a[as - 1] === b[bs - 1]) {
          as--;
          bs--;
          if (rc > 1) rc = Math.min(rc, tables.count(a[as]));
        }
        while (ae < a1 - 1 && be < b1 - 1 && a[ae + 1] === b[be + 1]) {
          ae++;
          be++;
          if (rc > 1) rc = Math.min(rc, tables.count(a[ae]));
        }
        if (nextB <= be) nextB = be + 1;
        if (span < ae - as || rc < cnt) {
          span = ae - as;
          best = [as, bs, ae - as + 1];
          cnt = rc;
        }
        while (np < end && at[np] <= ae) np++;
        if (np === end) break;
        k = np;
      }
    }
    bi = nextB;
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
