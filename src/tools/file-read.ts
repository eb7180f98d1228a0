import { z } from "zod";
import { capDiff, changedSpans, docDiff, lineShifts, renderRegions, renderShifts } from "../core/render.js";
import { type TextDoc, parseText, plural } from "../core/text.js";
import { ToolError } from "../errors.js";
import { fileHash } from "../core/hash.js";
import { readBytes, textLines } from "../fs/read-text.js";
import { WindowCache } from "../fs/window-cache.js";
import { FILE_READ_MAX_LINES as MAX_LIMIT, MAX_TEXT_CHARS } from "../core/limits.js";
import { defineTool } from "../dispatch/tool.js";

/** Lines returned when no limit is given (the design document's 150). */
export const DEFAULT_LIMIT = 150;
/** Room the header's " · lines A-B of N · next offset K" takes, at most. */
const HEADER_TAIL_CHARS = 80;

const DESCRIPTION = `Reads a UTF-8 text file as numbered, hash-tagged lines, and returns the whole file's hash.
Each line is rendered \`N|TAG content\`: N is the 1-based line number, TAG four hex digits hashed from the line's text.
To edit, pass tags (or line:tag, e.g. "5:14C3", when a tag is on several lines) to file_write as startline/endline, with
\`hash\` set to the hash this read returned; file_write refuses the edit if the file changed in between.
- offset (1-based, default 1) and limit (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}) choose a window; \`next_offset\` says
  where the next window starts, null at the end (a window of long lines may end early to fit the output: page on by it).
- lines: [3, 9, 40] returns only \`N|TAG\` for those lines (tag mode, no content): use it to refresh tags cheaply.
- since: a hash you read earlier; if the file is unchanged you get \`unchanged: true\` and no lines, otherwise a diff from
  that version plus the changed regions with their new tags (and a \`moved:\` line saying where old line numbers went),
  so you need not re-read the whole file.
\`text\` starts with a header line \`file PATH · hash HASH · lines A-B of N · next offset K\`: HASH is what file_write needs.
Lines over 2000 characters are cut in the text (their tag still covers the whole line). Binary and non-UTF-8 files are
refused (BINARY_FILE, ENCODING) with their hash: file_write with that hash and content converts them.`;

