import { type LineDiff, type LineIds, type LineSeq, diffLines } from "./line-diff.js";
import { type TextDoc, renderLine, splitText } from "./text.js";

/** Lines of context in unified diffs: what `git diff` and `patch` expect. */
export const DIFF_CONTEXT = 3;
/** Lines shown around each changed region in a write's `text`: enough to see where it sits, little enough to stay compact. */
export const REGION_CONTEXT = 2;
/** Separates two rendered windows that are not adjacent. */
export const GAP = "…";

/** A half-open range of 0-based line indexes. */
export interface Span {
  from: number;
  to: number;
}

/** Renders lines `from..to-1` (0-based) as `N|TAG content`. */
export function renderRange(lines: readonly string[], tagAt: (i: number) => string, from: number, to: number): string {
  const out: string[] = [];
  for (let i = from; i < to; i++) out.push(renderLine(i + 1, tagAt(i), lines[i]));
  return out.join("\n");
}

/** Rendered lines in a write's `text` at most, like file_read's largest window. */
export const MAX_REGION_LINES = 2000;

const NO_NEWLINE = "\\ No newline at end of file";

/**
 * One hunk of a unified diff, its numbers as its `@@` line prints them (1-based; on an empty side, the line before),
 * and its lines as the patch shows them: ` `, `-` or `+` and the line (a CRLF keeps its `\r`), or NO_NEWLINE.
 */
export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

/** A version's lines with its BOM at the start of the first, as git sees the bytes (SPEC 4 keeps it out of the lines). */
export function withBom(seq: LineSeq, bom: boolean): LineSeq {
  if (!bom) return seq;
  if (!seq.lines.length) return { lines: ["\ufeff"], eols: [""] };
  return { lines: [`\ufeff${seq.lines[0]}`, ...seq.lines.slice(1)], eols: seq.eols };
}

/**
 * The hunks of a line diff (line-diff.ts, git's histogram diff) with DIFF_CONTEXT lines around each change, as git
 * groups them: changes closer than two contexts share a hunk. A last line without newline is marked as git marks it,
 * and a line the diff matched although its terminator differs (a CR under cr "ignore", or a last line that now goes
 * on: line-diff.ts eolImplied) is shown removed and added, so the patch applies to the bytes.
 */
export function hunksOf(diff: LineDiff): Hunk[] {
  const { old, new: now, ranges } = diff;
  const hunks: Hunk[] = [];
  let lines: string[] = [];
  const emit = (sign: string, side: LineSeq, i: number) => {
    const eol = side.eols[i];
    lines.push(`${sign}${side.lines[i]}${eol === "\r\n" ? "\r" : ""}`);
    if (eol === "") lines.push(NO_NEWLINE);
  };
  const context = (o: number, n: number, count: number) => {
    for (let k = 0; k < count; k++) {
      if (old.eols[o + k] === now.eols[n + k]) emit(" ", old, o + k);
      else {
        emit("-", old, o + k);
        emit("+", now, n + k);
      }
    }
  };
  const start = (from: number, len: number) => (len ? from + 1 : from);
  for (let g = 0; g < ranges.length; ) {
    let e = g;
    while (e + 1 < ranges.length && ranges[e + 1].oldStart - ranges[e].oldEnd <= 2 * DIFF_CONTEXT) e++;
    const first = ranges[g];
    const last = ranges[e];
    const before = Math.min(DIFF_CONTEXT, first.oldStart - (g ? ranges[g - 1].oldEnd : 0));
    const after = Math.min(DIFF_CONTEXT, old.lines.length - last.oldEnd);
    const o0 = first.oldStart - before;
    const n0 = first.start - before;
    lines = [];
    context(o0, n0, before);
    for (let k = g; k <= e; k++) {
      const r = ranges[k];
      for (let i = r.oldStart; i < r.oldEnd; i++) emit("-", old, i);
      for (let j = r.start; j < r.end; j++) emit("+", now, j);
      if (k < e) context(r.oldEnd, r.end, ranges[k + 1].oldStart - r.oldEnd);
    }
    context(last.oldEnd, last.end, after);
    const oldLines = last.oldEnd + after - o0;
    const newLines = last.end + after - n0;
    hunks.push({ oldStart: start(o0, oldLines), oldLines, newStart: start(n0, newLines), newLines, lines });
    g = e + 1;
  }
  return hunks;
}

