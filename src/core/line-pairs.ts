/**
 * Inside a modified range, which old line became which new line (SPEC 8): lines are paired by word similarity, not by
 * position, keeping the order of both sides (a pairing never crosses, like JetBrains'), so a reordered or rewritten
 * block pairs what a reader would pair and a line with no good partner is simply added or deleted.
 *
 * Pairing, in three steps (layoutOf):
 * 1. the monotone matching of largest total similarity (a weighted LCS over lines, pairsOf), where similarity is the
 *    share of non-blank characters in words and punctuation both lines have (a multiset Dice coefficient); a pair
 *    needs MIN_SIMILARITY. Lines whose content is equal and whose terminator changed are fixed pairs (eolPairs);
 * 2. a line that moved within the range: an unpaired new line and the unpaired old line most like it (MOVE_SIMILARITY);
 * 3. a gap between two pairs left with as many old lines as new ones pairs them in order (k lines replaced by k).
 *
 * Pieces are the unit every selection works on (staging, rollback, changelist marks): one per new line of a range,
 * holding that line, its partner if any, and unpaired old lines: a line that moved within the range (an unpaired old
 * line at least MOVE_SIMILARITY like it) or, else, those right above it in reading order (at the end of a range,
 * the last piece takes them). A pure deletion is one piece with no new line. A version is rebuilt by walking the
 * rows of each range in reading order and writing each row's old or new line as its piece's choice says, so any
 * choice yields a well-ordered file: nothing is duplicated, dropped or reordered beyond what the choice says
 * (lazygit #5103), and staging a moved line removes it from where it was instead of copying it.
 */
import type { ChangeRange, LineDiff } from "./line-diff.js";
import type { Layout, Piece, Row } from "./range-layout.js";

/**
 * Below this share of common characters two lines are unrelated. 0.3 pairs an edited comment such as
 * `// init something` with `// init variables` (0.4) and `int i = 0;` with `int x = 0;` (0.86), and leaves apart
 * lines that share only an operator and a semicolon (`const a = 1;` against `let b = 2;` is 0.25).
 */
export const MIN_SIMILARITY = 0.3;
/**
 * The pairing compares every old line of a gap with every new line; gaps longer than this on a side are paired in
 * proportional chunks of this size, so a rewritten 5,000-line file costs 5,000 x 64 comparisons, not 25 million.
 */
export const MAX_PAIR_SPAN = 64;

