/**
 * A search line longer than this is cut around its first match. Smaller than file_read's 2000: a search answers with up
 * to 100 lines and a model wants to see where the match is, not a page of minified code.
 */
export const MAX_SEARCH_LINE_CHARS = 500;
/** Characters kept before the first match when a long line is cut, so the match has some context on its left. */
const MATCH_LEAD_CHARS = 100;
/** A UTF-8 character is at most 4 bytes: a line of at most this many bytes is decoded whole, cheaply. */
export const DECODE_WHOLE_BYTES = MAX_SEARCH_LINE_CHARS * 4;
/** What a line that is not valid UTF-8 says after its content (its invalid bytes are shown as U+FFFD). */
export const NOT_UTF8_MARKER = " [not UTF-8: invalid bytes shown as \ufffd]";

export interface SearchLine {
  line: number;
  /** SPEC 4's tag over the whole line, from the same bytes as the file's hash; null when the file is over the size limit. */
  tag: string | null;
  /** The line's content, cut with a marker when longer than MAX_SEARCH_LINE_CHARS. */
  text: string;
  match: boolean;
  /** The line is not valid UTF-8 (its text shows U+FFFD for the invalid bytes, and says so). */
  not_utf8?: true;
}

export interface SearchFile {
  path: string;
  /** SPEC 4's hash of the bytes the lines were taken from: what file_write's `hash` needs. Null over the size limit. */
  hash: string | null;
  lines: SearchLine[];
  /** Set when hash is null: the file's size, over the file tools' limit. */
  size?: number;
  /** The file is not valid UTF-8: file_read refuses it (ENCODING); a whole-content write with the hash replaces it. */
  not_utf8?: true;
}

/** The content to show: whole when short; else a window around the first match, decoded from its bytes only. */
export function shownText(bytes: Buffer, matchStart: number): { text: string; cut: boolean } {
  if (bytes.length <= DECODE_WHOLE_BYTES) {
    const whole = bytes.toString("utf8");
    if (whole.length <= MAX_SEARCH_LINE_CHARS) return { text: whole, cut: false };
    const matchChar = matchStart > 0 ? bytes.toString("utf8", 0, matchStart).length : 0;
    const from = Math.max(0, Math.min(matchChar - MATCH_LEAD_CHARS, whole.length - MAX_SEARCH_LINE_CHARS));
    return {
      text: marked(whole.slice(from, from + MAX_SEARCH_LINE_CHARS), from > 0, from + MAX_SEARCH_LINE_CHARS < whole.length, `${bytes.length} bytes`),
      cut: true,
    };
  }
  let from = matchStart > MATCH_LEAD_CHARS ? matchStart - MATCH_LEAD_CHARS : 0;
  while (from > 0 && (bytes[from] & 0xc0) === 0x80) from--; // start on a character boundary
  const shown = window(bytes, from);
  const end = from + Buffer.byteLength(shown, "utf8");
  return { text: marked(shown, from > 0, end < bytes.length, `${bytes.length} bytes`), cut: true };
}

/** The start of a line whose end was not read (a file over the size limit): `known` bytes of it, at least. */
export function shownStart(bytes: Buffer): string {
  return marked(window(bytes, 0), false, true, `over ${bytes.length} bytes`);
}

function window(bytes: Buffer, from: number): string {
  let shown = bytes.toString("utf8", from, Math.min(bytes.length, from + DECODE_WHOLE_BYTES)).slice(0, MAX_SEARCH_LINE_CHARS);
  const last = shown.charCodeAt(shown.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) shown = shown.slice(0, -1); // never end on half a surrogate pair
  return shown;
}

function marked(shown: string, cutBefore: boolean, cutAfter: boolean, size: string): string {
  return `${cutBefore ? "… " : ""}${shown}${cutAfter ? "…" : ""} [line cut: ${size}]`;
}

/**
 * The group header of a file in `text`: like file_read's (SPEC 5), it starts with `file`, so it is never taken for a
 * rendered line, and carries the hash file_write needs.
 */
export function fileHeader(file: SearchFile, maxFileBytes: number): string {
  if (file.hash === null) {
    return `file ${file.path} · hash none: ${file.size} bytes, over the ${maxFileBytes}-byte limit of the file tools (no tags; search is the way to read it)`;
  }
  const encoding = file.not_utf8 ? " · not UTF-8: file_read refuses it; a whole-content file_write with this hash replaces it" : "";
  return `file ${file.path} · hash ${file.hash}${encoding}`;
}

/** Tagless lines (a file over the limit) keep the `N|TAG content` layout with a placeholder no anchor can be taken for. */
const NO_TAG = "----";

/** `text` for a model: a summary line, then each file's header and its lines as `N|TAG content`, `--` between gaps. */
export function renderSearch(files: readonly SearchFile[], total: number, notes: readonly string[], maxFileBytes: number): string {
  if (!files.length) return ["No matches.", ...notes].join("\n");
  const out = [`${total} matching line${total === 1 ? "" : "s"} in ${files.length} file${files.length === 1 ? "" : "s"}:`];
  for (const file of files) {
    out.push("", fileHeader(file, maxFileBytes));
    let previous = -1;
    for (const l of file.lines) {
      if (previous >= 0 && l.line > previous + 1) out.push("--");
      out.push(`${l.line}|${l.tag ?? NO_TAG} ${l.text}`);
      previous = l.line;
    }
  }
  if (notes.length) out.push("", ...notes);
  return out.join("\n");
}
