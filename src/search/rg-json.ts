/**
 * Reading ripgrep's `--json` lines. rg ignores `--max-columns` in JSON mode, so a minified file turns one match into a
 * megabyte line with thousands of submatches; those lines are read field by field instead of building the whole object.
 */

/** A JSON line longer than this is read field by field: JSON.parse would allocate every submatch just to be thrown away. */
export const LONG_JSON_LINE_CHARS = 8 * 1024;

/** One matched or context line as rg reported it. */
export interface RgLine {
  path: string;
  line: number;
  match: boolean;
  /** The line's raw bytes without its terminator (`\n` or `\r\n`): what its tag is computed over. */
  bytes: Buffer;
  /** Byte offset of the first submatch in the line, or -1 (context lines). */
  matchStart: number;
}

interface RgData {
  path: { text?: string; bytes?: string };
  lines: { text?: string; bytes?: string };
  line_number: number | null;
  submatches?: { start: number }[];
}

const MATCH_PREFIX = '{"type":"match","data":{"path":';
const CONTEXT_PREFIX = '{"type":"context","data":{"path":';
// Keys found by plain search: inside a JSON string every `"` is escaped, so `"key":` cannot occur in a value.
const LINES_KEY = ',"lines":{';
const LINE_NUMBER_KEY = '},"line_number":';
const START_KEY = '"start":';

/** Parses one rg `--json` line; undefined for the lines search does not use (begin, end, summary). */
export function parseRgLine(json: string): RgLine | undefined {
  const match = json.startsWith(MATCH_PREFIX);
  if (!match && !json.startsWith(CONTEXT_PREFIX)) return undefined;
  if (json.length > LONG_JSON_LINE_CHARS) return parseLongRgLine(json, match);
  const data = (JSON.parse(json) as { data: RgData }).data;
  return {
    path: decodeField(data.path).toString("utf8"),
    line: data.line_number ?? 0,
    match,
    bytes: stripTerminator(decodeField(data.lines)),
    matchStart: data.submatches?.[0]?.start ?? -1,
  };
}

/** The same record, read by slicing: only the line's own string is unescaped; submatches are never materialised. */
export function parseLongRgLine(json: string, match = json.startsWith(MATCH_PREFIX)): RgLine | undefined {
  const pathStart = (match ? MATCH_PREFIX : CONTEXT_PREFIX).length;
  const linesAt = json.indexOf(LINES_KEY, pathStart);
  const numberAt = json.indexOf(LINE_NUMBER_KEY, linesAt);
  if (linesAt < 0 || numberAt < 0) return undefined;
  const path = decodeField(JSON.parse(json.slice(pathStart, linesAt))).toString("utf8");
  const linesField = json.slice(linesAt + LINES_KEY.length - 1, numberAt + 1); // `{"text":"…"}` or `{"bytes":"…"}`
  const bytes = stripTerminator(decodeField(JSON.parse(linesField)));
  const line = Number.parseInt(json.slice(numberAt + LINE_NUMBER_KEY.length, numberAt + LINE_NUMBER_KEY.length + 20), 10);
  let matchStart = -1;
  if (match) {
    const at = json.indexOf(START_KEY, numberAt);
    if (at >= 0) matchStart = Number.parseInt(json.slice(at + START_KEY.length, at + START_KEY.length + 20), 10);
  }
  return { path, line: Number.isFinite(line) ? line : 0, match, bytes, matchStart };
}

/** rg's "arbitrary data": `{text}` when valid UTF-8, else `{bytes}` in base64. */
function decodeField(field: { text?: string; bytes?: string }): Buffer {
  if (typeof field.text === "string") return Buffer.from(field.text, "utf8");
  return Buffer.from(field.bytes ?? "", "base64");
}

/** SPEC 4: the terminator is `\n` with the `\r` before it; a lone `\r` is content. */
export function stripTerminator(bytes: Buffer): Buffer {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === 10) {
    end--;
    if (end > 0 && bytes[end - 1] === 13) end--;
  }
  return end === bytes.length ? bytes : bytes.subarray(0, end);
}
