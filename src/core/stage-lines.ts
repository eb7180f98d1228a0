/**
 * Line staging without patches (SPEC 8 `git_stage_lines`, `git_unstage_lines`, `git_rollback_lines`): the new content is
 * built line by line from two versions, so no `apply.whitespace`, context mismatch or hunk order can change it.
 *
 * One primitive, applyPieces: walk a diff old -> new and, per piece (line-pairs.ts), take its old or its new lines.
 * - stage:    index -> worktree, take the new (worktree) lines of the selected pieces: the index gains exactly them.
 * - unstage:  HEAD -> index, take HEAD's lines for the selected pieces: those index lines go back to HEAD's.
 * - rollback: HEAD -> worktree, take HEAD's lines for the selected pieces: those worktree lines go back to HEAD's.
 * A selection names worktree lines (1-based) and HEAD -> worktree range ids, the numbers every tool shows; a pure
 * deletion is selectable only by its range. Unstaging maps the worktree lines to the index lines they stand for, and a
 * range to its place in HEAD (the side both diffs share).
 *
 * Terminators: lines outside the chosen pieces keep their own; lines taken from the other version keep theirs too,
 * unless `eol` is given, which every one of them then gets. A line that ends up before another without a terminator
 * (it was last) gets `eol`, else its row's other terminator, else the base's majority one; the last line ends as the
 * version whose end the result is (settleEols), so only a selected last line changes the final newline.
 * Staging, the IO layer's part: for a path git does not convert, pass no `eol`: the result is the bytes `git add` of
 * the same edit made by hand stores (CRLF lines stay CRLF). For a path git converts (core.autocrlf, `.gitattributes`
 * text/eol; diff it with `cr: "ignore"`), pass `eol: "\n"`, the index's form, so the text is not a mix that
 * core.safecrlf could refuse. Write it with `git hash-object -w --path=<path> --stdin` either way: its clean filters
 * make it the blob `git add` would make. For rollback pass the worktree's terminator (HEAD's lines are in git's form).
 *
 * One limit is the line diff's, not this module's: of two equal neighbouring lines (two blank lines, two `}`), which
 * one is "the staged one" is a guess each diff makes anew, so after staging one of them the next status may show the
 * other as staged. The content is the same either way; only the line number that names it can move.
 */
import { ToolError } from "../errors.js";
import type { FileVersions } from "./file-versions.js";
import { type ChangeRange, type LineDiff, type LineSeq, regionHit } from "./line-diff.js";
import { allPieces, layoutOf } from "./line-pairs.js";
import type { Piece } from "./range-layout.js";
import { type Eol, dominantEol } from "./text.js";

export interface Selection {
  /** Worktree lines, 1-based. */
  lines?: readonly number[];
  /** Range ids of HEAD -> worktree (FileVersions.headToWorktree). */
  ranges?: readonly number[];
}

export interface Built {
  lines: string[];
  eols: ("" | Eol)[];
  /** Pieces the selection took: 0 means nothing to do (the tools answer NO_CHANGE). */
  selected: number;
  /** Every piece was taken: the result is the other version whole (stage: the worktree, unstage and rollback: HEAD). */
  complete: boolean;
  /** For each line, the line of the diff's new version with the same content, -1 for none (see applyPieces). */
  newLines: Int32Array;
}

/**
 * Old lines, with the pieces `takeNew` picks replaced by their new lines; `base` is the version unchanged lines come from.
 * `newLines` names, for each line, the new version's line with the same content (its terminator may differ), -1 for
 * none: a line taken from the new version, or one of the equal lines between ranges; so the bytes of a result that is
 * mostly the new version can be copied from that version's bytes (splicedBytes).
 */
