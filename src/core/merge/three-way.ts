import { type Eol, splitText } from "../text.js";
import { Interner, diffSequences } from "../sequence-diff.js";

/**
 * A three-way merge of base, ours and theirs, as git's xdiff does it (xmerge.c's xdl_do_merge at the "eager" level that
 * diff3 output uses): both sides are diffed against the base; a change only one side made is taken; changes of the two
 * sides that overlap or touch are a conflict, unless they are the same change of the same base lines.
 */

/** A line's terminator as splitText gives it: "" only for a last line without one. */
export type LineEnd = "" | Eol;

/** Lines as splitText gives them. */
export interface Lines {
  lines: readonly string[];
  eols: readonly LineEnd[];
}

/** One side of a conflict block: its lines, and where they start (0-based) in that side's version. */
export interface Side {
  start: number;
  lines: string[];
  eols: LineEnd[];
}

/** A conflict: the base lines both sides changed, and what each side made of them. */
export interface ConflictBlock {
  base: Side;
  ours: Side;
  theirs: Side;
}

export interface StableChunk {
  kind: "stable";
  lines: string[];
  eols: LineEnd[];
}

export interface ConflictChunk extends ConflictBlock {
  kind: "conflict";
  /** 0-based, in file order: the index into MergeResult.blocks. */
  index: number;
}

export type MergeChunk = StableChunk | ConflictChunk;

export interface MergeResult {
  /** The merged file in order: settled lines and conflicts. */
  chunks: MergeChunk[];
  /** The conflicts alone, in file order. */
  blocks: ConflictChunk[];
}

/** One hunk of a merge over sequences (xmerge.c's xdmerge_t): base [i0,i0+chg0), ours [i1,..), theirs [i2,..). */
export interface MergeHunk {
  /** 0: conflict, 1: ours changed (take ours), 2: theirs changed (take theirs). */
  mode: 0 | 1 | 2;
  i0: number;
  chg0: number;
  i1: number;
  chg1: number;
  i2: number;
  chg2: number;
}

type Seq = Int32Array;

function sameRun(x: Seq, xi: number, y: Seq, yi: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (x[xi + k] !== y[yi + k]) return false;
  return true;
}

/** The hunks of a three-way merge of interned sequences, in order; everything between them is the same in all three. */
export function mergeSequences(base: Seq, ours: Seq, theirs: Seq): MergeHunk[] {
  const d1 = diffSequences(base, ours);
  const d2 = diffSequences(base, theirs);
  const out: MergeHunk[] = [];
  // xdl_append_merge: a hunk that touches the previous one joins it, and a mixed join is a conflict.
  const append = (mode: 0 | 1 | 2, i0: number, chg0: number, i1: number, chg1: number, i2: number, chg2: number) => {
    const m = out[out.length - 1];
    if (m && (i1 <= m.i1 + m.chg1 || i2 <= m.i2 + m.chg2)) {
      if (mode !== m.mode) m.mode = 0;
      m.chg0 = i0 + chg0 - m.i0;
      m.chg1 = i1 + chg1 - m.i1;
      m.chg2 = i2 + chg2 - m.i2;
    } else out.push({ mode, i0, chg0, i1, chg1, i2, chg2 });
  };
  let p = 0;
  let q = 0;
  while (p < d1.length && q < d2.length) {
    const x = d1[p];
    const y = d2[q];
    if (x.aStart + x.aCount < y.aStart) {
      append(1, x.aStart, x.aCount, x.bStart, x.bCount, y.bStart - y.aStart + x.aStart, x.aCount);
      p++;
      continue;
    }
    if (y.aStart + y.aCount < x.aStart) {
      append(2, y.aStart, y.aCount, x.bStart - x.aStart + y.aStart, y.aCount, y.bStart, y.bCount);
      q++;
      continue;
    }
    const same = x.aStart === y.aStart && x.aCount === y.aCount && x.bCount === y.bCount && sameRun(ours, x.bStart, theirs, y.bStart, x.bCount);
    if (!same) {
      const off = x.aStart - y.aStart;
      const ffo = off + x.aCount - y.aCount;
      let i0 = x.aStart;
      let i1 = x.bStart;
      let i2 = y.bStart;
      if (off > 0) {
        i0 -= off;
        i1 -= off;
      } else i2 += off;
      let chg0 = x.aStart + x.aCount - i0;
      let chg1 = x.bStart + x.bCount - i1;
      let chg2 = y.bStart + y.bCount - i2;
      if (ffo < 0) {
        chg0 -= ffo;
        chg1 -= ffo;
      } else chg2 += ffo;
      append(0, i0, chg0, i1, chg1, i2, chg2);
    }
    const e1 = x.aStart + x.aCount;
    const e2 = y.aStart + y.aCount;
    if (e1 >= e2) q++;
    if (e2 >= e1) p++;
  }
  for (; p < d1.length; p++) {
    const x = d1[p];
    append(1, x.aStart, x.aCount, x.bStart, x.bCount, x.aStart + theirs.length - base.length, x.aCount);
  }
  for (; q < d2.length; q++) {
    const y = d2[q];
    append(2, y.aStart, y.aCount, y.aStart + ours.length - base.length, y.aCount, y.bStart, y.bCount);
  }
  return out;
}

