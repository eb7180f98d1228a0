/**
 * What JetBrains' gutter shows for each line (SPEC 8 `git_line_status`), merged from the three diffs of FileVersions.
 *
 * For a worktree line: `change` against HEAD (`modified` when it has a partner in HEAD -> worktree, `added` when not);
 * `vs_index.same` when the index has the line as the worktree has it (the change is staged), with the word diff
 * against the index's version of it otherwise; `index_vs_head.same` when the index has HEAD's line there (nothing is
 * staged), with the word diff HEAD -> index otherwise. "The index's version" of a worktree line is the index line
 * equal to it, or its partner in index -> worktree; "HEAD's line there" is its equal or partner in HEAD -> worktree.
 * HEAD lines missing from the worktree are deletion points, `staged` when the index no longer has any of them either.
 * A range is staged `all` when index -> worktree changes nothing inside it, `none` when HEAD -> index changes nothing
 * inside it, else `partial` (some lines staged, or the index holds a third version).
 */
import { ToolError } from "../errors.js";
import type { FileMarks } from "./changelist-marks.js";
import { listOfPiece, listsOfRange } from "./changelist-marks.js";
import type { FileVersions } from "./file-versions.js";
import { tagOf } from "./hash.js";
import { type ChangeRange, type LineDiff, type RangeJson, rangeAtLine, rangeJson, regionHit } from "./line-diff.js";
import { allPieces, layoutOf, pieceAt } from "./line-pairs.js";
import { type WordPart, wordDiff } from "./word-diff.js";
import { plural } from "./text.js";

export interface LineState {
  /** 1-based worktree line. */
  line: number;
  tag: string;
  content: string;
  change: "added" | "modified" | "unchanged";
  /** Set when the line differs from its HEAD partner only in its terminator (CR or the final newline). */
  eol_changed?: true;
  vs_index: { same: boolean; words: WordPart[] };
  index_vs_head: { same: boolean; words: WordPart[] };
  changelist: string | null;
}

export interface DeletionPoint {
  /** The worktree line the deleted HEAD lines sat after, 0 for the top. */
  after: number;
  deleted: { head_line: number; tag: string; content: string }[];
  staged: boolean;
  changelist: string | null;
}

export type RangeState = RangeJson & {
  staged: "all" | "none" | "partial";
  changelist: string | null;
};

export interface FileStatus {
  lines: LineState[];
  deletions: DeletionPoint[];
  ranges: RangeState[];
}

/** The worktree lines that differ from HEAD or from the index, 0-based, ascending. */
export function interestingLines(v: FileVersions): number[] {
  const out = new Set<number>();
  for (const d of [v.headToWorktree, v.indexToWorktree]) for (const r of d.ranges) for (let l = r.start; l < r.end; l++) out.add(l);
  return [...out].sort((a, b) => a - b);
}

/** INVALID_PARAMS unless every line asked (1-based) is a line of a worktree file of `n` lines. */
export function requireLines(lines: readonly number[], n: number): void {
  const bad = lines.filter((l) => !Number.isInteger(l) || l < 1 || l > n);
  if (bad.length) throw new ToolError("INVALID_PARAMS", `lines: ${bad.join(", ")} not in the worktree file (it has ${plural(n, "line")}).`, { lines: bad });
}

/** The other side's line a new line stands for: its equal, else its partner in a range, else -1. */
function counterpart(d: LineDiff, line: number): number {
  const eq = d.oldOf[line];
  if (eq >= 0) return eq;
  const r = rangeAtLine(d, line);
  return r ? pieceAt(d, r, line).partner : -1;
}

/**
 * `lines` (1-based) limits the lines reported, and the deletion points to those next to them; by default every line
 * that differs from HEAD or the index and every deletion point. `marks` (settled on HEAD -> worktree) fills `changelist`.
 */
export function lineStatus(v: FileVersions, opts: { lines?: readonly number[]; marks?: FileMarks } = {}): FileStatus {
  const hw = v.headToWorktree;
  const iw = v.indexToWorktree;
  const hi = v.headToIndex;
  const n = v.worktree.lines.length;
  let asked: number[];
  if (opts.lines) {
    requireLines(opts.lines, n);
    asked = [...new Set(opts.lines.map((l) => l - 1))].sort((a, b) => a - b);
  } else asked = interestingLines(v);

  const lines: LineState[] = asked.map((w) => {
    const content = v.worktree.lines[w];
    const h = counterpart(hw, w);
    const i = counterpart(iw, w);
    const changed = hw.oldOf[w] < 0;
    const sameAsIndex = iw.oldOf[w] >= 0;
    const indexIsHead =
      (h < 0 && i < 0) || (h >= 0 && i >= 0 && (hi.newOf[h] === i || (v.head.lines[h] === v.index.lines[i] && v.head.eols[h] === v.index.eols[i])));
    const state: LineState = {
      line: w + 1,
      tag: tagOf(content),
      content,
      change: !changed ? "unchanged" : h >= 0 ? "modified" : "added",
      vs_index: { same: sameAsIndex, words: sameAsIndex || i < 0 ? [] : wordDiff(v.index.lines[i], content) },
      index_vs_head: { same: indexIsHead, words: indexIsHead || h < 0 || i < 0 ? [] : wordDiff(v.head.lines[h], v.index.lines[i]) },
      changelist: changed && opts.marks ? (opts.marks.lines.get(w) ?? null) : null,
    };
    if (changed && h >= 0 && v.head.lines[h] === content && v.head.eols[h] !== v.worktree.eols[w]) state.eol_changed = true;
    return state;
  });

  const near = opts.lines ? new Set(asked.flatMap((w) => [w, w + 1])) : undefined;
  const deletions = deletionPoints(v, opts.marks).filter((d) => !near || near.has(d.after));
  return { lines, deletions, ranges: rangeStates(v, opts.marks) };
}

