import { ToolError } from "../errors.js";
import { TagLookup, type TagSource, parseAnchor, resolveAnchor } from "./anchors.js";
import { type Eol, type TextDoc, dominantEol } from "./text.js";

/** One edit of a file_write batch, as the caller sent it (SPEC 5). */
export interface Edit {
  type: "replace" | "insert" | "delete";
  startline?: string;
  endline?: string;
  content?: string;
  auto_indent?: boolean;
}

/** A resolved edit: remove `removed` lines at 0-based `start` of the old file, put `added` there. */
export interface Op {
  /** Position in the caller's batch. */
  index: number;
  start: number;
  removed: number;
  added: string[];
  /** 0-based line of the new file where `added` begins (filled in by applyEdits). */
  newStart: number;
}

export interface Applied {
  doc: TextDoc;
  /** In file order. */
  ops: Op[];
}

/** Splits edit content per SPEC 5: on `\n`, one trailing `\n` ignored, `""` is one empty line; a `\r` before `\n` is dropped (the file decides line endings). */
export function splitContent(content: string): string[] {
  const lines = content.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
}

export function indentOf(line: string): string {
  return /^[ \t]*/.exec(line)![0];
}

const isBlank = (line: string) => line.trim() === "";

/**
 * SPEC 5 auto-indent: when the first non-blank content line has no indentation and the anchor line has some, every
 * non-blank content line gets the anchor's indentation prefixed, exactly as written there, so relative indentation is kept.
 */
export function autoIndent(lines: string[], anchorLine: string | undefined): string[] {
  if (anchorLine === undefined) return lines;
  const indent = indentOf(anchorLine);
  const first = lines.find((l) => !isBlank(l));
  if (!indent || first === undefined || indentOf(first) !== "") return lines;
  return lines.map((l) => (isBlank(l) ? l : indent + l));
}

/** Turns each edit into an Op against the one snapshot `doc` (whose line tags `tags` gives, possibly lazily); nothing is applied yet. */
export function resolveEdits(doc: TextDoc, tags: readonly string[] | TagSource, edits: readonly Edit[]): Op[] {
  const n = doc.lines.length;
  const lookup = new TagLookup(tags);
  return edits.map((edit, index) => {
    const field = (name: string) => `edits[${index}].${name}`;
    const at = (name: "startline" | "endline") => {
      const raw = edit[name];
      return raw === undefined ? undefined : resolveAnchor(parseAnchor(raw, field(name)), lookup, field(name));
    };
    const start = at("startline");
    const end = at("endline");
    const lines = edit.content === undefined ? [] : splitContent(edit.content);
    const indentFrom = (line: number | undefined) => (edit.auto_indent === false || line === undefined ? lines : autoIndent(lines, doc.lines[line - 1]));

    if (edit.type === "insert") {
      let after: number;
      if (start !== undefined && end !== undefined) {
        if (end !== start + 1) {
          throw new ToolError(
            "INVALID_PARAMS",
            `${field("endline")}: an insert between startline (line ${start}) and endline (line ${end}) needs adjacent lines; give only one of them.`,
          );
        }
        after = start;
      } else if (start !== undefined) after = start;
      else if (end !== undefined) after = end - 1;
      else if (n === 0) after = 0;
      else {
        throw new ToolError(
          "INVALID_PARAMS",
          `edits[${index}]: an insert needs startline (insert after it) or endline (insert before it); only an empty file takes neither.`,
        );
      }
      return { index, start: after, removed: 0, added: indentFrom(start ?? end), newStart: 0 };
    }

    if (start === undefined) throw new ToolError("INVALID_PARAMS", `${field("startline")}: required for ${edit.type}.`);
    const last = end ?? start;
    if (last < start) {
      throw new ToolError(
        "INVALID_PARAMS",
        `${field("endline")}: line ${last} comes before startline (line ${start}); a range runs from startline down to endline.`,
      );
    }
    const added = edit.type === "replace" ? indentFrom(start) : [];
    return { index, start: start - 1, removed: last - start + 1, added, newStart: 0 };
  });
}

/**
 * Ranges may not overlap, and an insert may not fall strictly inside a replaced or deleted range (SPEC 5). Sorted once,
 * so a batch of N edits costs N log N, not N^2 (the batch size is bounded too: MAX_EDITS in file-write.ts).
 */