const TOKEN = /[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu;

/** Words (letters, digits, `_`) and single punctuation marks of a line; whitespace is not a token. */
export function tokens(line: string): string[] {
  return line.match(TOKEN) ?? [];
}

/** Share of non-blank characters two lines have in common, 0..1; two blank lines (whitespace only) are 1. */
export function similarity(a: string, b: string): number {
  const ta = tokens(a);
  const tb = tokens(b);
  if (!ta.length || !tb.length) return ta.length === tb.length ? 1 : 0;
  const counts = new Map<string, number>();
  let total = 0;
  for (const t of ta) {
    counts.set(t, (counts.get(t) ?? 0) + 1);
    total += t.length;
  }
  let common = 0;
  for (const t of tb) {
    total += t.length;
    const c = counts.get(t);
    if (c) {
      counts.set(t, c - 1);
      common += t.length;
    }
  }
  return (2 * common) / total;
}

/** A gap's lines as sorted token ids with their character weights, so a comparison is one merge of two arrays. */
class TokenTable {
  private readonly ids = new Map<string, number>();
  readonly weight: number[] = [];

  encode(line: string): { ids: Int32Array; chars: number } {
    const ts = tokens(line);
    const out = new Int32Array(ts.length);
    let chars = 0;
    for (let k = 0; k < ts.length; k++) {
      let id = this.ids.get(ts[k]);
      if (id === undefined) {
        this.ids.set(ts[k], (id = this.weight.length));
        this.weight.push(ts[k].length);
      }
      out[k] = id;
      chars += ts[k].length;
    }
    return { ids: out.sort(), chars };
  }

  similarity(a: { ids: Int32Array; chars: number }, b: { ids: Int32Array; chars: number }): number {
    if (!a.ids.length || !b.ids.length) return a.ids.length === b.ids.length ? 1 : 0;
    let common = 0;
    for (let i = 0, j = 0; i < a.ids.length && j < b.ids.length; ) {
      if (a.ids[i] === b.ids[j]) {
        common += this.weight[a.ids[i]];
        i++;
        j++;
      } else if (a.ids[i] < b.ids[j]) i++;
      else j++;
    }
    return (2 * common) / (a.chars + b.chars);
  }
}

/** Pairs (old, new) of a gap [o0,o1) x [n0,n1): the monotone matching of largest total similarity. */
function pairGap(diff: LineDiff, o0: number, o1: number, n0: number, n1: number, out: [number, number][]): void {
  const k = o1 - o0;
  const m = n1 - n0;
  if (!k || !m) return;
  if (k > MAX_PAIR_SPAN || m > MAX_PAIR_SPAN) {
    const chunks = Math.ceil(Math.max(k, m) / MAX_PAIR_SPAN);
    for (let c = 0; c < chunks; c++) {
      pairGap(
        diff,
        o0 + Math.floor((k * c) / chunks),
        o0 + Math.floor((k * (c + 1)) / chunks),
        n0 + Math.floor((m * c) / chunks),
        n0 + Math.floor((m * (c + 1)) / chunks),
        out,
      );
    }
    return;
  }
  const table = new TokenTable();
  const olds = Array.from({ length: k }, (_, i) => table.encode(diff.old.lines[o0 + i]));
  const news = Array.from({ length: m }, (_, j) => table.encode(diff.new.lines[n0 + j]));
  const sim = new Float64Array(k * m);
  const score = new Float64Array((k + 1) * (m + 1));
  const w = m + 1;
  for (let i = 1; i <= k; i++) {
    for (let j = 1; j <= m; j++) {
      const s = table.similarity(olds[i - 1], news[j - 1]);
      sim[(i - 1) * m + j - 1] = s;
      let best = Math.max(score[(i - 1) * w + j], score[i * w + j - 1]);
      if (s >= MIN_SIMILARITY) best = Math.max(best, score[(i - 1) * w + j - 1] + s);
      score[i * w + j] = best;
    }
  }
  // Walk back preferring to skip lines over pairing on a tie, so equal alternatives pair the topmost lines.
  const pairs: [number, number][] = [];
  for (let i = k, j = m; i > 0 && j > 0; ) {
    const here = score[i * w + j];
    if (here === score[i * w + j - 1]) j--;
    else if (here === score[(i - 1) * w + j]) i--;
    else {
      pairs.push([o0 + i - 1, n0 + j - 1]);
      i--;
      j--;
    }
  }
  for (let p = pairs.length - 1; p >= 0; p--) out.push(pairs[p]);
}

/** The pairs (old line, new line) of a range, sorted; only a modified range has any. Computed once, for its layout. */
export function pairsOf(diff: LineDiff, range: ChangeRange): readonly (readonly [number, number])[] {
  const out: [number, number][] = [];
  if (range.kind === "modified") {
    let o = range.oldStart;
    let n = range.start;
    for (const [po, pn] of [...range.eolPairs, [range.oldEnd, range.end] as const]) {
      pairGap(diff, o, po, n, pn, out);
      if (po < range.oldEnd) out.push([po, pn]);
      o = po + 1;
      n = pn + 1;
    }
  }
  return out;
}

/**
 * Lines that moved within a range: an unpaired new line and an unpaired old line this similar are one moved line.
 * Higher than MIN_SIMILARITY because a move claims a line out of order: only a clear likeness may do that.
 */
export const MOVE_SIMILARITY = 0.6;

/**
 * The rows and pieces of a range (see the header). After the similarity pairs, an unpaired new line takes the most
 * similar unpaired old line of the range as a moved partner (greedy, best first). Then a gap between two pairs that
 * still has as many old lines as new ones pairs them in order: k lines replaced by k lines read as k edits (and
 * staging the middle one lands in the middle, lazygit #5503), however little their words share. Other unpaired old
 * lines go to the piece of the next new line in reading order, or the last piece at the end.
 */
export function layoutOf(diff: LineDiff, range: ChangeRange): Layout {
  let layout = diff.layouts.get(range);
  if (layout) return layout;
  const similar = pairsOf(diff, range);
  const pairedOld = new Set(similar.map(([o]) => o));
  const pairedNew = new Set(similar.map(([, j]) => j));
  const loneOld: number[] = [];
  const loneNew: number[] = [];
  for (let o = range.oldStart; o < range.oldEnd; o++) if (!pairedOld.has(o)) loneOld.push(o);
  for (let j = range.start; j < range.end; j++) if (!pairedNew.has(j)) loneNew.push(j);
  const moves = findMoves(diff, loneOld, loneNew);
  const movedOld = new Set(moves.values());

  const pairs: [number, number][] = [];
  let o = range.oldStart;
  let n = range.start;
  for (const [po, pn] of [...similar, [range.oldEnd, range.end] as const]) {
    const gapOld: number[] = [];
    const gapNew: number[] = [];
    for (; o < po; o++) if (!movedOld.has(o)) gapOld.push(o);
    for (; n < pn; n++) if (!moves.has(n)) gapNew.push(n);
    if (gapOld.length && gapOld.length === gapNew.length) for (let k = 0; k < gapOld.length; k++) pairs.push([gapOld[k], gapNew[k]]);
    if (pn < range.end) pairs.push([po, pn]);
    o = po + 1;
    n = pn + 1;
  }

  const rows: Row[] = [];
  o = range.oldStart;
  n = range.start;
  for (const [po, pn] of [...pairs, [range.oldEnd, range.end] as const]) {
    for (; o < po; o++) rows.push({ old: o, new: -1 });
    for (; n < pn; n++) rows.push({ old: -1, new: n });
    if (pn < range.end) rows.push({ old: po, new: pn });
    o = po + 1;
    n = pn + 1;
  }

  const ownerOfOld = new Int32Array(range.oldEnd - range.oldStart).fill(-1);
  const pieces: Piece[] = [];
  if (range.start === range.end) {
    pieces.push({ rangeId: range.id, newStart: range.start, newEnd: range.start, partner: -1, moved: false, oldLines: range2(range.oldStart, range.oldEnd) });
    ownerOfOld.fill(0);
  } else {
    for (let j = range.start; j < range.end; j++) pieces.push({ rangeId: range.id, newStart: j, newEnd: j + 1, partner: -1, moved: false, oldLines: [] });
    for (const [po, pn] of pairs) {
      pieces[pn - range.start].partner = po;
      ownerOfOld[po - range.oldStart] = pn - range.start;
    }
    for (const [j, po] of moves) {
      Object.assign(pieces[j - range.start], { partner: po, moved: true });
      ownerOfOld[po - range.oldStart] = j - range.start;
    }
    let pending: number[] = [];
    let last = -1;
    for (const r of rows) {
      if (r.new >= 0) {
        last = r.new - range.start;
        for (const old of pending) ownerOfOld[old - range.oldStart] = last;
        pending = [];
      } else if (ownerOfOld[r.old - range.oldStart] < 0) pending.push(r.old);
    }
    for (const old of pending) ownerOfOld[old - range.oldStart] = last;
    const owned: number[][] = pieces.map(() => []);
    for (let k = 0; k < ownerOfOld.length; k++) owned[ownerOfOld[k]].push(range.oldStart + k);
    for (let k = 0; k < pieces.length; k++) pieces[k].oldLines = owned[k];
  }
  diff.layouts.set(range, (layout = { pieces, rows, ownerOfOld }));
  return layout;
}

function range2(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, k) => from + k);
}