export function applyPieces(
  diff: LineDiff,
  takeNew: (p: Piece) => boolean,
  opts: { base: "old" | "new"; eol?: Eol },
): { lines: string[]; eols: ("" | Eol)[]; newLines: Int32Array } {
  const { old, new: now } = diff;
  const lines: string[] = [];
  const eols: ("" | Eol)[] = [];
  // A row writes at most one line, and there are at most as many rows as lines on both sides.
  const newLines = new Int32Array(old.lines.length + now.lines.length);
  // Rows written without a terminator (row, old line, new line; -1 for none): the ones settleEols may have to end.
  // Kept for those rows only: a row table for every line was most of this walk's allocations.
  const bare: number[] = [];
  // Lone lines left out since the last line written: only new ones means the result ends where the old version does.
  let skippedOld = false;
  let skippedNew = false;
  const write = (fromNew: boolean, o: number, n: number) => {
    skippedOld = skippedNew = false;
    const side = fromNew ? now : old;
    const i = fromNew ? n : o;
    const foreign = fromNew === (opts.base === "old");
    const eol = foreign && opts.eol && side.eols[i] ? opts.eol : side.eols[i];
    if (eol === "") bare.push(lines.length, o, n);
    newLines[lines.length] = fromNew ? n : -1;
    lines.push(side.lines[i]);
    eols.push(eol);
  };
  const base = opts.base === "new" ? now : old;
  const equal = (o: number, n: number, to: number) => {
    // Lines between ranges are equal on both sides (up to the CR policy and eolImplied): take the base's, as they are.
    if (o < to) skippedOld = skippedNew = false;
    for (; o < to; o++, n++) {
      const i = base === now ? n : o;
      const eol = base.eols[i];
      if (eol === "") bare.push(lines.length, o, n);
      newLines[lines.length] = n;
      lines.push(base.lines[i]);
      eols.push(eol);
    }
  };
  let o = 0;
  let n = 0;
  for (const range of diff.ranges) {
    equal(o, n, range.oldStart);
    const { pieces, rows, ownerOfOld } = layoutOf(diff, range);
    const chosen = pieces.map(takeNew);
    // Each row writes its new line if its piece is chosen, its old line if not; a lone old line follows its owner.
    for (const r of rows) {
      if (r.new >= 0) {
        if (chosen[r.new - range.start]) write(true, r.old, r.new);
        else if (r.old >= 0) write(false, r.old, r.new);
        else skippedNew = true;
      } else if (!chosen[ownerOfOld[r.old - range.oldStart]]) write(false, r.old, -1);
      else skippedOld = true;
    }
    o = range.oldEnd;
    n = range.end;
  }
  equal(o, n, old.lines.length);
  const end = skippedNew && !skippedOld ? old : skippedOld && !skippedNew ? now : undefined;
  settleEols(diff, eols, bare, end, opts.eol, () => dominantEol(base.eols));
  return { lines, eols, newLines: newLines.subarray(0, lines.length) };
}

/**
 * Terminators that the mix of two versions leaves wrong. A line without one (`bare`: row, old line, new line) that is
 * no longer last gets `eol` if given, else its row's other terminator, else the base's majority one. When the result
 * ends where one version ends (`end`: the other's last lines were left out), its last line has that version's final
 * newline or lack of it, whichever version the line was written from: the final newline belongs to the end of the
 * file, not to a line.
 */
function settleEols(diff: LineDiff, eols: ("" | Eol)[], bare: readonly number[], end: LineSeq | undefined, eol: Eol | undefined, fallback: () => Eol): void {
  const { old, new: now } = diff;
  const last = eols.length - 1;
  for (let b = 0; b < bare.length; b += 3) {
    const [k, o, n] = [bare[b], bare[b + 1], bare[b + 2]];
    if (k >= last) continue;
    eols[k] = eol ?? ((o >= 0 && old.eols[o]) || (n >= 0 && now.eols[n]) || fallback());
  }
  if (last >= 0 && end && end.eols[end.eols.length - 1] === "") eols[last] = "";
}

/** A selection as 0-based worktree lines and the worktree spans of the ranges it names. */
export interface Resolved {
  lines: Set<number>;
  spans: [number, number][];
}

/** The selection checked against the file (INVALID_PARAMS names what is not there); `hw` is HEAD -> worktree. */
export function resolveSelection(hw: LineDiff, sel: Selection): Resolved {
  const n = hw.new.lines.length;
  const badLines = (sel.lines ?? []).filter((l) => !Number.isInteger(l) || l < 1 || l > n);
  if (badLines.length) {
    throw new ToolError(
      "INVALID_PARAMS",
      `lines: ${badLines.join(", ")} ${badLines.length > 1 ? "are" : "is"} not a line of the worktree file (it has ${n}); read its status again.`,
      { lines: badLines },
    );
  }
  const ranges = hw.ranges;
  const badRanges = (sel.ranges ?? []).filter((r) => !Number.isInteger(r) || r < 1 || r > ranges.length);
  if (badRanges.length) {
    throw new ToolError(
      "INVALID_PARAMS",
      `ranges: ${badRanges.join(", ")} ${badRanges.length > 1 ? "are" : "is"} not a change range of this file (it has ${ranges.length}); read its status again.`,
      { ranges: badRanges },
    );
  }
  return {
    lines: new Set((sel.lines ?? []).map((l) => l - 1)),
    spans: (sel.ranges ?? []).map((id) => [ranges[id - 1].start, ranges[id - 1].end]),
  };
}

