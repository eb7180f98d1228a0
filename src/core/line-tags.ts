import { JSON_TEXT_HEADROOM, JSON_TEXT_TAILROOM, JsonText, MAX_ESCAPE_GROWTH, writeJsonEscaped } from "../protocol/json-text.js";
import { type EolStyle, MAX_RENDERED_LINE_CHARS, hasBom, renderLine } from "./text.js";

// XXH32 (seed 0) in plain JS, the one line tagger. The WebAssembly hasher copies every input into its memory and
// formats the result as a string per call, which made tagging a 150-line read cost more than reading it; lines are
// short, so hashing them in place here is several times faster. Tests check it against the WebAssembly XXH32.
const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const P5 = 0x165667b1;

const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));
const round = (acc: number, input: number) => Math.imul(rotl((acc + Math.imul(input, P2)) | 0, 13), P1);

/**
 * A view of `b` for 4-byte little-endian reads: one getInt32 is one load where four byte loads and shifts were (xxh32
 * and the JSON escaper ran about twice as fast with it, measured). Make one per buffer, not per call.
 */
export function viewOf(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

/** XXH32(bytes[start..end), seed 0) as an unsigned 32-bit number; `view` is viewOf(b). */
export function xxh32(b: Uint8Array, start: number, end: number, view: DataView = viewOf(b)): number {
  const len = end - start;
  let i = start;
  let h: number;
  if (len >= 16) {
    let v1 = (P1 + P2) | 0;
    let v2 = P2 | 0;
    let v3 = 0;
    let v4 = -P1 | 0;
    for (const limit = end - 16; i <= limit; i += 16) {
      v1 = round(v1, view.getInt32(i, true));
      v2 = round(v2, view.getInt32(i + 4, true));
      v3 = round(v3, view.getInt32(i + 8, true));
      v4 = round(v4, view.getInt32(i + 12, true));
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = P5 | 0;
  }
  h = (h + len) | 0;
  for (; i + 4 <= end; i += 4) h = Math.imul(rotl((h + Math.imul(view.getInt32(i, true), P3)) | 0, 17), P4);
  for (; i < end; i++) h = Math.imul(rotl((h + Math.imul(b[i], P5)) | 0, 11), P1);
  h ^= h >>> 15;
  h = Math.imul(h, P2);
  h ^= h >>> 13;
  h = Math.imul(h, P3);
  h ^= h >>> 16;
  return h >>> 0;
}

const HEX_DIGITS = Buffer.from("0123456789ABCDEF", "latin1");
const ASCII_0 = 0x30;
const PIPE = 0x7c;
const SPACE = 0x20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LETTER_N = 0x6e;

/** Decimal digits of a positive integer. */
function digitCount(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

const HEX2 = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, "0"));

/** SPEC 4's tag of bytes[start..end): XXH32 & 0xFFFF as four upper-case hex digits. */
export function tagOfRange(b: Uint8Array, start: number, end: number, view: DataView = viewOf(b)): string {
  const h = xxh32(b, start, end, view);
  return HEX2[(h >>> 8) & 0xff] + HEX2[h & 0xff];
}

/**
 * The lines of a file's raw bytes, tagged on demand: a window of a large file hashes only its own lines, an edit by
 * `N:TAG` hashes only line N, and no line is re-encoded. A `\r` before `\n` is part of the terminator (SPEC 4).
 */
export class LineTags {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private lf = 0;
  private crlf = 0;
  private cache?: string[];
  private readonly view: DataView;

  constructor(private readonly bytes: Buffer) {
    this.view = viewOf(bytes);
    let start = hasBom(bytes) ? 3 : 0;
    while (start < bytes.length) {
      let nl = bytes.indexOf(10, start);
      if (nl === -1) nl = bytes.length;
      const cr = nl < bytes.length && nl > start && bytes[nl - 1] === 13;
      if (nl < bytes.length) cr ? this.crlf++ : this.lf++;
      this.starts.push(start);
      this.ends.push(cr ? nl - 1 : nl);
      start = nl + 1;
    }
  }

  get length(): number {
    return this.starts.length;
  }

  /** The text of 0-based line `i`, decoded on demand (the bytes must be valid UTF-8: see checkText). */
  text(i: number): string {
    return this.bytes.toString("utf8", this.starts[i], this.ends[i]);
  }

  /** Same as eolStyle() over a parsed doc's terminators. */
  eolStyle(): EolStyle {
    if (this.lf && this.crlf) return "mixed";
    return this.crlf ? "crlf" : this.lf ? "lf" : "none";
  }

  /** Tag of 0-based line `i`. */
  at(i: number): string {
    return this.cache ? this.cache[i] : tagOfRange(this.bytes, this.starts[i], this.ends[i], this.view);
  }

  /**
   * Lines [from, to) rendered as renderLine would and joined by `\n`, as a JSON string literal built straight from the
   * file's bytes (see JsonText for why). A line that may need cutting (over MAX_RENDERED_LINE_CHARS bytes, hence maybe
   * chars), or more escaping than the buffer has room for, sends the window through renderLine as a plain string.
   */
  render(from: number, to: number): JsonText | string {
    const { bytes, view, starts, ends } = this;
    if (from >= to) return "";
    let plain = 2; // the quotes
    for (let i = from; i < to; i++) {
      const len = ends[i] - starts[i];
      if (len > MAX_RENDERED_LINE_CHARS) return this.renderEach(from, to);
      plain += (i > from ? 2 : 0) + digitCount(i + 1) + 6 + len; // `\n` + "N|TAG " + line
    }
    // Room for escapes: source code's quotes and tabs rarely grow a window by a quarter; if they do, the plain path.
    const slack = (plain >> 2) + 64;
    const out = Buffer.allocUnsafe(JSON_TEXT_HEADROOM + plain + slack + MAX_ESCAPE_GROWTH + JSON_TEXT_TAILROOM);
    const outView = viewOf(out);
    let o = JSON_TEXT_HEADROOM;
    let grown = 0; // bytes escapes added so far
    out[o++] = QUOTE;
    for (let i = from; i < to; i++) {
      const start = starts[i];
      const end = ends[i];
      if (i > from) {
        out[o++] = BACKSLASH;
        out[o++] = LETTER_N;
      }
      o = writeDecimal(out, o, i + 1);
      out[o++] = PIPE;
      const tag = xxh32(bytes, start, end, view);
      out[o++] = HEX_DIGITS[(tag >>> 12) & 15];
      out[o++] = HEX_DIGITS[(tag >>> 8) & 15];
      out[o++] = HEX_DIGITS[(tag >>> 4) & 15];
      out[o++] = HEX_DIGITS[tag & 15];
      out[o++] = SPACE;
      const contentStart = o;
      o = writeJsonEscaped(bytes, view, start, end, out, outView, o, slack - grown);
      if (o === -1) return this.renderEach(from, to);
      grown += o - contentStart - (end - start);
    }
    out[o++] = QUOTE;
    return new JsonText(out, JSON_TEXT_HEADROOM, o);
  }

  private renderEach(from: number, to: number): string {
    const rendered: string[] = [];
    for (let i = from; i < to; i++) rendered.push(renderLine(i + 1, this.at(i), this.text(i)));
    return rendered.join("\n");
  }

  /** Every line's tag (computed once). */
  all(): string[] {
    if (!this.cache) this.cache = this.starts.map((s, i) => tagOfRange(this.bytes, s, this.ends[i], this.view));
    return this.cache;
  }
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
