/**
 * xdiff's Myers diff, ported from git (xdiff/xprepare.c and xdiff/xdiffi.c) so that the two places that need a
 * shortest edit script break its ties where git does: the word diff (git's `--word-diff` runs this on the words) and
 * the line diff's fallback in a region whose lines are all frequent (xhistogram.c falls back to it there). Elements are
 * integers, equal numbers equal elements. As in git, the common ends are taken off first, elements with no match on
 * the other side are marked changed before the search (and elements with many matches too, inside a run of those),
 * and the middle snake's search gives up on optimality past a cost bound, so a huge input costs a bounded time.
 * Slides (xdl_change_compact) are the caller's: diff-compact.ts.
 */

/** xdiffi.c's tuning: the cost past which the search takes a good-enough split, and the snake length it trusts. */
const MAX_COST_MIN = 256;
const HEUR_MIN_COST = 256;
const SNAKE_CNT = 20;
const K_HEUR = 4;
/** xprepare.c's: a run of discardable elements, how far a run is scanned, the most matches that count as "few". */
const KPDIS_RUN = 4;
const SIMSCAN_WINDOW = 100;
const MAX_EQLIMIT = 1024;
const LINE_MAX = 0x7fffffff;

/** xutils.c's xdl_bogosqrt: a power of two near the square root. */
function bogosqrt(n: number): number {
  let i = 1;
  for (; n > 0; n >>= 2) i <<= 1;
  return i;
}

/**
 * xprepare.c's xdl_clean_mmatch: is element i, which has many matches, in the middle of a run of elements with none
 * (or many) on both sides, so that it is discarded too?
 */
function cleanMmatch(dis: Uint8Array, i: number, s: number, e: number): boolean {
  if (i - s > SIMSCAN_WINDOW) s = i - SIMSCAN_WINDOW;
  if (e - i > SIMSCAN_WINDOW) e = i + SIMSCAN_WINDOW;
  let rdis0 = 0;
  let rpdis0 = 1;
  for (let r = 1; i - r >= s; r++) {
    if (!dis[i - r]) rdis0++;
    else if (dis[i - r] === 2) rpdis0++;
    else break;
  }
  if (rdis0 === 0) return false;
  let rdis1 = 0;
  let rpdis1 = 1;
  for (let r = 1; i + r <= e; r++) {
    if (!dis[i + r]) rdis1++;
    else if (dis[i + r] === 2) rpdis1++;
    else break;
  }
  if (rdis1 === 0) return false;
  rdis1 += rdis0;
  rpdis1 += rpdis0;
  return rpdis1 * KPDIS_RUN < rpdis1 + rdis1;
}

/** The elements of one side that go into the search (xdl_cleanup_records), marking the others changed. */
function kept(x: ArrayLike<number>, start: number, end: number, otherCount: Map<number, number>, changed: Uint8Array): number[] {
  const mlim = Math.min(bogosqrt(x.length), MAX_EQLIMIT);
  const dis = new Uint8Array(x.length);
  for (let i = start; i < end; i++) {
    const nm = otherCount.get(x[i]) ?? 0;
    dis[i] = nm === 0 ? 0 : nm >= mlim ? 2 : 1;
  }
  const index: number[] = [];
  for (let i = start; i < end; i++) {
    if (dis[i] === 1 || (dis[i] === 2 && !cleanMmatch(dis, i, start, end - 1))) index.push(i);
    else changed[i] = 1;
  }
  return index;
}

function counts(x: ArrayLike<number>): Map<number, number> {
  const m = new Map<number, number>();
  for (let i = 0; i < x.length; i++) m.set(x[i], (m.get(x[i]) ?? 0) + 1);
  return m;
}

interface Split {
  i1: number;
  i2: number;
  minLo: boolean;
  minHi: boolean;
}

/** The search state of one diff: the kept elements and the two diagonal vectors (offset by `k`), xdiffi.c's kvdf/kvdb. */
class Search {
  readonly kvdf: Int32Array;
  readonly kvdb: Int32Array;
  readonly k: number;
  readonly mxcost: number;