/** Is this piece of a diff whose new side is the worktree selected? Pure deletions only through a range at their place. */
export function pickedOnWorktree(p: Piece, s: Resolved): boolean {
  if (p.newStart < p.newEnd && s.lines.has(p.newStart)) return true;
  return s.spans.some(([from, to]) => regionHit(from, to, p.newStart, p.newEnd));
}

function built(diff: LineDiff, picked: (p: Piece) => boolean, takeNew: boolean, opts: { base: "old" | "new"; eol?: Eol }): Built {
  let selected = 0;
  let total = 0;
  const out = applyPieces(
    diff,
    (p) => {
      total++;
      const yes = picked(p);
      if (yes) selected++;
      return yes === takeNew;
    },
    opts,
  );
  return { ...out, selected, complete: selected === total };
}

/**
 * The index with the selected worktree changes applied (no selection: all of them, as `git add`). A range takes the
 * index -> worktree changes in it, one that only slides into it (see slides), and one right beside it that no other
 * range lies in or beside (see claimed).
 */
export function stageLines(v: FileVersions, sel?: Selection, opts: { eol?: Eol } = {}): Built {
  const iw = v.indexToWorktree;
  if (!sel) return built(iw, () => true, true, { base: "old", eol: opts.eol });
  const s = resolveSelection(v.headToWorktree, sel);
  const whole = rangesSlidingInto(iw, (c) =>
    s.spans.some(([from, to]) => regionHit(from, to, c.start, c.end) && (c.start === c.end || (from <= c.start && c.end <= to))),
  );
  const regions = v.headToWorktree.ranges.map((r) => [r.start, r.end] as const);
  const chosen = new Set((sel.ranges ?? []).map((id) => id - 1));
  return built(iw, (p) => whole.has(p.rangeId) || pickedOnWorktree(p, s) || claimed(regions, chosen, p.newStart, p.newEnd), true, {
    base: "old",
    eol: opts.eol,
  });
}

/**
 * Is a change [s, e) of another diff (on the same side) one only the chosen regions can mean: none of them holds it,
 * but a chosen one lies right beside it and no other region lies in or beside it. Two diffs of one file can draw the
 * edge of a change differently where lines repeat (index -> worktree replaces a line that HEAD -> worktree calls
 * deleted beside an added one); selecting every range around such a change must take it.
 */
function claimed(regions: readonly (readonly [number, number])[], chosen: ReadonlySet<number>, s: number, e: number): boolean {
  // Regions are a diff's ranges, in order: only those from the first ending at or after s to the last starting at or
  // before e can be near (a binary search, not a walk over every range for every piece).
  let lo = 0;
  let hi = regions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (regions[mid][1] < s) lo = mid + 1;
    else hi = mid;
  }
  let beside = false;
  for (let k = lo; k < regions.length && regions[k][0] <= e; k++) {
    const [from, to] = regions[k];
    const near = regionHit(from, to, s, e) || s === to || e === from;
    if (!near) continue;
    if (!chosen.has(k)) return false;
    beside = true;
  }
  return beside;
}

/** Where a change of a diff could sit instead: its old lines [oldStart, oldEnd) and new lines [start, end). */
interface Place {
  oldStart: number;
  oldEnd: number;
  start: number;
  end: number;
}

/**
 * Every place a pure addition or deletion of `diff` can slide to over equal lines (as git's slides move a group),
 * itself included; a modified range stays where it is. Two diffs of one file (HEAD -> worktree and index -> worktree)
 * can put such a group on different ones of equal neighbouring lines; a selection made on one names the other's group
 * through any of its places.
 */
function slides(diff: LineDiff, r: ChangeRange): Place[] {
  if (r.kind === "modified") return [r];
  const added = r.kind === "added";
  const keys = added ? diff.newKeys : diff.oldKeys;
  const matched = added ? diff.oldOf : diff.newOf;
  const [s, e] = added ? [r.start, r.end] : [r.oldStart, r.oldEnd];
  const same = (i: number, j: number) => keys[i] === keys[j];
  const at = (k: number): Place =>
    added
      ? { oldStart: r.oldStart + k, oldEnd: r.oldStart + k, start: s + k, end: e + k }
      : { oldStart: s + k, oldEnd: e + k, start: r.start + k, end: r.start + k };
  const out: Place[] = [r];
  for (let k = 1; s - k >= 0 && matched[s - k] >= 0 && same(s - k, e - k); k++) out.push(at(-k));
  for (let k = 0; e + k < keys.length && matched[e + k] >= 0 && same(s + k, e + k); k++) out.push(at(k + 1));
  return out;
}

