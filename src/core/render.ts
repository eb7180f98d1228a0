import { FILE_HEADERS_ONLY, type StructuredPatchHunk, formatPatch, structuredPatch } from "diff";
import type { Op } from "./edits.js";
import { type TextDoc, renderLine } from "./text.js";

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

/**
 * Myers' diff costs about (old + new lines) × edits; two unrelated 40,000-line versions would take minutes. Past this
 * budget (~25 ms) the diff is one hunk replacing the region: still a correct patch, just not a minimal one.
 */
export const MAX_DIFF_COST = 5_000_000;
/** Rendered lines in a write's `text` at most, like file_read's largest window. */
export const MAX_REGION_LINES = 2000;

const NO_NEWLINE = "\\ No newline at end of file";

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.length && !text.endsWith("\n") ? n + 1 : n;
}

function sideLines(text: string, sign: string): string[] {
  if (!text) return [];
  const lines = (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n").map((l) => sign + l);
  if (!text.endsWith("\n")) lines.push(NO_NEWLINE);
  return lines;
}

/** Hunks from old to new text, bounded by MAX_DIFF_COST (then one hunk replaces everything). */
export function diffHunks(oldText: string, newText: string): StructuredPatchHunk[] {
  const oldN = countLines(oldText);
  const newN = countLines(newText);
  const maxEditLength = Math.max(1, Math.floor(MAX_DIFF_COST / (oldN + newN + 1)));
  const patch = structuredPatch("", "", oldText, newText, undefined, undefined, { context: DIFF_CONTEXT, maxEditLength });
  if (patch) return patch.hunks;
  return [{
    oldStart: oldN ? 1 : 0,
    oldLines: oldN,
    newStart: newN ? 1 : 0,
    newLines: newN,
    lines: [...sideLines(oldText, "-"), ...sideLines(newText, "+")],
  }];
}

function patchText(path: string, hunks: StructuredPatchHunk[]): string {
  if (!hunks.length) return "";
  return formatPatch({ oldFileName: `a/${path}`, newFileName: `b/${path}`, oldHeader: undefined, newHeader: undefined, hunks }, FILE_HEADERS_ONLY);
}

/** A unified diff between two whole texts (a caller's old version and the file now, or a whole-content overwrite). */
export function unifiedDiff(path: string, oldText: string, newText: string): { diff: string; hunks: StructuredPatchHunk[] } {
  const hunks = diffHunks(oldText, newText);
  return { diff: patchText(path, hunks), hunks };
}

/** A document's text as a diff sees it: lines [from, to) with their own terminators (a CRLF keeps its \r), the BOM on line 1. */
export function docText(doc: TextDoc, from = 0, to = doc.lines.length): string {
  let out = from === 0 && doc.bom ? "\ufeff" : "";
  for (let i = from; i < to; i++) out += doc.lines[i] + doc.eols[i];
  return out;
}

export const EMPTY_DOC: TextDoc = { bom: false, lines: [], eols: [] };

/**
 * The one diff of a write (SPEC 5: a patch `git apply` accepts, so a CRLF file's lines keep their \r and a BOM is on
 * line 1): the whole documents for a whole-content write, or, given the batch's ops, only windows around the edits (a
 * 10-edit batch on a 10,000-line file diffs a few dozen lines, not the whole file). Windows further apart than two
 * contexts never share a hunk.
 */
export function docDiff(path: string, old: TextDoc, now: TextDoc, ops?: readonly Op[]): { diff: string; hunks: StructuredPatchHunk[] } {
  if (!ops) return unifiedDiff(path, docText(old), docText(now));
  const hunks: StructuredPatchHunk[] = [];
  let i = 0;
  while (i < ops.length) {
    let j = i;
    while (j + 1 < ops.length && ops[j + 1].start - (ops[j].start + ops[j].removed) <= 2 * DIFF_CONTEXT) j++;
    const oldFrom = Math.max(0, ops[i].start - DIFF_CONTEXT);
    const oldTo = Math.min(old.lines.length, ops[j].start + ops[j].removed + DIFF_CONTEXT);
    const newFrom = oldFrom + (ops[i].newStart - ops[i].start);
    const shift = ops[j].newStart + ops[j].added.length - (ops[j].start + ops[j].removed);
    const newTo = Math.min(now.lines.length, oldTo + shift);
    for (const h of diffHunks(docText(old, oldFrom, oldTo), docText(now, newFrom, newTo))) {
      hunks.push({ ...h, oldStart: h.oldStart + oldFrom, newStart: h.newStart + newFrom });
    }
    i = j + 1;
  }
  return { diff: patchText(path, hunks), hunks };
}

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
export function lineShifts(hunks: readonly StructuredPatchHunk[], oldTotal: number): Shift[] {
  const { keep, shifts } = shiftCollector();
  let next = 1; // the first old line not yet accounted for
  let by = 0;
  for (const h of hunks) {
    keep(next, h.oldStart - 1, by);
    let oldLine = h.oldStart;
    let newLine = h.newStart;
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
export function changedSpans(hunks: readonly StructuredPatchHunk[]): Span[] {
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