/**
 * Walks a merge's hunks as xmerge.c's xdl_fill_merge_buffer does: `take(side, from, to)` for each settled run (ours
 * between hunks, theirs for theirs' changes) and `conflict(hunk)` for each conflict, in order.
 */
export function walkMerge(
  hunks: readonly MergeHunk[],
  oursLength: number,
  take: (side: "ours" | "theirs", from: number, to: number) => void,
  conflict: (hunk: MergeHunk) => void,
): void {
  let i = 0;
  for (const m of hunks) {
    if (m.mode === 0) {
      take("ours", i, m.i1);
      conflict(m);
    } else if (m.mode === 1) take("ours", i, m.i1 + m.chg1);
    else take("theirs", m.i2 - (m.i1 - i), m.i2 + m.chg2);
    i = m.i1 + m.chg1;
  }
  take("ours", i, oursLength);
}

const keysOf = (doc: Lines, interner: Interner) => {
  // A line's key includes its terminator, as git compares lines: a CRLF/LF change is a change.
  const out = new Int32Array(doc.lines.length);
  for (let i = 0; i < out.length; i++) out[i] = interner.id(doc.lines[i] + doc.eols[i]);
  return out;
};

function sideOf(doc: Lines, start: number, count: number): Side {
  return { start, lines: doc.lines.slice(start, start + count), eols: doc.eols.slice(start, start + count) };
}

/** The three-way merge of three versions of a file, split into lines by splitText. */
export function mergeLines(base: Lines, ours: Lines, theirs: Lines): MergeResult {
  const interner = new Interner();
  const hunks = mergeSequences(keysOf(base, interner), keysOf(ours, interner), keysOf(theirs, interner));
  const chunks: MergeChunk[] = [];
  const blocks: ConflictChunk[] = [];
  walkMerge(
    hunks,
    ours.lines.length,
    (side, from, to) => {
      if (to <= from) return;
      const doc = side === "ours" ? ours : theirs;
      let last = chunks[chunks.length - 1];
      if (last?.kind !== "stable") chunks.push((last = { kind: "stable", lines: [], eols: [] }));
      for (let k = from; k < to; k++) {
        last.lines.push(doc.lines[k]);
        last.eols.push(doc.eols[k]);
      }
    },
    (m) => {
      const block: ConflictChunk = {
        kind: "conflict",
        index: blocks.length,
        base: sideOf(base, m.i0, m.chg0),
        ours: sideOf(ours, m.i1, m.chg1),
        theirs: sideOf(theirs, m.i2, m.chg2),
      };
      blocks.push(block);
      chunks.push(block);
    },
  );
  return { chunks, blocks };
}

/** mergeLines on whole texts (tests and benchmarks; the daemon has the lines already). */
export function mergeTexts(base: string, ours: string, theirs: string): MergeResult {
  return mergeLines(splitText(base), splitText(ours), splitText(theirs));
}
