/**
 * Changelist marks of one file (SPEC 8 changelists), and how they follow the file.
 *
 * Representation: one list name per *piece* of the HEAD -> worktree diff (line-pairs.ts), in the coordinates of the
 * worktree version the marks belong to. A piece with a worktree line is keyed by that line (0-based), so a mark is
 * per changed line and a list may own any subset of a range's lines: "a range is split at the selection's edge" is
 * nothing more than two lines of one range having different names. The HEAD lines deleted next to a line belong to
 * its piece and go with it. A pure deletion (a range with no worktree line) is keyed by its place, the boundary `p`
 * between worktree lines p-1 and p (SPEC's `after`). So:
 * - marking lines sets the names of their pieces;
 * - a list's selection for staging or committing is its lines plus the ranges of its pure deletions (selectionOf),
 *   exactly the Selection stage-lines.ts takes;
 * - following an edit A -> B (remapMarks) carries every name through the line diff of A and B: a changed line of B
 *   that the edit left alone keeps the name its line had in A, so marks below an insertion just move down; a line
 *   the edit wrote takes the name of the nearest marked line (or deletion) the edit replaced or touched; a changed
 *   line still unnamed takes the nearest name in its HEAD -> B range (a new change inside a marked range joins it);
 *   anything else joins the active list. A change reverted in B is no longer a piece, so its mark is gone.
 * Marks are complete after remapMarks or settleMarks: every piece of the diff they were settled on has a name.
 */
import { ToolError } from "../errors.js";
import { type ChangeRange, type LineDiff, rangeAtLine } from "./line-diff.js";
import { allPieces, piecesOf } from "./line-pairs.js";
import type { Piece } from "./range-layout.js";
import { type Selection, pickedOnWorktree, resolveSelection } from "./stage-lines.js";

export interface FileMarks {
  /** 0-based worktree line -> list, for the pieces with a worktree line. */
  readonly lines: ReadonlyMap<number, string>;
  /** Boundary p (0..lines) -> list, for pure deletions. */
  readonly deletions: ReadonlyMap<number, string>;
}

export const NO_MARKS: FileMarks = { lines: new Map(), deletions: new Map() };

/** The list of a piece under these marks, if any. */
export function listOfPiece(marks: FileMarks, p: Piece): string | undefined {
  return p.newStart < p.newEnd ? marks.lines.get(p.newStart) : marks.deletions.get(p.newStart);
}

/** Marks of A carried to B: `edit` is the line diff A -> B (omit it when the worktree did not change, HEAD did), `next` HEAD -> B. */
export function remapMarks(marks: FileMarks, edit: LineDiff | undefined, next: LineDiff, active: string): FileMarks {
  const lines = new Map<number, string>();
  const deletions = new Map<number, string>();
  const near = edit ? new Nearby(marks, edit) : undefined;
  const open = new Set<number>(); // ranges with pieces still unnamed
  for (const p of allPieces(next)) {
    let list: string | undefined;
    if (p.newStart < p.newEnd) {
      const j = p.newStart;
      const i = edit ? edit.oldOf[j] : j;
      if (i >= 0) list = marks.lines.get(i);
      else list = near!.forLine(j);
    } else {
      const q = p.newStart;
      const c = edit?.ranges.find((r) => r.start <= q && q <= r.end);
      if (c) list = near!.forPoint(c, q);
      else list = marks.deletions.get(edit ? pointInOld(edit, q) : q);
    }
    if (list === undefined) open.add(p.rangeId);
    else set(lines, deletions, p, list);
  }
  for (const id of open) fillFromNeighbours(next, next.ranges[id - 1], lines, deletions, active);
  return { lines, deletions };
}

/** Marks made complete for `diff` without an edit: names of lines no longer changed dropped, new changes placed. */
export function settleMarks(marks: FileMarks, diff: LineDiff, active: string): FileMarks {
  return remapMarks(marks, undefined, diff, active);
}

function set(lines: Map<number, string>, deletions: Map<number, string>, p: Piece, list: string): void {
  if (p.newStart < p.newEnd) lines.set(p.newStart, list);
  else deletions.set(p.newStart, list);
}

/** The boundary of A that boundary q of B stands for, when no change of the edit touches q. */
function pointInOld(edit: LineDiff, q: number): number {
  if (q > 0) return edit.oldOf[q - 1] + 1;
  return 0;
}

/** Unnamed pieces of a range take the name of the nearest named piece of it (ties: the one above), else `active`. */
function fillFromNeighbours(diff: LineDiff, range: ChangeRange, lines: Map<number, string>, deletions: Map<number, string>, active: string): void {
  const pieces = piecesOf(diff, range);
  const named = pieces.map((p) => listOfPiece({ lines, deletions }, p));
  const above: number[] = [];
  for (let k = 0, last = -1; k < pieces.length; k++) {
    if (named[k] !== undefined) last = k;
    above.push(last);
  }
  for (let k = pieces.length - 1, below = -1; k >= 0; k--) {
    if (named[k] !== undefined) {
      below = k;
      continue;
    }
    const up = above[k];
    const pick = up < 0 ? below : below < 0 || k - up <= below - k ? up : below;
    set(lines, deletions, pieces[k], pick < 0 ? active : named[pick]!);
  }
}

/**
 * Names near each change of an edit: the marked lines of A it replaced plus the one line above and below it, and the
 * deletion marks on or inside its edges, by position (a line at its middle, x + 0.5; a boundary at itself).
 */