export const fileReadTool = defineTool({
  id: "file_read",
  description: DESCRIPTION,
  params: {
    path: z.string().describe("File path, relative to the workspace root (or absolute inside it)."),
    offset: z.number().int().min(1).optional().describe("First line to return, 1-based. Default 1."),
    limit: z.number().int().min(1).optional().describe(`How many lines to return. Default ${DEFAULT_LIMIT}; more than ${MAX_LIMIT} is clamped.`),
    lines: z
      .array(z.number().int().min(1))
      .min(1)
      .max(MAX_LIMIT, `at most ${MAX_LIMIT} lines per call`)
      .optional()
      .describe(`Tag mode: these line numbers' tags only, no content (at most ${MAX_LIMIT}). Not with offset/limit.`),
    since: z
      .string()
      .regex(/^[0-9a-fA-F]{16}$/, "must be a 16-hex-digit file hash")
      .optional()
      .describe("A file hash you saw earlier: answer with `unchanged: true`, or the diff since that version, instead of the lines."),
  },
  mutating: false,
  state: ({ workspace: ws }) => ({ ...ws.vfsState(), max_file_bytes: ws.maxFileBytes }),
  async run(params, ctx) {
    const { ws, sessionId } = ctx;
    if (params.lines && (params.offset !== undefined || params.limit !== undefined)) {
      throw new ToolError("INVALID_PARAMS", "lines: give either lines (tag mode) or offset/limit (a window), not both.");
    }
    const target = await ws.paths.resolve(params.path);
    // A file kept in ws.facts is read into a buffer of its own and compared there: equal bytes are the kept Buffer.
    const read = await readBytes(target, ws.maxFileBytes, () => ws.facts.known(target.realRel));
    // What is known of equal bytes is reused (the hash, the lines, their tags), and a plain window of bytes rendered
    // before is answered as then: both caches hold an entry only for bytes equal to the ones just read.
    const known = ws.facts.get(target.realRel, read.bytes);
    const plain = params.since === undefined && !params.lines;
    const key = plain ? WindowCache.key(target.rel, params.offset ?? 1, Math.min(params.limit ?? DEFAULT_LIMIT, MAX_LIMIT)) : "";
    const cached = plain ? ws.windows.get(key, known?.bytes ?? read.bytes) : undefined;
    if (cached) {
      ctx.throwIfAborted();
      ws.recordSeen(sessionId, target.realRel, cached.hash, cached.bytes);
      return { ...cached.result };
    }
    const facts = known ?? textLines({ ...read, hash: fileHash(read.bytes) }, target.rel);
    if (!known) ws.facts.put(target.realRel, facts);
    const { bytes, hash, lines } = facts;
    ctx.throwIfAborted();
    ws.recordSeen(sessionId, target.realRel, hash, bytes);
    const total = lines.length;
    const base = { path: target.rel, hash, total_lines: total, eol: lines.eolStyle() };

    if (params.since !== undefined) {
      const since = params.since.toLowerCase();
      if (since === hash) {
        return {
          ...base,
          since,
          unchanged: true,
          text: `file ${target.rel} · hash ${hash} · ${plural(total, "line")} · unchanged since ${since}: your tags are still valid`,
        };
      }
      const old = ws.history.get(since);
      const before = old ? textOrUndefined(old, target.rel) : undefined;
      if (before) {
        const { diff, hunks } = docDiff(target.rel, before, parseText(bytes, target.rel));
        const capped = capDiff(diff, MAX_TEXT_CHARS);
        const shifts = lineShifts(hunks, before.lines.length);
        const all = Array.from({ length: total }, (_, i) => lines.text(i));
        const header = `file ${target.rel} · hash ${hash} · ${plural(total, "line")} · changed since ${since}`;
        const regions = renderRegions(all, (i) => lines.at(i), changedSpans(hunks));
        return {
          ...base,
          since,
          unchanged: false,
          diff: capped.diff,
          ...(capped.truncated ? { diff_truncated: true } : {}),
          shifts,
          text: [header, renderShifts(shifts), regions].filter(Boolean).join("\n"),
        };
      }
      // The daemon no longer has that version (or it was not text): fall through to a normal read.
    }

    if (params.lines) {
      const wanted = [...new Set(params.lines)].sort((a, b) => a - b);
      const present = wanted.filter((n) => n <= total);
      const missing = wanted.filter((n) => n > total);
      const tags = present.map((n) => lines.at(n - 1));
      return {
        ...base,
        tags: present.map((line, i) => ({ line, tag: tags[i] })),
        missing,
        text: [`file ${target.rel} · hash ${hash} · ${plural(total, "line")} · tags`, ...present.map((n, i) => `${n}|${tags[i]}`)].join("\n"),
      };
    }

    const offset = params.offset ?? 1;
    if (offset > Math.max(total, 1)) {
      throw new ToolError("INVALID_PARAMS", `offset: ${offset} is past the end; ${target.rel} has ${plural(total, "line")}.`, { total_lines: total });
    }
    const limit = Math.min(params.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
    const head = `file ${target.rel} · hash ${hash}`;
    if (!total) return { ...base, start_line: 0, end_line: 0, next_offset: null, text: `${head} · empty` };
    // The window is cut to what `text` can hold, and end_line / next_offset say where it really ends (SPEC 5).
    const reserved = head.length + HEADER_TAIL_CHARS;
    const to = lines.fit(offset - 1, Math.min(total, offset - 1 + limit), MAX_TEXT_CHARS, reserved);
    const next = to < total ? to + 1 : null;
    const header = `${head} · lines ${offset}-${to} of ${total}${next ? ` · next offset ${next}` : ""}`;
    const result = {
      ...base,
      start_line: offset,
      end_line: to,
      next_offset: next,
      ...(to < Math.min(total, offset - 1 + limit) ? { truncated: true } : {}),
      text: lines.render(offset - 1, to, header),
    };
    if (plain) ws.windows.put(key, { bytes, hash, result });
    return { ...result };
  },
});

/** A version the daemon holds, as text; undefined when it was not UTF-8 text (then there is no diff to give). */
function textOrUndefined(bytes: Buffer, rel: string): TextDoc | undefined {
  try {
    return parseText(bytes, rel);
  } catch (e) {
    if (e instanceof ToolError) return undefined;
    throw e;
  }
}