/** The ids of the pure additions and deletions of `diff` some place of which `fits`. */
function rangesSlidingInto(diff: LineDiff, fits: (p: Place) => boolean): Set<number> {
  const out = new Set<number>();
  for (const r of diff.ranges) if (r.kind !== "modified" && slides(diff, r).some(fits)) out.add(r.id);
  return out;
}

/** The worktree with the selected lines back to HEAD's (no selection: the whole file, as `git checkout HEAD -- path`). */
export function rollbackLines(v: FileVersions, sel?: Selection, opts: { eol?: Eol } = {}): Built {
  const s = sel && resolveSelection(v.headToWorktree, sel);
  return built(v.headToWorktree, (p) => !s || pickedOnWorktree(p, s), false, { base: "new", eol: opts.eol });
}

/**
 * The index with the selected lines back to HEAD's (no selection: the whole file, as `git reset -- path`). A worktree
 * line stands for the index lines indexLines finds; a range for every staged change in its place in HEAD, the side
 * HEAD -> worktree and HEAD -> index share (through the worktree, two equal neighbouring lines could be aligned
 * differently by the two diffs, and the range would miss the index line HEAD's line went to), sliding into it, or
 * claimed by it (see stageLines).
 */
export function unstageLines(v: FileVersions, sel?: Selection, opts: { eol?: Eol } = {}): Built {
  const hi = v.headToIndex;
  if (!sel) return built(hi, () => true, false, { base: "new", eol: opts.eol });
  const lines = indexLines(v, resolveSelection(v.headToWorktree, sel).lines);
  const hw = v.headToWorktree.ranges;
  const places = (sel.ranges ?? []).map((id) => [hw[id - 1].oldStart, hw[id - 1].oldEnd] as const);
  const headOf = headSpans(hi);
  const whole = rangesSlidingInto(hi, (c) => places.some(([a, b]) => regionHit(a, b, c.oldStart, c.oldEnd)));
  const regions = hw.map((r) => [r.oldStart, r.oldEnd] as const);
  const chosen = new Set((sel.ranges ?? []).map((id) => id - 1));
  const picked = (p: Piece) => {
    if (whole.has(p.rangeId) || (p.newStart < p.newEnd && lines.has(p.newStart))) return true;
    const [from, to] = headOf.get(p)!;
    return places.some(([a, b]) => regionHit(a, b, from, to)) || claimed(regions, chosen, from, to);
  };
  return built(hi, picked, false, { base: "new", eol: opts.eol });
}

/**
 * The index lines worktree lines stand for: a line the index has as the worktree has it, or the index lines its
 * index -> worktree piece replaces (the staged version of a line edited again).
 */
function indexLines(v: FileVersions, worktreeLines: ReadonlySet<number>): Set<number> {
  const iw = v.indexToWorktree;
  const out = new Set<number>();
  const pieceOfLine = new Map<number, Piece>();
  for (const p of allPieces(iw)) if (p.newStart < p.newEnd) pieceOfLine.set(p.newStart, p);
  for (const w of worktreeLines) {
    const eq = iw.oldOf[w];
    if (eq >= 0) out.add(eq);
    for (const i of pieceOfLine.get(w)?.oldLines ?? []) out.add(i);
  }
  return out;
}

/**
 * Where each piece of a diff sits in its old version: the old lines it owns, or, for a line with none (added), the
 * point after the old lines read before it in its range.
 */
function headSpans(diff: LineDiff): Map<Piece, readonly [number, number]> {
  const out = new Map<Piece, readonly [number, number]>();
  for (const range of diff.ranges) {
    const { pieces, rows } = layoutOf(diff, range);
    let at = range.oldStart;
    for (const r of rows) {
      if (r.old >= 0) at = r.old + 1;
      if (r.new < 0) continue;
      const p = pieces[r.new - range.start];
      out.set(p, p.oldLines.length ? [p.oldLines[0], p.oldLines[p.oldLines.length - 1] + 1] : [at, at]);
    }
    for (const p of pieces) if (!out.has(p)) out.set(p, [p.oldLines[0], p.oldLines[p.oldLines.length - 1] + 1]);
  }
  return out;
}