/** A patch of one file from its hunks ("" when there are none), headers `--- a/PATH` and `+++ b/PATH`, as git writes. */
export function patchText(path: string, hunks: readonly Hunk[]): string {
  if (!hunks.length) return "";
  const span = (from: number, len: number) => (len === 1 ? `${from}` : `${from},${len}`);
  const out = [`--- a/${path}`, `+++ b/${path}`];
  for (const h of hunks) out.push(`@@ -${span(h.oldStart, h.oldLines)} +${span(h.newStart, h.newLines)} @@`, ...h.lines);
  return `${out.join("\n")}\n`;
}

/**
 * The one unified diff producer (SPEC 5: three lines of context, a patch `git apply` accepts): file_write's `diff`,
 * HASH_MISMATCH's and file_read's diff from a caller's version, the line tools' previews. The diff is git's
 * (`git diff --histogram`, line-diff.ts), over the whole documents: a window around each edit cannot see where git's
 * slides put a change, nor the context beyond it.
 */
export function patchOf(path: string, diff: LineDiff): { diff: string; hunks: Hunk[] } {
  const hunks = hunksOf(diff);
  return { diff: patchText(path, hunks), hunks };
}

/**
 * The diff between two documents (BOM on the first line, CRLF lines keeping their `\r`). `ids`: a line table the old
 * document's lines are in already (the new one's are hashed against them), so only new lines are hashed.
 */
export function docDiff(path: string, old: TextDoc, now: TextDoc, ids?: LineIds): { diff: string; hunks: Hunk[] } {
  return patchOf(path, diffLines(withBom(old, old.bom), withBom(now, now.bom), { ids }));
}

/** A unified diff between two whole texts (a rename's preview). */
export function unifiedDiff(path: string, oldText: string, newText: string): { diff: string; hunks: Hunk[] } {
  return docDiff(path, { bom: false, ...splitText(oldText) }, { bom: false, ...splitText(newText) });
}

export const EMPTY_DOC: TextDoc = { bom: false, lines: [], eols: [] };

/**
 * A diff cut to `maxChars` (like `text`): at the last whole hunk that fits, so what is left still applies as far as it
 * goes, else at a line end. `truncated` says it was cut: a cut diff is no longer the whole change.
 */
export function capDiff(diff: string, maxChars: number): { diff: string; truncated: boolean } {
  if (diff.length <= maxChars) return { diff, truncated: false };
  const hunk = diff.lastIndexOf("\n@@ ", maxChars);
  const firstHunk = diff.indexOf("\n@@ ");
  const cut = hunk > firstHunk ? hunk + 1 : diff.lastIndexOf("\n", maxChars) + 1;
  return { diff: diff.slice(0, cut > 0 ? cut : maxChars), truncated: true };
}

/** Old line numbers from..to (1-based, inclusive) are now `by` lines further down (negative: up). */
export interface Shift {
  from: number;
  to: number;
  by: number;
}

/** Collects shift ranges: consecutive lines with the same move merge only across changed lines (a run that did not move ends one). */
function shiftCollector(): { keep: (from: number, to: number, by: number) => void; shifts: Shift[] } {
  const shifts: Shift[] = [];
  let open = false;
  const keep = (from: number, to: number, by: number) => {
    if (to < from) return;
    const last = shifts[shifts.length - 1];
    if (by === 0) open = false;
    else if (open && last.by === by) last.to = to;
    else {
      shifts.push({ from, to, by });
      open = true;
    }
  };
  return { keep, shifts };
}

/**
 * How an edit batch moved the lines it did not touch, from the edits themselves: exact where a diff is only one of
 * several alignments (a block inserted beside a line equal to its own last one), so an old `N:TAG` moved by these
 * lands on the very line the caller meant. Ops are in file order, in the old version's 0-based lines.
 */
export function opShifts(ops: readonly { start: number; removed: number; added: readonly string[] }[], oldTotal: number): Shift[] {
  const { keep, shifts } = shiftCollector();
  let next = 1; // the first old line (1-based) not yet accounted for
  let by = 0;
  for (const op of ops) {
    keep(next, op.start, by); // old lines next..op.start (1-based) come before the op untouched
    by += op.added.length - op.removed;
    next = Math.max(next, op.start + op.removed + 1);
  }
  keep(next, oldTotal, by);
  return shifts;
}

