/**
 * A line (or token) diff that places changes where git does, so a three-way merge built on it finds git's conflicts.
 *
 * `git merge` (merge-ort) diffs with the histogram algorithm and then slides every change group with xdiff's
 * `xdl_change_compact` (down as far as it goes, unless that breaks its alignment with the other file's change). Where a
 * conflict starts and ends depends on both, so both are ported here from git's xdiff (xhistogram.c, xdiffi.c) rather
 * than taken from the `diff` package, whose Myers diff has neither and works on strings, not interned sequences.
 * Elements are integers (interned lines or tokens): equal numbers are equal elements.
 */

/** One change: `aCount` elements of `a` at `aStart` became `bCount` elements of `b` at `bStart` (0-based). */
export interface Change {
  aStart: number;
  aCount: number;
  bStart: number;
  bCount: number;
}

/** git's histogram diff gives up on elements that occur more often than this in a region and falls back to Myers. */
const MAX_CHAIN_LENGTH = 64;
/**
 * The Myers fallback keeps one V array per edit step (quadratic in the edit distance); past this many entries (32 MB,
 * an edit distance near 2,800) the region is marked changed as a whole, as render.ts does for unified diffs: still a
 * correct diff, just coarser. It only runs where every common element is frequent (blank lines, braces).
 */
const MAX_MYERS_TRACE = 8_000_000;

/** Interns strings to small integers shared across the sequences of one merge. */
export class Interner {
  private readonly ids = new Map<string, number>();
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

type Seq = ArrayLike<number>;

/**
 * The occurrence index find_lcs builds over a region of `a`: per value its first occurrence and count, and per
 * position the next occurrence. Values are interned ids, so typed arrays indexed by value replace git's hash table;
 * they are allocated once per diff and cleared after each region (histogram indexes each region anew).
 */
class Index {
  readonly first: Int32Array;
  readonly count: Int32Array;
  readonly next: Int32Array;
  constructor(values: number, length: number) {
    this.first = new Int32Array(values).fill(-1);
    this.count = new Int32Array(values);
    this.next = new Int32Array(length);
  }
}

/** xhistogram.c's find_lcs over a[aLo,aHi) and b[bLo,bHi): the longest common run of the rarest elements. */
function findLcs(a: Seq, b: Seq, aLo: number, aHi: number, bLo: number, bHi: number, index: Index) {
  const { first, count, next } = index;
  for (let i = aHi - 1; i >= aLo; i--) {
    const v = a[i];
    next[i] = first[v];
    first[v] = i;
    count[v]++;
  }
  let cnt = MAX_CHAIN_LENGTH + 1;
  let hasCommon = false;
  let found = false;
  let span = 0;
  let as0 = 0, bs0 = 0, ae0 = 0, be0 = 0;
  for (let bPtr = bLo; bPtr < bHi;) {
    let bNext = bPtr + 1;
    const v = b[bPtr];
    const start = v < first.length ? first[v] : -1;
    if (start !== -1) {
      hasCommon = true;
      const recCnt = count[v];
      if (recCnt <= cnt) {
        let as = start;
        for (;;) {
          let np = next[as];
          let bs = bPtr;
          let ae = as;
          let be = bs;
          let rc = recCnt;
          while (aLo < as && bLo < bs && a[as - 1] === b[bs - 1]) {
            as--;
            bs--;
            if (rc > 1) rc = Math.min(rc, count[a[as]]);
          }
          while (ae < aHi - 1 && be < bHi - 1 && a[ae + 1] === b[be + 1]) {
            ae++;
            be++;
            if (rc > 1) rc = Math.min(rc, count[a[ae]]);
          }
          if (bNext <= be) bNext = be + 1;
          if (span < ae - as || rc < cnt) {
            found = true;
            span = ae - as;
            as0 = as;
            bs0 = bs;
            ae0 = ae;
            be0 = be;
            cnt = rc;
          }
          while (np !== -1 && np <= ae) np = next[np];
          if (np === -1) break;
          as = np;
        }
      }
    }
    bPtr = bNext;
  }
  for (let i = aLo; i < aHi; i++) {
    first[a[i]] = -1;
    count[a[i]] = 0;
  }
  if (hasCommon && cnt > MAX_CHAIN_LENGTH) return "fallback" as const;
  return found ? { as: as0, bs: bs0, ae: ae0, be: be0 } : null;
}

/** Greedy Myers over a[aLo,aHi) and b[bLo,bHi), marking what is not in the LCS; false when over budget. */
function myers(a: Seq, b: Seq, aLo: number, aHi: number, bLo: number, bHi: number, ca: Uint8Array, cb: Uint8Array): boolean {
  const n = aHi - aLo;
  const m = bHi - bLo;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let cost = 0;
  for (let d = 0; d <= max; d++) {
    cost += 2 * d + 3;
    if (cost > MAX_MYERS_TRACE) return false;
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[aLo + x] === b[bLo + y]) x++, y++;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        backtrack(trace, d, n, m, aLo, bLo, ca, cb);
        return true;
      }
    }
  }
  return false;
}

function backtrack(trace: Int32Array[], dEnd: number, n: number, m: number, aLo: number, bLo: number, ca: Uint8Array, cb: Uint8Array) {
  let x = n;
  let y = m;
  for (let d = dEnd; d > 0; d--) {
    const row = trace[d]; // V before step d, indexes k+d+1 for k in [-d-1, d+1]
    const at = (k: number) => row[k + d + 1];
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX + (down ? 0 : 1) && y > prevY + (down ? 1 : 0)) x--, y--;
    if (down) cb[bLo + prevY] = 1;
    else ca[aLo + prevX] = 1;
    x = prevX;
    y = prevY;
  }
}

