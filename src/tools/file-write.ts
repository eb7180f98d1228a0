import { z } from "zod";
import { tagOf } from "../core/hash.js";
import { type Op, applyEdits } from "../core/edits.js";
import { type Span, changedSpans, editsDiff, renderRegions, unifiedDiff } from "../core/render.js";
import { LineTags } from "../core/line-tags.js";
import { type TextDoc, dominantEol, eolStyle, serialize, splitText } from "../core/text.js";
import { ToolError } from "../errors.js";
import type { TextFile } from "../fs/read-text.js";
import { defineTool } from "./tool.js";

const DESCRIPTION = `Edits a text file by line tags, or creates or overwrites it with whole content; atomic, all or nothing.
Edit: pass \`hash\` (the file hash from your last file_read or file_write of it) and \`edits\`, a batch of
{type: "replace"|"insert"|"delete", startline, endline?, content?}. startline/endline are anchors from file_read's
\`N|TAG\` lines: the tag ("14C3") or, when a tag is on several lines, line:tag ("5:14C3").
- replace: lines startline..endline (endline defaults to startline) become content.
- delete: lines startline..endline are removed.
- insert: content goes after startline, or before endline (endline = line 1 inserts at the top).
All anchors refer to the file as you read it, before any edit of the batch: do not shift line numbers yourself.
content is split on \\n (one trailing \\n ignored; "" is one empty line). If its first non-blank line has no indentation
and the anchor line has, the anchor's indentation is added to every non-blank line (set auto_indent: false to write
content exactly as given). Line endings, BOM and final newline of the file are kept.
Create: omit hash and give content; the file must not exist (parent folders are created).
Overwrite: hash and content. If the file changed since your hash, the write is refused with HASH_MISMATCH, the current
hash and a diff from your version. The result has the new hash, a diff, and the changed regions with their new tags.`;

const anchor = z.string().describe('A line anchor from file_read: "TAG" (unique in the file) or "N:TAG".');
const content = z.string().describe("The new lines, separated by \\n.");
const autoIndent = z.boolean().optional().describe("Default true: indent unindented content like the anchor line. false: write content as given.");

const edit = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("replace").describe("Lines startline..endline become content."),
    startline: anchor, endline: anchor.optional(), content, auto_indent: autoIndent,
  }),
  z.strictObject({
    type: z.literal("insert").describe("content goes after startline, or before endline (both: they must be adjacent)."),
    startline: anchor.optional(), endline: anchor.optional(), content, auto_indent: autoIndent,
  }),
  z.strictObject({ type: z.literal("delete").describe("Lines startline..endline are removed."), startline: anchor, endline: anchor.optional() }),
]);

export const fileWriteTool = defineTool({
  id: "file_write",
  description: DESCRIPTION,
  params: {
    path: z.string().describe("File path, relative to the workspace root (or absolute inside it)."),
    hash: z.string().regex(/^[0-9a-fA-F]{16}$/, "must be a 16-hex-digit file hash").nullable().optional()
      .describe("The file hash your edits were made against (from file_read). Required when the file exists; omit it to create a new file."),
    edits: z.array(edit).min(1).optional().describe("Edits by line tag, all resolved against the version `hash` names, applied together or not at all."),
    content: z.string().optional().describe("The whole new text of the file (instead of edits)."),
  },
  mutating: true,
  async run(params, ctx) {
    if ((params.edits === undefined) === (params.content === undefined)) {
      throw new ToolError("INVALID_PARAMS", "edits, content: give exactly one of them (edits to change lines by tag, content to write the whole file).");
    }
    const target = await ctx.ws.paths.resolve(params.path);
    const { current, next, hash } = await ctx.ws.files.write(ctx, {
      target,
      expected: params.hash ?? undefined,
      needsExisting: params.edits !== undefined,
      produce: (current) => (current && params.edits ? editFile(target.rel, current, params.edits) : overwrite(target.rel, current, params.content!)),
    });
    const tags = new Map<number, string>();
    const tagAt = (i: number) => tags.get(i) ?? (tags.set(i, tagOf(next.doc.lines[i])), tags.get(i)!);
    return {
      path: target.rel,
      hash,
      previous_hash: current?.hash ?? null,
      total_lines: next.doc.lines.length,
      eol: eolStyle(next.doc.eols),
      ...(current ? {} : { created: true }),
      diff: next.diff,
      text: renderRegions(next.doc.lines, tagAt, next.spans),
    };
  },
});

interface NextVersion {
  doc: TextDoc;
  bytes: Buffer;
  diff: string;
  spans: Span[];
}

const hasFinalNewline = (doc: TextDoc) => doc.lines.length > 0 && doc.eols[doc.eols.length - 1] !== "";

function editFile(rel: string, current: TextFile, edits: Parameters<typeof applyEdits>[2]): NextVersion {
  const tags = new LineTags(current.bytes);
  const { doc, ops } = applyEdits(current.doc, tags, edits);
  const bytes = serialize(doc);
  const { diff } = editsDiff(
    rel,
    { lines: current.doc.lines, finalNewline: hasFinalNewline(current.doc) },
    { lines: doc.lines, finalNewline: hasFinalNewline(doc) },
    ops,
  );
  return { doc, bytes, diff, spans: ops.map((o: Op) => ({ from: o.newStart, to: o.newStart + o.added.length })) };
}

/** Whole-content write: an existing file keeps its BOM and line-ending style; the final newline is as given. */
function overwrite(rel: string, current: TextFile | undefined, content: string): NextVersion {
  let text = content.startsWith("\ufeff") ? content.slice(1) : content;
  const bom = current ? current.doc.bom : content.startsWith("\ufeff");
  if (current && eolStyle(current.doc.eols) !== "none") {
    const eol = dominantEol(current.doc.eols);
    text = text.replace(/\r?\n/g, eol);
  }
  const doc: TextDoc = { bom, ...splitText(text) };
  const bytes = serialize(doc);
  const oldText = current ? current.doc.lines.map((l, i) => l + current.doc.eols[i]).join("") : "";
  const { diff, hunks } = unifiedDiff(rel, oldText, text);
  return { doc, bytes, diff, spans: changedSpans(hunks) };
}