/**
 * How the lines a write left alone moved (the hunks of its diff, old to new): the runs of unchanged old lines whose
 * number changed. Two runs with the same shift are one range when only lines the write changed or removed (which `text`
 * shows) separate them. A caller holding `N:TAG` anchors from before the write can use `N+by:TAG` without reading again;
 * on a line the write changed, that anchor fails with TAG_MISMATCH, never lands on the wrong line.
 */
export function lineShifts(hunks: readonly Hunk[], oldTotal: number): Shift[] {
  const { keep, shifts } = shiftCollector();
  let next = 1; // the first old line not yet accounted for
  let by = 0;
  for (const h of hunks) {
    // The first line of each side the hunk covers (its @@ numbers name the line before on an empty side).
    let oldLine = h.oldLines ? h.oldStart : h.oldStart + 1;
    let newLine = h.newLines ? h.newStart : h.newStart + 1;
    keep(next, oldLine - 1, by);
    for (const l of h.lines) {
      if (l[0] === " ") {
        keep(oldLine, oldLine, newLine - oldLine);
        oldLine++;
        newLine++;
      } else if (l[0] === "-") oldLine++;
      else if (l[0] === "+") newLine++;
    }
    by = newLine - oldLine;
    next = oldLine;
  }
  keep(next, oldTotal, by);
  return shifts;
}

/** `text`'s line for shifts: old ranges and where they are now, at most `max` of them. */
export function renderShifts(shifts: readonly Shift[], max = MAX_RENDERED_SHIFTS): string {
  if (!shifts.length) return "";
  const range = (a: number, b: number) => (a === b ? `${a}` : `${a}-${b}`);
  const parts = shifts.slice(0, max).map((s) => `${range(s.from, s.to)} → ${range(s.from + s.by, s.to + s.by)}`);
  const more = shifts.length > max ? `, … (${shifts.length - max} more in \`shifts\`)` : "";
  return `moved: old lines ${parts.join(", ")}${more}`;
}

/** Ranges listed in `text` at most; the structured `shifts` has them all. */
export const MAX_RENDERED_SHIFTS = 20;

/** The spans of the new file a diff's hunks added to (a pure deletion is an empty span where the lines were). */
export function changedSpans(hunks: readonly Hunk[]): Span[] {
  const spans: Span[] = [];
  for (const h of hunks) {
    // newStart is 1-based, or the line before when the hunk adds nothing.
    let line = h.newLines === 0 ? h.newStart : h.newStart - 1;
    let open: Span | undefined;
    for (const l of h.lines) {
      const kind = l[0];
      if (kind === "+") {
        if (!open) spans.push((open = { from: line, to: line }));
        open.to = ++line;
      } else if (kind === "-") {
        if (!open) spans.push((open = { from: line, to: line }));
      } else if (kind === " ") {
        open = undefined;
        line++;
      }
    }
  }
  return spans;
}

/** Each changed span of the new file with REGION_CONTEXT lines around it, rendered with the new tags; windows that touch are merged. */
export function renderRegions(lines: readonly string[], tagAt: (i: number) => string, spans: readonly Span[]): string {
  const windows: Span[] = [];
  for (const s of [...spans].sort((a, b) => a.from - b.from)) {
    const w = { from: Math.max(0, s.from - REGION_CONTEXT), to: Math.min(lines.length, s.to + REGION_CONTEXT) };
    const last = windows[windows.length - 1];
    if (last && w.from <= last.to) last.to = Math.max(last.to, w.to);
    else windows.push(w);
  }
  const parts: string[] = [];
  let budget = MAX_REGION_LINES;
  for (const [k, w] of windows.entries()) {
    if (w.to <= w.from) continue;
    const to = Math.min(w.to, w.from + budget);
    parts.push(renderRange(lines, tagAt, w.from, to));
    budget -= to - w.from;
    if (budget <= 0 && (to < w.to || k < windows.length - 1)) {
      parts[parts.length - 1] += `\n… [more changes from line ${to + 1}; file_read the file to see them]`;
      break;
    }
  }
  return parts.join(`\n${GAP}\n`);
}