  constructor(
    readonly h1: Int32Array,
    readonly h2: Int32Array,
  ) {
    const ndiags = h1.length + h2.length + 3;
    this.kvdf = new Int32Array(ndiags);
    this.kvdb = new Int32Array(ndiags);
    this.k = h2.length + 1;
    this.mxcost = Math.max(bogosqrt(ndiags), MAX_COST_MIN);
  }

  /** xdl_split: the middle snake of the box, or past the cost bound the furthest-reaching point a heuristic trusts. */
  split(off1: number, lim1: number, off2: number, lim2: number, needMin: boolean): Split {
    const { h1, h2, kvdf, kvdb, k: K } = this;
    const dmin = off1 - lim2;
    const dmax = lim1 - off2;
    const fmid = off1 - off2;
    const bmid = lim1 - lim2;
    const odd = ((fmid - bmid) & 1) !== 0;
    let fmin = fmid;
    let fmax = fmid;
    let bmin = bmid;
    let bmax = bmid;
    kvdf[K + fmid] = off1;
    kvdb[K + bmid] = lim1;
    for (let ec = 1; ; ec++) {
      let gotSnake = false;
      if (fmin > dmin) kvdf[K + --fmin - 1] = -1;
      else ++fmin;
      if (fmax < dmax) kvdf[K + ++fmax + 1] = -1;
      else --fmax;
      for (let d = fmax; d >= fmin; d -= 2) {
        let i1 = kvdf[K + d - 1] >= kvdf[K + d + 1] ? kvdf[K + d - 1] + 1 : kvdf[K + d + 1];
        const prev1 = i1;
        let i2 = i1 - d;
        for (; i1 < lim1 && i2 < lim2 && h1[i1] === h2[i2]; i1++, i2++);
        if (i1 - prev1 > SNAKE_CNT) gotSnake = true;
        kvdf[K + d] = i1;
        if (odd && bmin <= d && d <= bmax && kvdb[K + d] <= i1) return { i1, i2, minLo: true, minHi: true };
      }
      if (bmin > dmin) kvdb[K + --bmin - 1] = LINE_MAX;
      else ++bmin;
      if (bmax < dmax) kvdb[K + ++bmax + 1] = LINE_MAX;
      else --bmax;
      for (let d = bmax; d >= bmin; d -= 2) {
        let i1 = kvdb[K + d - 1] < kvdb[K + d + 1] ? kvdb[K + d - 1] : kvdb[K + d + 1] - 1;
        const prev1 = i1;
        let i2 = i1 - d;
        for (; i1 > off1 && i2 > off2 && h1[i1 - 1] === h2[i2 - 1]; i1--, i2--);
        if (prev1 - i1 > SNAKE_CNT) gotSnake = true;
        kvdb[K + d] = i1;
        if (!odd && fmin <= d && d <= fmax && i1 <= kvdf[K + d]) return { i1, i2, minLo: true, minHi: true };
      }
      if (needMin) continue;
      if (gotSnake && ec > HEUR_MIN_COST) {
        const found = this.interesting(off1, lim1, off2, lim2, ec, fmin, fmax, fmid, bmin, bmax, bmid);
        if (found) return found;
      }
      if (ec >= this.mxcost) return this.furthest(off1, lim1, off2, lim2, fmin, fmax, bmin, bmax);
    }
  }

  /** A diagonal far along and near the middle that ends in a long snake: good enough to split on. */
  private interesting(
    off1: number,
    lim1: number,
    off2: number,
    lim2: number,
    ec: number,
    fmin: number,
    fmax: number,
    fmid: number,
    bmin: number,
    bmax: number,
    bmid: number,
  ): Split | null {
    const { h1, h2, kvdf, kvdb, k: K } = this;
    let best = 0;
    let out: Split | null = null;
    for (let d = fmax; d >= fmin; d -= 2) {
      const dd = d > fmid ? d - fmid : fmid - d;
      const i1 = kvdf[K + d];
      const i2 = i1 - d;
      const v = i1 - off1 + (i2 - off2) - dd;
      if (v > K_HEUR * ec && v > best && off1 + SNAKE_CNT <= i1 && i1 < lim1 && off2 + SNAKE_CNT <= i2 && i2 < lim2) {
        for (let k = 1; h1[i1 - k] === h2[i2 - k]; k++) {
          if (k === SNAKE_CNT) {
            best = v;
            out = { i1, i2, minLo: true, minHi: false };
            break;
          }
        }
      }
    }
    if (out) return out;
    best = 0;
    for (let d = bmax; d >= bmin; d -= 2) {
      const dd = d > bmid ? d - bmid : bmid - d;
      const i1 = kvdb[K + d];
      const i2 = i1 - d;
      const v = lim1 - i1 + (lim2 - i2) - dd;
      if (v > K_HEUR * ec && v > best && off1 < i1 && i1 <= lim1 - SNAKE_CNT && off2 < i2 && i2 <= lim2 - SNAKE_CNT) {
        for (let k = 0; h1[i1 + k] === h2[i2 + k]; k++) {
          if (k === SNAKE_CNT - 1) {
            best = v;
            out = { i1, i2, minLo: false, minHi: true };
            break;
          }
        }
      }
    }
    return out;
  }

