/**
 * The `text` of the line-level tools (SPEC 8): pure renderings a model can act on. Every line is the worktree's
 * `N|TAG`, with its word diff against the other version (`kept [-old-]{+new+} kept`, word-diff.ts); a deleted line is
 * `-N|TAG [-content-]` with its old number and tag. Ranges open with an `@@ range K` line giving their kind, place,
 * staging and changelist; notes in parentheses after a line say what is particular about it.
 */
import type { ChangeRange, LineDiff } from "../core/line-diff.js";
import type { DeletionPoint, FileStatus, LineState, RangeState } from "../core/line-status.js";
import { type ChangedLine, type WordDiffEntry, changedLinesOf, renderWordDiffEntry, wordDiffEntry } from "../core/word-diff.js";
import { MAX_RENDERED_LINE_CHARS } from "../core/text.js";

/** A rendered line, cut like file_read's when very long (the tag still covers the whole line). */
function cut(line: string): string {
  const limit = MAX_RENDERED_LINE_CHARS + 200; // room for the word markers around a long line's change
  return line.length > limit ? `${line.slice(0, limit)}… [line cut: ${line.length} chars]` : line;
}

/** `@@ range K · kind · lines S-E (OLD a-b)`: where a range is, in both versions. */
export function rangeHeader(r: ChangeRange, oldName: string, newName = "lines"): string {
  const where = r.kind === "deleted" ? `after line ${r.start}` : r.end - r.start === 1 ? `line ${r.start + 1}` : `${newName} ${r.start + 1}-${r.end}`;
  const old =
    r.oldEnd === r.oldStart ? `${oldName} none` : r.oldEnd - r.oldStart === 1 ? `${oldName} ${r.oldStart + 1}` : `${oldName} ${r.oldStart + 1}-${r.oldEnd}`;
  return `@@ range ${r.id} · ${r.kind} · ${where} (${old})`;
}

/** Each range of a diff with its changed lines in the wire form. */
export function rangeEntries(diff: LineDiff): { range: ChangeRange; entries: WordDiffEntry[] }[] {
  return diff.ranges.map((range) => ({ range, entries: changedLinesOf(diff, range).map((c) => wordDiffEntry(diff, c)) }));
}

/** git_word_diff's text: a header, then each range and its changed lines. */
export function wordDiffText(head: string, ranges: readonly { range: ChangeRange; entries: readonly WordDiffEntry[] }[], oldName: string): string {
  const out = [head];
  for (const { range, entries } of ranges) {
    out.push(rangeHeader(range, oldName));
    for (const e of entries) out.push(cut(renderWordDiffEntry(e)));
  }
  return out.join("\n");
}

function stagedNote(s: LineState): string {
  if (s.vs_index.same) return "staged";
  if (s.index_vs_head.same) return "not staged";
  return "staged, edited since";
}

/**
 * git_line_status's text. By default each range of HEAD -> worktree with its lines, then the lines where only the
 * index differs (staged, then reverted in the worktree). With `asked`, just those lines, each with its range.
 */
export function statusText(head: string, hw: LineDiff, status: FileStatus, asked?: readonly number[]): string {
  const out = [head];
  const byLine = new Map(status.lines.map((l) => [l.line - 1, l]));
  const deleted = new Map<number, DeletionPoint>();
  for (const d of status.deletions) for (const x of d.deleted) deleted.set(x.head_line - 1, d);
  const rangeOf = new Map<number, RangeState>(status.ranges.map((r) => [r.range, r]));
  const changed = new Map<number, { c: ChangedLine; r: ChangeRange }>();
  for (const r of hw.ranges) for (const c of changedLinesOf(hw, r)) if (c.new >= 0) changed.set(c.new, { c, r });

  const lineOut = (c: ChangedLine, r: ChangeRange, extra: string[]) => {
    const notes = [...extra];
    const rs = rangeOf.get(r.id)!;
    if (c.new >= 0) {
      const s = byLine.get(c.new);
      if (s && rs.staged === "partial") notes.push(stagedNote(s));
      if (s && rs.changelist === null && s.changelist) notes.push(`changelist ${s.changelist}`);
    } else {
      const d = deleted.get(c.old);
      if (d && rs.staged === "partial") notes.push(d.staged ? "staged" : "not staged");
      if (d && rs.changelist === null && d.changelist) notes.push(`changelist ${d.changelist}`);
    }
    const text = renderWordDiffEntry(wordDiffEntry(hw, c));
    return cut(notes.length ? `${text} (${notes.join(", ")})` : text);
  };

  if (asked) {
    for (const w of asked) {
      const hit = changed.get(w - 1);
      const s = byLine.get(w - 1);
      if (hit) out.push(lineOut(hit.c, hit.r, [`range ${hit.r.id}`, ...(rangeOf.get(hit.r.id)!.staged !== "partial" ? [stagedNote(s!)] : [])]));
      else if (s) out.push(cut(`${s.line}|${s.tag} ${s.content} (${s.vs_index.same ? "unchanged" : "unchanged from HEAD; the index has another version"})`));
    }
    for (const d of status.deletions) {
      for (const x of d.deleted)
        out.push(
          cut(
            `-${x.head_line}|${x.tag} [-${x.content}-] (deleted after line ${d.after}, ${d.staged ? "staged" : "not staged"}${d.changelist ? `, changelist ${d.changelist}` : ""})`,
          ),
        );
    }
    return out.join("\n");
  }

  for (const r of hw.ranges) {
    const rs = rangeOf.get(r.id)!;
    const list = rs.changelist !== null ? ` · changelist ${rs.changelist}` : " · changelists split";
    out.push(`${rangeHeader(r, "HEAD")} · staged ${rs.staged}${list}`);
    for (const c of changedLinesOf(hw, r)) out.push(lineOut(c, r, []));
  }
  const indexOnly = status.lines.filter((l) => l.change === "unchanged" && !l.vs_index.same);
  if (indexOnly.length) {
    out.push("@@ the index differs here, the worktree has HEAD's lines (staged, then reverted in the worktree)");
    for (const l of indexOnly) out.push(cut(`${l.line}|${l.tag} ${l.content}`));
  }
  return out.join("\n");
}

/** `staged all 2, partial 1, none 3`: a range count by staging state, for a header. */
export function stagedSummary(ranges: readonly RangeState[]): string {
  const n = { all: 0, partial: 0, none: 0 };
  for (const r of ranges) n[r.staged]++;
  return (["all", "partial", "none"] as const)
    .filter((k) => n[k])
    .map((k) => `${n[k]} ${k === "all" ? "staged" : k === "partial" ? "partly staged" : "not staged"}`)
    .join(", ");
}
