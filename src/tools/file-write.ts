import { z } from "zod";
import { tagOf } from "../core/hash.js";
import { type Edit, type Op, applyEdits, editedBytes } from "../core/edits.js";
import { EMPTY_DOC, type Shift, type Span, capDiff, changedSpans, docDiff, lineShifts, opShifts, renderRegions, renderShifts } from "../core/render.js";
import { LineIds } from "../core/line-diff.js";
import { LineTags } from "../core/line-tags.js";
import { type TextDoc, dominantEol, eolStyle, plural, serialize, splitText } from "../core/text.js";
import { MAX_TEXT_CHARS } from "../core/limits.js";
import { ToolError } from "../errors.js";
import { tooLarge } from "../fs/read-text.js";
import type { CurrentFile } from "../fs/versioned-write.js";
import { defineTool } from "../dispatch/tool.js";

/**
 * Edits one batch takes at most. Anchors are resolved through a per-snapshot tag index and overlaps by one sort, so a
 * batch this size on a 100,000-line file takes tens of milliseconds; far more than a model sends in one call, and a
 * bigger rewrite is one `content` write.
 */
export const MAX_EDITS = 2000;
/** A `diff` longer than this is cut like `text` (with `diff_truncated: true`): a whole-file rewrite must not flood a reply. */
export const MAX_DIFF_CHARS = MAX_TEXT_CHARS;

const DESCRIPTION = `Edits a text file by line tags, or creates or overwrites it with whole content; atomic, all or nothing.
Edit: pass \`hash\` (the file hash from your last file_read or file_write of it) and \`edits\`, a batch of
{type: "replace"|"insert"|"delete", startline, endline?, content?}. startline/endline are anchors from file_read's
\`N|TAG\` lines: the tag ("14C3") or, when a tag is on several lines, line:tag ("5:14C3").
- replace: lines startline..endline (endline defaults to startline) become content.
- delete: lines startline..endline are removed.
- insert: content goes after startline, or before endline (endline = line 1 inserts at the top).
All anchors refer to the file as you read it, before any edit of the batch: do not shift line numbers yourself.
At most ${MAX_EDITS} edits per call.
content is split on \\n (one trailing \\n ignored; "" is one empty line). If its first non-blank line has no indentation
and the anchor line has, the anchor's indentation is added to every non-blank line (set auto_indent: false to write
content exactly as given). Line endings, BOM and final newline of the file are kept.
Create: omit hash and give content; the file must not exist (parent folders are created).
Overwrite: hash and content (also converts a binary or non-UTF-8 file). If the file changed since your hash, the write
is refused with HASH_MISMATCH, the current hash and a diff from your version. A read-only file (no write permission)
is refused with PERMISSION_DENIED unless force_readonly is true.
The result's text starts with \`file PATH · hash NEW (was OLD) · N lines\`: use NEW as the hash of your next edit. Then,
when line numbers moved, a \`moved: old lines 41-119 → 44-122, …\` line: an old anchor N:TAG in those ranges is now
(N+shift):TAG, with the same tag, so you can keep editing without reading again (\`shifts\` has them as {from, to, by}).
Then each changed region with its new tags and 2 lines of context.`;

const anchor = z.string().describe('A line anchor from file_read: "TAG" (unique in the file) or "N:TAG".');
const content = z.string().describe("The new lines, separated by \\n.");
const autoIndent = z.boolean().optional().describe("Default true: indent unindented content like the anchor line. false: write content as given.");

const edit = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("replace").describe("Lines startline..endline become content."),
    startline: anchor,
    endline: anchor.optional(),
    content,
    auto_indent: autoIndent,
  }),
  z.strictObject({
    type: z.literal("insert").describe("content goes after startline, or before endline (both: they must be adjacent)."),
    startline: anchor.optional(),
    endline: anchor.optional(),
    content,
    auto_indent: autoIndent,
  }),
  z.strictObject({ type: z.literal("delete").describe("Lines startline..endline are removed."), startline: anchor, endline: anchor.optional() }),
]);