/** The `ranges` of lineStatus alone: what the tools that change lines answer with (no line's words, no deletion). */
export function rangeStates(v: FileVersions, marks?: FileMarks): RangeState[] {
  const hits = { unstaged: new Hits(v.indexToWorktree.ranges, "new"), staged: new Hits(v.headToIndex.ranges, "old") };
  return v.headToWorktree.ranges.map((r) => rangeState(v, r, marks, hits));
}

/**
 * Whether a region of lines is hit by a change of a diff (regionHit), for regions asked about in ascending order: the
 * changes before a region cannot hit the next one, so a walk over every range of HEAD -> worktree is one pass over the
 * other diff's changes, not one per range.
 */
class Hits {
  private first = 0;

  constructor(
    private readonly changes: readonly ChangeRange[],
    private readonly side: "old" | "new",
  ) {}

  /** Does a change hit [from, to)? `from` never goes down from one question to the next. */
  any(from: number, to: number): boolean {
    const c = this.changes;
    const old = this.side === "old";
    // A change ending before `from` hits neither this region nor a later one (regionHit needs its end at `from` or after).
    while (this.first < c.length && (old ? c[this.first].oldEnd : c[this.first].end) < from) this.first++;
    for (let k = this.first; k < c.length; k++) {
      const [s, e] = old ? [c[k].oldStart, c[k].oldEnd] : [c[k].start, c[k].end];
      if (s > to) return false;
      if (regionHit(from, to, s, e)) return true;
    }
    return false;
  }
}

/** HEAD lines deleted in the worktree, grouped by the place they sat, as deletion points. */
function deletionPoints(v: FileVersions, marks: FileMarks | undefined): DeletionPoint[] {
  const hw = v.headToWorktree;
  // HEAD lines the index still has in some form: equal, or paired with an index line.
  const kept = new Set<number>();
  for (const p of allPieces(v.headToIndex)) if (p.partner >= 0) kept.add(p.partner);
  const stillInIndex = (h: number) => v.headToIndex.newOf[h] >= 0 || kept.has(h);
  const points: DeletionPoint[] = [];
  for (const range of hw.ranges) {
    const { pieces, rows, ownerOfOld } = layoutOf(hw, range);
    let after = range.start;
    for (const r of rows) {
      if (r.new >= 0) {
        after = r.new + 1;
        continue;
      }
      const owner = pieces[ownerOfOld[r.old - range.oldStart]];
      if (owner.partner === r.old) continue; // a moved line, not a deletion
      const h = r.old;
      const staged = !stillInIndex(h);
      const changelist = (marks && listOfPiece(marks, owner)) ?? null;
      const line = { head_line: h + 1, tag: tagOf(v.head.lines[h]), content: v.head.lines[h] };
      const last = points[points.length - 1];
      if (last && last.after === after && last.changelist === changelist && last.staged === staged && last.deleted[last.deleted.length - 1].head_line === h)
        last.deleted.push(line);
      else points.push({ after, deleted: [line], staged, changelist });
    }
  }
  return points;
}

function rangeState(v: FileVersions, r: ChangeRange, marks: FileMarks | undefined, hits: { unstaged: Hits; staged: Hits }): RangeState {
  const unstaged = hits.unstaged.any(r.start, r.end);
  const staged = hits.staged.any(r.oldStart, r.oldEnd);
  // Set on rangeJson's object, in the order a spread would give: no copy per range.
  const state = rangeJson(r) as RangeState;
  state.staged = !unstaged ? "all" : !staged ? "none" : "partial";
  state.changelist = null;
  if (marks) {
    const runs = listsOfRange(marks, v.headToWorktree, r);
    if (runs.length === 1) state.changelist = runs[0].list;
    else state.changelist_parts = runs.map((x) => ({ changelist: x.list, start: x.start + 1, end: x.end }));
  }
  return state;
}