class Nearby {
  private readonly cache = new Map<ChangeRange, { pos: number[]; list: string[] }>();

  constructor(
    private readonly marks: FileMarks,
    private readonly edit: LineDiff,
  ) {}

  private candidates(c: ChangeRange): { pos: number[]; list: string[] } {
    let found = this.cache.get(c);
    if (found) return found;
    const pos: number[] = [];
    const list: string[] = [];
    for (let x = c.oldStart - 1; x <= c.oldEnd; x++) {
      const d = this.marks.deletions.get(x);
      if (d !== undefined && x >= c.oldStart) {
        pos.push(x);
        list.push(d);
      }
      const l = this.marks.lines.get(x);
      if (l !== undefined) {
        pos.push(x + 0.5);
        list.push(l);
      }
    }
    this.cache.set(c, (found = { pos, list }));
    return found;
  }

  /** B's line j, which change c of the edit wrote. */
  forLine(j: number): string | undefined {
    const c = rangeAtLine(this.edit, j)!;
    // The place in A that j stands for: proportionally through the change.
    const t = (j + 0.5 - c.start) / (c.end - c.start);
    return this.pick(c, c.oldStart + t * (c.oldEnd - c.oldStart));
  }

  /** B's boundary q, on or inside change c of the edit. */
  forPoint(c: ChangeRange, q: number): string | undefined {
    const t = c.end > c.start ? (q - c.start) / (c.end - c.start) : 0;
    return this.pick(c, c.oldStart + t * (c.oldEnd - c.oldStart));
  }

  private pick(c: ChangeRange, at: number): string | undefined {
    const { pos, list } = this.candidates(c);
    if (!pos.length) return undefined;
    // pos is ascending: the first candidate at or after `at`, against the one before it (which wins a tie).
    let lo = 0;
    let hi = pos.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pos[mid] < at) lo = mid + 1;
      else hi = mid;
    }
    if (lo === pos.length) return list[lo - 1];
    if (lo === 0) return list[0];
    return at - pos[lo - 1] <= pos[lo] - at ? list[lo - 1] : list[lo];
  }
}

/**
 * Marks with the selected changes moved to `list` (SPEC 8 `git_changelist_mark`); `diff` is HEAD -> worktree and the
 * marks must be settled on it. Selecting no changed line is NO_CHANGE.
 */
export function markSelection(marks: FileMarks, diff: LineDiff, sel: Selection, list: string): { marks: FileMarks; marked: number } {
  const s = resolveSelection(diff, sel);
  const lines = new Map(marks.lines);
  const deletions = new Map(marks.deletions);
  let marked = 0;
  for (const p of allPieces(diff)) {
    if (!pickedOnWorktree(p, s)) continue;
    set(lines, deletions, p, list);
    marked++;
  }
  if (!marked) {
    throw new ToolError(
      "NO_CHANGE",
      "The selection holds no changed line; pick lines or ranges that git_line_status shows as changed (a pure deletion only by its range).",
    );
  }
  return { marks: { lines, deletions }, marked };
}

/** What `list` owns in this file, as a Selection for stage-lines.ts: its lines (1-based) and its pure deletions' ranges. */
export function selectionOf(marks: FileMarks, diff: LineDiff, list: string): Selection & { lines: number[]; ranges: number[] } {
  const lines: number[] = [];
  const ranges: number[] = [];
  for (const p of allPieces(diff)) {
    if (listOfPiece(marks, p) !== list) continue;
    if (p.newStart < p.newEnd) lines.push(p.newStart + 1);
    else ranges.push(p.rangeId);
  }
  return { lines, ranges };
}

/** A range's lists as runs in order: `{list, start, end}` over its pieces (0-based worktree lines, end exclusive). */
export function listsOfRange(marks: FileMarks, diff: LineDiff, range: ChangeRange): { list: string | null; start: number; end: number }[] {
  const runs: { list: string | null; start: number; end: number }[] = [];
  for (const p of piecesOf(diff, range)) {
    const list = listOfPiece(marks, p) ?? null;
    const last = runs[runs.length - 1];
    if (last && last.list === list) last.end = p.newEnd;
    else runs.push({ list, start: p.newStart, end: p.newEnd });
  }
  return runs;
}

/** Every name `from` replaced by `to` (renaming a list; deleting one moves its changes to `default`). */
export function renameList(marks: FileMarks, from: string, to: string): FileMarks {
  const swap = (m: ReadonlyMap<number, string>) => new Map([...m].map(([k, v]) => [k, v === from ? to : v] as const));
  return { lines: swap(marks.lines), deletions: swap(marks.deletions) };
}

/** A compact, JSON-safe form for `.git/tool-layer/`: runs of consecutive lines with one name. */
export interface MarksJson {
  lines: [from: number, to: number, list: string][];
  deletions: [at: number, list: string][];
}

export function encodeMarks(marks: FileMarks): MarksJson {
  const lines: MarksJson["lines"] = [];
  for (const [line, list] of [...marks.lines].sort((a, b) => a[0] - b[0])) {
    const last = lines[lines.length - 1];
    if (last && last[1] === line && last[2] === list) last[1] = line + 1;
    else lines.push([line, line + 1, list]);
  }
  return { lines, deletions: [...marks.deletions].sort((a, b) => a[0] - b[0]) };
}

export function decodeMarks(json: MarksJson): FileMarks {
  const lines = new Map<number, string>();
  for (const [from, to, list] of json.lines) for (let l = from; l < to; l++) lines.set(l, list);
  return { lines, deletions: new Map(json.deletions) };
}