/** xhistogram.c's histogram_diff, iterative: marks changed elements of a in `ca` and of b in `cb`. */
function histogram(a: Seq, b: Seq, ca: Uint8Array, cb: Uint8Array): void {
  let values = 0;
  for (let i = 0; i < a.length; i++) if (a[i] >= values) values = a[i] + 1;
  const index = new Index(values, a.length);
  const stack: number[][] = [[0, a.length, 0, b.length]];
  const markAll = (aLo: number, aHi: number, bLo: number, bHi: number) => {
    ca.fill(1, aLo, aHi);
    cb.fill(1, bLo, bHi);
  };
  while (stack.length) {
    const [aLo, aHi, bLo, bHi] = stack.pop()!;
    if (aLo === aHi || bLo === bHi) {
      markAll(aLo, aHi, bLo, bHi);
      continue;
    }
    const lcs = findLcs(a, b, aLo, aHi, bLo, bHi, index);
    if (lcs === "fallback") {
      if (!myers(a, b, aLo, aHi, bLo, bHi, ca, cb)) markAll(aLo, aHi, bLo, bHi);
    } else if (!lcs) markAll(aLo, aHi, bLo, bHi);
    else {
      stack.push([lcs.ae + 1, aHi, lcs.be + 1, bHi]);
      stack.push([aLo, lcs.as, bLo, lcs.bs]);
    }
  }
}

/** A (possibly empty) run of changed elements [start,end) in one file, as xdiffi.c's struct xdlgroup. */
interface Group {
  start: number;
  end: number;
}

/**
 * xdiffi.c's xdl_change_compact without the indent heuristic (merges run without it): every group slides up, then down
 * as far as it can, merging with groups it bumps into, and finally back up to line up with a change in the other file.
 */
function compact(x: Seq, changed: Uint8Array, other: Uint8Array): void {
  const n = x.length;
  const on = other.length;
  const isChanged = (c: Uint8Array, i: number) => i >= 0 && i < c.length && c[i] === 1;
  const init = (c: Uint8Array): Group => {
    const g = { start: 0, end: 0 };
    while (isChanged(c, g.end)) g.end++;
    return g;
  };
  const nextGroup = (c: Uint8Array, len: number, g: Group): boolean => {
    if (g.end === len) return false;
    g.start = g.end + 1;
    for (g.end = g.start; isChanged(c, g.end); g.end++);
    return true;
  };
  const previousGroup = (c: Uint8Array, g: Group): boolean => {
    if (g.start === 0) return false;
    g.end = g.start - 1;
    for (g.start = g.end; isChanged(c, g.start - 1); g.start--);
    return true;
  };
  const slideDown = (g: Group): boolean => {
    if (g.end < n && x[g.start] === x[g.end]) {
      changed[g.start++] = 0;
      changed[g.end++] = 1;
      while (isChanged(changed, g.end)) g.end++;
      return true;
    }
    return false;
  };
  const slideUp = (g: Group): boolean => {
    if (g.start > 0 && x[g.start - 1] === x[g.end - 1]) {
      changed[--g.start] = 1;
      changed[--g.end] = 0;
      while (isChanged(changed, g.start - 1)) g.start--;
      return true;
    }
    return false;
  };
  const broken = () => new Error("sequence-diff: group sync broken");

  const g = init(changed);
  const go = init(other);
  for (;;) {
    if (g.end !== g.start) {
      let groupSize: number;
      let earliestEnd: number;
      let endMatchingOther: number;
      do {
        groupSize = g.end - g.start;
        endMatchingOther = -1;
        while (slideUp(g)) if (!previousGroup(other, go)) throw broken();
        earliestEnd = g.end;
        if (go.end > go.start) endMatchingOther = g.end;
        while (slideDown(g)) {
          if (!nextGroup(other, on, go)) throw broken();
          if (go.end > go.start) endMatchingOther = g.end;
        }
      } while (groupSize !== g.end - g.start);
      if (g.end !== earliestEnd && endMatchingOther !== -1) {
        while (go.end === go.start) {
          if (!slideUp(g)) throw broken();
          if (!previousGroup(other, go)) throw broken();
        }
      }
    }
    if (!nextGroup(changed, n, g)) break;
    if (!nextGroup(other, on, go)) throw broken();
  }
}

/** The changed-element flags of a diff from `a` to `b`, as git computes and compacts them. */
export function diffFlags(a: Seq, b: Seq): { ca: Uint8Array; cb: Uint8Array } {
  const ca = new Uint8Array(a.length);
  const cb = new Uint8Array(b.length);
  histogram(a, b, ca, cb);
  compact(a, ca, cb);
  compact(b, cb, ca);
  return { ca, cb };
}

/** The changes from `a` to `b`, in order (xdl_build_script over the compacted flags). */
export function diffSequences(a: Seq, b: Seq): Change[] {
  const { ca, cb } = diffFlags(a, b);
  const changes: Change[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if ((i < a.length && ca[i]) || (j < b.length && cb[j])) {
      const aStart = i;
      const bStart = j;
      while (i < a.length && ca[i]) i++;
      while (j < b.length && cb[j]) j++;
      changes.push({ aStart, aCount: i - aStart, bStart, bCount: j - bStart });
    } else {
      i++;
      j++;
    }
  }
  return changes;
}
