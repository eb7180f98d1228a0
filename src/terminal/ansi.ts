/**
 * ANSI escape sequences out of a command's output (SPEC 11: `output`, `text` and the streamed events have none; the
 * output file keeps the raw bytes). Colours and cursor moves are noise to a model, and a title or hyperlink sequence
 * can hide text from a person reading the log. Pure: strings in, strings out.
 */

/**
 * One complete sequence, longest forms first: CSI (`ESC [ … final`, colours and cursor moves, also as the 8-bit C1
 * U+009B), OSC (`ESC ] … BEL` or `ESC ] … ESC \`: titles, hyperlinks), DCS/SOS/PM/APC strings up to `ESC \`, a
 * character-set choice (`ESC ( B`), any other two-character escape (`ESC 7`, `ESC =`, `ESC c`).
 */
const SEQUENCE = /(?:\x1b\[|\u009b)[0-?]*[ -/]*[@-~]|(?:\x1b\]|\u009d)[^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][\s\S]*?\x1b\\|\x1b[()*+\-./#%][ -~]|\x1b[ -~]/g;
/** An escape at the very end that more input could complete: held back by the stream until it does. */
const INCOMPLETE_TAIL = /(?:(?:\x1b\[|\u009b)[0-?]*[ -/]*|(?:\x1b\]|\u009d)[^\x07\x1b]*\x1b?|\x1b[PX^_](?:(?!\x1b\\)[\s\S])*|\x1b[()*+\-./#%]|\x1b)$/;
/** Held back at most this much: an OSC or DCS string that never ends is garbage, not a sequence to wait for. */
const MAX_HELD_CHARS = 4096;

/** The text without escape sequences; a stray ESC that starts none is dropped too. */
export function stripAnsi(text: string): string {
  if (!text.includes("\x1b") && !text.includes("\u009b") && !text.includes("\u009d")) return text;
  return text.replace(SEQUENCE, "").replace(/\x1b/g, "");
}

/** Where a sequence cut off at the end of `text` begins (text.length when none is), to keep it for the next chunk. */
export function incompleteTailStart(text: string): number {
  const m = INCOMPLETE_TAIL.exec(text.length > MAX_HELD_CHARS ? text.slice(-MAX_HELD_CHARS) : text);
  if (!m) return text.length;
  return text.length - m[0].length;
}

/** Strips a stream chunk by chunk: a sequence split across two chunks is removed whole, never shown half. */
export class AnsiStream {
  private held = "";

  push(chunk: string): string {
    const text = this.held + chunk;
    const cut = incompleteTailStart(text);
    this.held = text.slice(cut);
    return stripAnsi(text.slice(0, cut));
  }

  /** What is left at the end of the stream (an escape that never completed is dropped). */
  end(): string {
    const rest = stripAnsi(this.held.replace(INCOMPLETE_TAIL, ""));
    this.held = "";
    return rest;
  }

  /** Forgets a held fragment (the stream skipped ahead). */
  reset(): void {
    this.held = "";
  }
}
