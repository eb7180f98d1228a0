import { type RenderedWindow, digitCount, viewOf } from "../../core/line-tags.js";
import { MAX_RENDERED_LINE_CHARS } from "../../core/text.js";

/**
 * A string value already encoded as a JSON string literal: UTF-8 bytes, quotes included. file_read builds its text from
 * the file's bytes straight into this form, so the text is never decoded to a string, scanned again by JSON.stringify
 * and encoded back to UTF-8 for stdout: that round trip was about a fifth of the daemon's CPU on a 150-line read.
 * LineWriter writes the bytes as the response line's `text` (head, literal and tail in one writev, never copied into
 * one buffer: a literal is shared by every answer of its window, see WindowCache); anything else that meets one sees
 * the plain string (toJSON).
 */
export class JsonText {
  /** `buffer[start..end)` is the literal. */
  constructor(
    private readonly buffer: Buffer,
    private readonly start: number,
    private readonly end: number,
  ) {}

  get literal(): Buffer {
    return this.buffer.subarray(this.start, this.end);
  }

  /** The string this literal encodes. */
  toString(): string {
    return JSON.parse(this.literal.toString("utf8")) as string;
  }

  toJSON(): string {
    return this.toString();
  }

  /** An upper bound of the string's length in UTF-16 units: each unit takes at least one byte of the literal. */
  get maxLength(): number {
    return this.end - this.start - 2;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * How JSON.stringify writes each byte below 0x80, as bytes: "" for a byte it keeps. Bytes from 0x80 up are kept too
 * (the input is valid UTF-8, which has no lone surrogates, the only non-ASCII JSON.stringify escapes).
 */
const ESCAPES: Uint8Array[] = Array.from({ length: 0x80 }, (_, b) => {
  if (b === QUOTE) return Buffer.from('\\"', "latin1");
  if (b === BACKSLASH) return Buffer.from("\\\\", "latin1");
  if (b >= 0x20) return Buffer.alloc(0);
  const short: Record<number, string> = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r" };
  return Buffer.from(short[b] ?? `\\u${b.toString(16).padStart(4, "0")}`, "latin1");
});
/** 1 where ESCAPES has an escape: the per-byte test of the copy loop. */
const NEEDS_ESCAPE = Uint8Array.from({ length: 256 }, (_, b) => (b < 0x80 && ESCAPES[b].length ? 1 : 0));

/** Most bytes 4 escaped bytes grow by (`\u001f` for each), past the point the -1 check is made. */
export const MAX_ESCAPE_GROWTH = 20;

/**
 * Writes src[start..end) (valid UTF-8) JSON-escaped exactly as JSON.stringify would, at out[o]. Returns the offset after
 * it, or -1 once escapes would make it more than `room` bytes longer than the input (the caller then takes the plain
 * string path); `out` must have room for the input, `room` and MAX_ESCAPE_GROWTH more. srcView and outView are
 * DataViews of src and out: most 4-byte groups need no escape and are tested and copied as one number.
 */
export function writeJsonEscaped(
  src: Uint8Array,
  srcView: DataView,
  start: number,
  end: number,
  out: Uint8Array,
  outView: DataView,
  o: number,
  room: number,
): number {
  const limit = o - start + room; // the largest `o - j` may be, j being the next input byte
  let j = start;
  for (const last = end - 4; j <= last; ) {
    const v = srcView.getInt32(j, true);
    if (!needsEscape4(v)) {
      outView.setInt32(o, v, true);
      o += 4;
      j += 4;
      continue;
    }
    o = escapeBytes(src, j, j + 4, out, o);
    j += 4;
    if (o - j > limit) return -1;
  }
  o = escapeBytes(src, j, end, out, o);
  return o - end > limit ? -1 : o;
}

/**
 * Whether any of the 4 bytes in `v` is below 0x20, a quote or a backslash. The classic SWAR "has a zero byte" test,
 * (x - 0x01..) & ~x & 0x80..: a borrow can only flag a byte above one that really matched, so the yes/no is exact, and
 * bytes from 0x80 up never match.
 */
function needsEscape4(v: number): boolean {
  const quote = v ^ 0x22222222;
  const backslash = v ^ 0x5c5c5c5c;
  return ((((v - 0x20202020) & ~v) | ((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash)) & 0x80808080) !== 0;
}

/** The byte-at-a-time escaper, for groups with an escape and the last bytes of a line. */
function escapeBytes(src: Uint8Array, start: number, end: number, out: Uint8Array, o: number): number {
  for (let j = start; j < end; j++) {
    const b = src[j];
    if (NEEDS_ESCAPE[b] === 0) {
      out[o++] = b;
      continue;
    }
    const esc = ESCAPES[b];
    for (let k = 0; k < esc.length; k++) out[o++] = esc[k];
  }
  return o;
}

const HEX_DIGITS = Buffer.from("0123456789ABCDEF", "latin1");
const ASCII_0 = 0x30;
const PIPE = 0x7c;
const SPACE = 0x20;
const LETTER_N = 0x6e;

/**
 * A RenderedWindow as a JSON string literal built straight from the file's bytes, exactly JSON.stringify(window.toString()).
 * undefined when a line may need cutting (over MAX_RENDERED_LINE_CHARS bytes, hence maybe chars) or needs more escaping
 * than the buffer has room for: then the plain string takes the ordinary path.
 */
export function windowLiteral(window: RenderedWindow): JsonText | undefined {
  const { lines, from, to } = window;
  const { bytes, view, starts, ends } = lines;
  const header = window.header ? Buffer.from(JSON.stringify(window.header).slice(1, -1)) : undefined;
  let plain = 2 + (header ? header.length + 2 : 0); // the quotes, the header and its `\n`
  for (let i = from; i < to; i++) {
    const len = ends[i] - starts[i];
    if (len > MAX_RENDERED_LINE_CHARS) return undefined;
    plain += (i > from ? 2 : 0) + digitCount(i + 1) + 6 + len; // `\n` + "N|TAG " + line
  }
  // Room for escapes: source code's quotes and tabs rarely grow a window by a quarter; if they do, the plain path.
  const slack = (plain >> 2) + 64;
  const out = Buffer.allocUnsafe(plain + slack + MAX_ESCAPE_GROWTH);
  const outView = viewOf(out);
  let o = 0;
  let grown = 0; // bytes escapes added so far
  out[o++] = QUOTE;
  if (header) {
    o += header.copy(out, o);
    if (to > from) {
      out[o++] = BACKSLASH;
      out[o++] = LETTER_N;
    }
  }
  for (let i = from; i < to; i++) {
    const start = starts[i];
    const end = ends[i];
    if (i > from) {
      out[o++] = BACKSLASH;
      out[o++] = LETTER_N;
    }
    o = writeDecimal(out, o, i + 1);
    out[o++] = PIPE;
    const tag = lines.tagValue(i);
    out[o++] = HEX_DIGITS[(tag >>> 12) & 15];
    out[o++] = HEX_DIGITS[(tag >>> 8) & 15];
    out[o++] = HEX_DIGITS[(tag >>> 4) & 15];
    out[o++] = HEX_DIGITS[tag & 15];
    out[o++] = SPACE;
    const contentStart = o;
    o = writeJsonEscaped(bytes, view, start, end, out, outView, o, slack - grown);
    if (o === -1) return undefined;
    grown += o - contentStart - (end - start);
  }
  out[o++] = QUOTE;
  return new JsonText(out, 0, o);
}

/** Writes `n` (a positive integer) in decimal at out[o], returning the offset after it. */
function writeDecimal(out: Buffer, o: number, n: number): number {
  const end = o + digitCount(n);
  for (let p = end - 1; p >= o; p--) {
    out[p] = ASCII_0 + (n % 10);
    n = Math.floor(n / 10);
  }
  return end;
}

/**
 * windowLiteral once per window: file_read answers a window of unchanged bytes with the same RenderedWindow (see
 * WindowCache), so its literal is made for the first answer and shared by the next ones. Held weakly: a window the
 * cache dropped takes its literal with it.
 */
export class WindowLiterals {
  private readonly made = new WeakMap<RenderedWindow, JsonText | null>();

  of(window: RenderedWindow): JsonText | undefined {
    let literal = this.made.get(window);
    if (literal === undefined) {
      literal = windowLiteral(window) ?? null;
      this.made.set(window, literal);
    }
    return literal ?? undefined;
  }
}