  /** Enough is enough: the furthest point either search reached (the i1 + i2 measure). */
  private furthest(off1: number, lim1: number, off2: number, lim2: number, fmin: number, fmax: number, bmin: number, bmax: number): Split {
    const { kvdf, kvdb, k: K } = this;
    let fbest = -1;
    let fbest1 = -1;
    for (let d = fmax; d >= fmin; d -= 2) {
      let i1 = Math.min(kvdf[K + d], lim1);
      let i2 = i1 - d;
      if (lim2 < i2) {
        i1 = lim2 + d;
        i2 = lim2;
      }
      if (fbest < i1 + i2) {
        fbest = i1 + i2;
        fbest1 = i1;
      }
    }
    let bbest = LINE_MAX;
    let bbest1 = LINE_MAX;
    for (let d = bmax; d >= bmin; d -= 2) {
      let i1 = Math.max(off1, kvdb[K + d]);
      let i2 = i1 - d;
      if (i2 < off2) {
        i1 = off2 + d;
        i2 = off2;
      }
      if (i1 + i2 < bbest) {
        bbest = i1 + i2;
        bbest1 = i1;
      }
    }
    if (lim1 + lim2 - bbest < fbest - (off1 + off2)) return { i1: fbest1, i2: fbest - fbest1, minLo: true, minHi: false };
    return { i1: bbest1, i2: bbest - bbest1, minLo: false, minHi: true };
  }
}

/** The changed elements of a and b (1 in `ca`, `cb`) as git's xdl_do_diff marks them (without `--minimal`), before its slides. */
export function xdiffMyers(a: ArrayLike<number>, b: ArrayLike<number>): { ca: Uint8Array; cb: Uint8Array } {
  const ca = new Uint8Array(a.length);
  const cb = new Uint8Array(b.length);
  // xdl_trim_ends: the common ends are not searched.
  let start = 0;
  const lim = Math.min(a.length, b.length);
  while (start < lim && a[start] === b[start]) start++;
  let tail = 0;
  while (tail < lim - start && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const rindex1 = kept(a, start, a.length - tail, counts(b), ca);
  const rindex2 = kept(b, start, b.length - tail, counts(a), cb);
  const h1 = Int32Array.from(rindex1, (i) => a[i]);
  const h2 = Int32Array.from(rindex2, (i) => b[i]);
  const search = new Search(h1, h2);
  // xdl_recs_cmp, with an explicit stack: each box is independent of the order the others are done in.
  const stack: [number, number, number, number, boolean][] = [[0, h1.length, 0, h2.length, false]];
  while (stack.length) {
    let [off1, lim1, off2, lim2, min] = stack.pop()!;
    for (; off1 < lim1 && off2 < lim2 && h1[off1] === h2[off2]; off1++, off2++);
    for (; off1 < lim1 && off2 < lim2 && h1[lim1 - 1] === h2[lim2 - 1]; lim1--, lim2--);
    if (off1 === lim1) for (; off2 < lim2; off2++) cb[rindex2[off2]] = 1;
    else if (off2 === lim2) for (; off1 < lim1; off1++) ca[rindex1[off1]] = 1;
    else {
      const spl = search.split(off1, lim1, off2, lim2, min);
      stack.push([spl.i1, lim1, spl.i2, lim2, spl.minHi], [off1, spl.i1, off2, spl.i2, spl.minLo]);
    }
  }
  return { ca, cb };
}
