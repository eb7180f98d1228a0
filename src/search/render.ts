import { tagOfBytes } from "../core/hash.js";
import type { RgLine } from "./rg-json.js";

/**
 * A search line longer than this is cut around its first match. Smaller than file_read's 2000: a search answers with up
 * to 100 lines and a model wants to see where the match is, not a page of minified code.
 */
export const MAX_SEARCH_LINE_CHARS = 500;
/** Characters kept before the first match when a long line is cut, so the match has some context on its left. */
const MATCH_LEAD_CHARS = 100;
/** A UTF-8 character is at most 4 bytes: a line of at most this many bytes is decoded whole, cheaply. */
const DECODE_WHOLE_BYTES = MAX_SEARCH_LINE_CHARS * 4;

export interface SearchLine {
  line: number;
  tag: string;
  /** The line's content, cut with a marker when longer than MAX_SEARCH_LINE_CHARS. */
  text: string;
  match: boolean;
}

export interface SearchFile {
  path: string;
  lines: SearchLine[];
}

/** A line ready for the result: its real tag over the whole line, its content cut cheaply when long. */
export function toSearchLine(rg: RgLine): { line: SearchLine; cut: boolean } {
  const { text, cut } = shownText(rg.bytes, rg.matchStart);
  return { line: { line: rg.line, tag: tagOfBytes(rg.bytes), text, match: rg.match }, cut };
}

/** The content to show: whole when short; else a window around the first match, decoded from its bytes only. */
export function shownText(bytes: Buffer, matchStart: number): { text: string; cut: boolean } {
  if (bytes.length <= DECODE_WHOLE_BYTES) {
    const whole = bytes.toString("utf8");
    if (whole.length <= MAX_SEARCH_LINE_CHARS) return { text: whole, cut: false };
    const matchChar = matchStart > 0 ? bytes.toString("utf8", 0, matchStart).length : 0;
    const from = Math.max(0, Math.min(matchChar - MATCH_LEAD_CHARS, whole.length - MAX_SEARCH_LINE_CHARS));
    return { text: marked(whole.slice(from, from + MAX_SEARCH_LINE_CHARS), from > 0, from + MAX_SEARCH_LINE_CHARS < whole.length, bytes.length), cut: true };
  }
  let from = matchStart > MATCH_LEAD_CHARS ? matchStart - MATCH_LEAD_CHARS : 0;
  while (from > 0 && (bytes[from] & 0xc0) === 0x80) from--; // start on a character boundary
  const window = bytes.toString("utf8", from, Math.min(bytes.length, from + DECODE_WHOLE_BYTES));
  let shown = window.slice(0, MAX_SEARCH_LINE_CHARS);
  const last = shown.charCodeAt(shown.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) shown = shown.slice(0, -1); // never end on half a surrogate pair
  const end = from + Buffer.byteLength(shown, "utf8");
  return { text: marked(shown, from > 0, end < bytes.length, bytes.length), cut: true };
}

function marked(shown: string, cutBefore: boolean, cutAfter: boolean, totalBytes: number): string {
  return `${cutBefore ? "… " : ""}${shown}${cutAfter ? "…" : ""} [line cut: ${totalBytes} bytes]`;
}

/** Drops what follows the last kept match once the match cap stopped rg: its after-context stays, the next match's before-context goes. */
export function trimAfterCap(files: SearchFile[], context: number): SearchFile[] {
  const last = files[files.length - 1];
  if (last) {
    let lastMatch = -1;
    for (const l of last.lines) if (l.match) lastMatch = l.line;
    last.lines = last.lines.filter((l) => l.line <= lastMatch + context);
  }
  return files.filter((f) => f.lines.some((l) => l.match));
}

/** `text` for a model: a summary line, then each file's path and its lines as `N|TAG content`, `--` between gaps. */
export function renderSearch(files: readonly SearchFile[], total: number, notes: readonly string[]): string {
  if (!files.length) return ["No matches.", ...notes].join("\n");
  const out = [`${total} matching line${total === 1 ? "" : "s"} in ${files.length} file${files.length === 1 ? "" : "s"}:`];
  for (const file of files) {
    out.push("", file.path);
    let previous = -1;
    for (const l of file.lines) {
      if (previous >= 0 && l.line > previous + 1) out.push("--");
      out.push(`${l.line}|${l.tag} ${l.text}`);
      previous = l.line;
    }
  }
  if (notes.length) out.push("", ...notes);
  return out.join("\n");
}