export const fileWriteTool = defineTool({
  id: "file_write",
  description: DESCRIPTION,
  params: {
    path: z.string().describe("File path, relative to the workspace root (or absolute inside it)."),
    hash: z
      .string()
      .regex(/^[0-9a-fA-F]{16}$/, "must be a 16-hex-digit file hash")
      .nullable()
      .optional()
      .describe("The file hash your edits were made against (from file_read). Required when the file exists; omit it to create a new file."),
    edits: z
      .array(edit)
      .max(MAX_EDITS, `at most ${MAX_EDITS} edits per call; split the batch, or write the whole file with content`)
      .optional()
      .describe(`Edits by line tag, all resolved against the version \`hash\` names, applied together or not at all (1 to ${MAX_EDITS}).`),
    content: z.string().optional().describe("The whole new text of the file (instead of edits)."),
    force_readonly: z
      .boolean()
      .optional()
      .describe("true: overwrite a file that is read-only (no write permission bit) on purpose; its mode is kept. Default false: PERMISSION_DENIED."),
  },
  mutating: true,
  async run(params, ctx) {
    if (params.edits !== undefined && params.content !== undefined) {
      throw new ToolError(
        "INVALID_PARAMS",
        "edits, content: both were given; give exactly one of them (edits to change lines by tag, content to write the whole file).",
      );
    }
    if (params.edits === undefined && params.content === undefined) {
      throw new ToolError(
        "INVALID_PARAMS",
        "edits, content: neither was given; give exactly one of them (edits to change lines by tag, content to write the whole file).",
      );
    }
    if (params.edits?.length === 0) throw new ToolError("INVALID_PARAMS", "edits: the batch is empty; give at least one edit.");
    const target = await ctx.ws.paths.resolve(params.path);
    // Every character is at least one byte: content this long cannot fit, whatever it holds (checked before any work).
    if (params.content !== undefined && params.content.length > ctx.ws.maxFileBytes) throw tooLarge(target, params.content.length, ctx.ws.maxFileBytes, true);
    const edits = params.edits as Edit[] | undefined;
    let ops: Op[] | undefined;
    const { current, next, hash } = await ctx.ws.files.write(ctx, {
      target,
      expected: params.hash ?? undefined,
      needsExisting: edits !== undefined,
      acceptsRaw: edits === undefined,
      forceReadonly: params.force_readonly,
      produce: (cur) => {
        if (!edits) return overwrite(cur, params.content!);
        const applied = applyEdits(cur!.doc!, new LineTags(cur!.bytes), edits);
        ops = applied.ops;
        return { doc: applied.doc, bytes: editedBytes(cur!.bytes, cur!.doc!, applied) };
      },
    });
    // The line table of the version edited (kept from the write that made it), so only new lines are hashed.
    const ids = (current?.doc && ctx.ws.files.lineIdsOf(current.doc)) || new LineIds();
    const { diff, spans, shifts } = describeChange(target.rel, current, next.doc, ops, ids);
    if (!ctx.dryRun) ctx.ws.files.rememberDoc(target.real, hash, next.doc, ids);
    const capped = capDiff(diff, MAX_DIFF_CHARS);
    const tags = new Map<number, string>();
    const tagAt = (i: number) => tags.get(i) ?? (tags.set(i, tagOf(next.doc.lines[i])), tags.get(i)!);
    const was = current ? (current.doc ? current.hash : `${current.hash}, not UTF-8 text`) : "none";
    const header = `file ${target.rel} · hash ${hash} (was ${was}) · ${plural(next.doc.lines.length, "line")}`;
    const regions = renderRegions(next.doc.lines, tagAt, spans);
    return {
      path: target.rel,
      hash,
      previous_hash: current?.hash ?? null,
      total_lines: next.doc.lines.length,
      eol: eolStyle(next.doc.eols),
      ...(current ? {} : { created: true }),
      ...(current && !current.doc ? { converted_from: current.notText } : {}),
      diff: capped.diff,
      ...(capped.truncated ? { diff_truncated: true } : {}),
      shifts,
      text: [header, renderShifts(shifts), regions].filter(Boolean).join("\n"),
    };
  },
});

interface NextVersion {
  doc: TextDoc;
  bytes: Buffer;
}

/** The diff, the changed spans of the new file and how untouched lines moved; a non-text old version has no diff. */
function describeChange(
  rel: string,
  current: CurrentFile | undefined,
  doc: TextDoc,
  ops: Op[] | undefined,
  ids: LineIds,
): { diff: string; spans: Span[]; shifts: Shift[] } {
  if (current && !current.doc) return { diff: "", spans: [{ from: 0, to: doc.lines.length }], shifts: [] };
  const old = current?.doc ?? EMPTY_DOC;
  const { diff, hunks } = docDiff(rel, old, doc, ids);
  const spans = ops ? ops.map((o) => ({ from: o.newStart, to: o.newStart + o.added.length })) : changedSpans(hunks);
  // Edits say exactly where lines went; a whole-content write has only the diff to tell.
  const shifts = !current ? [] : ops ? opShifts(ops, old.lines.length) : lineShifts(hunks, old.lines.length);
  return { diff, spans, shifts };
}

/**
 * Whole-content write: an existing text file keeps its BOM and line-ending style, and the final newline is as given. A
 * new file, or one that was not UTF-8 text (this converts it), is written as given.
 */
function overwrite(current: CurrentFile | undefined, content: string): NextVersion {
  let text = content.startsWith("\ufeff") ? content.slice(1) : content;
  const bom = current?.doc ? current.doc.bom : content.startsWith("\ufeff");
  if (current?.doc && eolStyle(current.doc.eols) !== "none") {
    const eol = dominantEol(current.doc.eols);
    text = text.replace(/\r?\n/g, eol);
  }
  const doc: TextDoc = { bom, ...splitText(text) };
  return { doc, bytes: serialize(doc) };
}