/** Moved lines: new line -> old line, among the lines no in-order pair took. */
function findMoves(diff: LineDiff, olds: readonly number[], news: readonly number[]): Map<number, number> {
  const moves = new Map<number, number>();
  if (!olds.length || !news.length || olds.length * news.length > MAX_PAIR_SPAN * MAX_PAIR_SPAN) return moves;
  const table = new TokenTable();
  const oldCodes = olds.map((o) => table.encode(diff.old.lines[o]));
  const newCodes = news.map((j) => table.encode(diff.new.lines[j]));
  const candidates: [number, number, number][] = [];
  for (let a = 0; a < olds.length; a++) {
    for (let b = 0; b < news.length; b++) {
      const s = table.similarity(oldCodes[a], newCodes[b]);
      if (s >= MOVE_SIMILARITY) candidates.push([s, a, b]);
    }
  }
  // Best first; on a tie the nearer lines, then the upper ones, so the result does not depend on the sort.
  candidates.sort((x, y) => y[0] - x[0] || Math.abs(olds[x[1]] - news[x[2]]) - Math.abs(olds[y[1]] - news[y[2]]) || x[1] - y[1] || x[2] - y[2]);
  const usedOld = new Set<number>();
  for (const [, a, b] of candidates) {
    if (usedOld.has(a) || moves.has(news[b])) continue;
    usedOld.add(a);
    moves.set(news[b], olds[a]);
  }
  return moves;
}

/** The pieces of a range in new-line order (see the header). */
export function piecesOf(diff: LineDiff, range: ChangeRange): readonly Piece[] {
  return layoutOf(diff, range).pieces;
}

/** The piece holding new line `line` of `range` (which must hold it). */
export function pieceAt(diff: LineDiff, range: ChangeRange, line: number): Piece {
  return piecesOf(diff, range)[line - range.start];
}

/** Every piece of the diff in file order. */
export function allPieces(diff: LineDiff): Piece[] {
  return diff.ranges.flatMap((r) => piecesOf(diff, r));
}