export function checkOverlap(ops: readonly Op[]): void {
  const lines = (o: Op) => (o.removed === 1 ? `line ${o.start + 1}` : `lines ${o.start + 1}-${o.start + o.removed}`);
  const describe = (o: Op) => (o.removed > 0 ? `edits[${o.index}] (${lines(o)})` : `edits[${o.index}] (insert after line ${o.start})`);
  const clash = (o: Op, r: Op) => {
    throw new ToolError("OVERLAP", `${describe(o)} overlaps ${describe(r)}; merge them into one edit or make the ranges disjoint. Nothing was changed.`, {
      edits: [Math.min(o.index, r.index), Math.max(o.index, r.index)],
    });
  };
  const ranges = ops.filter((o) => o.removed > 0).sort((a, b) => a.start - b.start || a.index - b.index);
  // Sorted by start, a range overlaps an earlier one exactly when it starts before the furthest end seen so far.
  let reach: Op | undefined;
  for (const r of ranges) {
    if (reach && r.start < reach.start + reach.removed) {
      const [first, later] = reach.index < r.index ? [reach, r] : [r, reach];
      clash(later, first);
    }
    if (!reach || r.start + r.removed > reach.start + reach.removed) reach = r;
  }
  // The ranges are disjoint now: an insert point is strictly inside one only if it is inside the last one starting before it.
  for (const o of ops) {
    if (o.removed > 0) continue;
    let lo = 0;
    let hi = ranges.length - 1;
    let before: Op | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (ranges[mid].start < o.start) {
        before = ranges[mid];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (before && o.start < before.start + before.removed) clash(o, before);
  }
}

/** Applies a batch all-or-nothing: every anchor resolved against `doc` first, then the edits in file order. */
export function applyEdits(doc: TextDoc, tags: readonly string[] | TagSource, edits: readonly Edit[]): Applied {
  const ops = resolveEdits(doc, tags, edits);
  checkOverlap(ops);
  // File order; at one point inserts come before a range that starts there, and inserts keep batch order.
  ops.sort((a, b) => a.start - b.start || Number(a.removed > 0) - Number(b.removed > 0) || a.index - b.index);

  const eol: Eol = dominantEol(doc.eols);
  const finalNewline = doc.lines.length === 0 || doc.eols[doc.eols.length - 1] !== "";
  const lines: string[] = [];
  const eols: ("" | Eol)[] = [];
  let cursor = 0;
  const copyTo = (end: number) => {
    for (; cursor < end; cursor++) {
      lines.push(doc.lines[cursor]);
      eols.push(doc.eols[cursor]);
    }
  };
  for (const op of ops) {
    copyTo(op.start);
    op.newStart = lines.length;
    for (const l of op.added) {
      lines.push(l);
      eols.push(eol);
    }
    cursor = op.start + op.removed;
  }
  copyTo(doc.lines.length);

  // A former last line without a terminator that is no longer last gets one; the last line keeps the file's choice.
  for (let i = 0; i < eols.length - 1; i++) if (eols[i] === "") eols[i] = eol;
  if (eols.length) eols[eols.length - 1] = finalNewline ? eols[eols.length - 1] || eol : "";
  return { doc: { bom: doc.bom, lines, eols }, ops };
}

const EOL_BYTES: Record<"" | Eol, Buffer> = { "": Buffer.alloc(0), "\n": Buffer.from("\n"), "\r\n": Buffer.from("\r\n") };

/**
 * The bytes of `applied.doc`, made from `oldBytes`, the bytes `old` was parsed from: runs of untouched lines are copied
 * as they are and only the added lines are encoded, so a small batch on a big file costs its edits rather than an
 * encoding of the whole file. The same bytes as `serialize(applied.doc)` (a property test holds them equal). A copied
 * run's last terminator is written from the new document, since the former last line may gain one and the new last
 * line may lose it.
 */
export function editedBytes(oldBytes: Buffer, old: TextDoc, applied: Applied): Buffer {
  const n = old.lines.length;
  // starts[i]: the byte offset of old line i; starts[n]: the end of the file.
  const starts = new Array<number>(n + 1);
  starts[0] = old.bom ? 3 : 0;
  for (let i = 0; i < n; i++) starts[i + 1] = old.eols[i] === "" ? oldBytes.length : oldBytes.indexOf(10, starts[i]) + 1;
  const doc = applied.doc;
  const pieces: Buffer[] = [];
  if (doc.bom) pieces.push(oldBytes.subarray(0, 3));
  let cursor = 0;
  let at = 0;
  const copy = (end: number) => {
    if (end <= cursor) return;
    at += end - cursor;
    pieces.push(oldBytes.subarray(starts[cursor], starts[end] - old.eols[end - 1].length), EOL_BYTES[doc.eols[at - 1]]);
    cursor = end;
  };
  for (const op of applied.ops) {
    copy(op.start);
    let added = "";
    for (let k = 0; k < op.added.length; k++) added += doc.lines[at + k] + doc.eols[at + k];
    if (added) pieces.push(Buffer.from(added, "utf8"));
    at += op.added.length;
    cursor = op.start + op.removed;
  }
  copy(n);
  return Buffer.concat(pieces);
}
