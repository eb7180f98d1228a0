/**
 * A command's output cut to what a model should read (SPEC 11): at most MAX_OUTPUT_CHARS, the note included, as its
 * head and its tail with a note of what was cut between them. Pure: the IO side (output-store.ts) hands over the text
 * of the file's two ends and what lies between them.
 */
import { plural } from "../core/text.js";

/** Claude Code's limit for a command's output, which models are used to; the whole output stays in the file. */
export const MAX_OUTPUT_CHARS = 30_000;
/** Room kept for the note; the note itself is far shorter. */
const NOTE_RESERVE = 200;
/** The head gets a third, the tail the rest: a build's or test run's verdict and its errors come at the end. */
const HEAD_SHARE = 1 / 3;

export interface OutputEnds {
  /** The text from the start (the whole output when `gap` is null). */
  head: string;
  /** The text up to the end; empty when `head` is everything. */
  tail: string;
  /** What lies between head and tail in the file, unread: raw bytes and newlines (null: not counted, too large). */
  gap: { bytes: number; lines: number | null } | null;
}

export interface Capped {
  output: string;
  truncated: boolean;
}

const countLines = (s: string) => {
  let n = 0;
  for (let i = s.indexOf("\n"); i >= 0; i = s.indexOf("\n", i + 1)) n++;
  return n;
};

/** The first `budget` characters, ending at a line end when one is in the second half, never inside a surrogate pair. */
function headOf(text: string, budget: number): string {
  if (text.length <= budget) return text;
  let end = budget;
  const nl = text.lastIndexOf("\n", budget - 1);
  if (nl >= budget / 2) end = nl + 1;
  else if (/[\ud800-\udbff]/.test(text[end - 1])) end--;
  return text.slice(0, end);
}

/** The last `budget` characters, starting after a line end when one is in the first half. */
function tailOf(text: string, budget: number): string {
  if (text.length <= budget) return text;
  let start = text.length - budget;
  const nl = text.indexOf("\n", start);
  if (nl >= 0 && nl < start + budget / 2) start = nl + 1;
  else if (/[\udc00-\udfff]/.test(text[start])) start++;
  return text.slice(start);
}

const number = (n: number) => n.toLocaleString("en-US");

function size(bytes: number): string {
  if (bytes < 1024) return plural(bytes, "byte");
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The note between head and tail; `lines` null when they were not counted. */
export function cutNote(lines: number | null, bytes: number): string {
  const what = lines === null ? size(bytes) : `${number(lines)} line${lines === 1 ? "" : "s"} (${size(bytes)})`;
  return `\n… [${what} cut from the middle; output_file has the whole output] …\n`;
}

/** Head and tail within `max` characters, the note between them. */
export function capOutput(ends: OutputEnds, max = MAX_OUTPUT_CHARS): Capped {
  const { head, tail, gap } = ends;
  if (!gap && head.length + tail.length <= max) return { output: head + tail, truncated: false };
  const budget = Math.max(0, max - NOTE_RESERVE);
  const headBudget = Math.floor(budget * HEAD_SHARE);
  // The whole text in one piece: the tail is its end.
  const whole = gap === null && tail === "";
  const keptHead = headOf(head, headBudget);
  const keptTail = tailOf(whole ? head.slice(keptHead.length) : tail, budget - keptHead.length);
  const cutText = whole
    ? head.slice(keptHead.length, head.length - keptTail.length)
    : head.slice(keptHead.length) + tail.slice(0, tail.length - keptTail.length);
  const bytes = Buffer.byteLength(cutText) + (gap?.bytes ?? 0);
  const lines = gap?.lines === null ? null : countLines(cutText) + (gap?.lines ?? 0);
  return { output: keptHead + cutNote(lines, bytes) + keptTail, truncated: true };
}
