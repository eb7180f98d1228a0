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

/** Decimal digits of a positive integer. */
export function digitCount(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

/** Marks a computed tag in LineTags' tagBits (a tag is 16 bits). */
const TAG_KNOWN = 0x10000;

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
  /** Where each line's content starts and ends in `bytes` (the terminator excluded). */
  readonly starts: number[] = [];
  readonly ends: number[] = [];
  private lf = 0;
  private crlf = 0;
  private cache?: string[];
  /** Each line's tag as a number once computed (the low 16 bits of its XXH32, plus TAG_KNOWN), 0 before. */
  private tagBits?: Int32Array;
  readonly view: DataView;

  constructor(readonly bytes: Buffer) {
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
    if (this.cache) return this.cache[i];
    const tag = this.tagValue(i);
    return HEX2[tag >>> 8] + HEX2[tag & 0xff];
  }

  /** Tag of 0-based line `i` as a number (XXH32 & 0xFFFF); once each after rememberTags(). */
  tagValue(i: number): number {
    const bits = this.tagBits;
    if (!bits) return xxh32(this.bytes, this.starts[i], this.ends[i], this.view) & 0xffff;
    const known = bits[i];
    if (known !== 0) return known & 0xffff;
    const tag = xxh32(this.bytes, this.starts[i], this.ends[i], this.view) & 0xffff;
    bits[i] = tag | TAG_KNOWN;
    return tag;
  }

  /**
   * Keeps each tag once computed: for LineTags kept for later reads of the same bytes (fs/window-cache.ts's
   * FileFactsCache), which never change, so each line is hashed once. Not for a read's own (the array costs more).
   */
  rememberTags(): void {
    this.tagBits ??= new Int32Array(this.starts.length);
  }

  /** Lines [from, to) rendered as renderLine would, after `header` (a line of its own when given). */
  render(from: number, to: number, header = ""): RenderedWindow {
    return new RenderedWindow(this, from, Math.max(from, to), header);
  }

  /**
   * The end (exclusive) of the longest window from `from`, at most `to`, whose rendering fits in `maxChars` UTF-16 units
   * (after `reserved` for a header): a line's UTF-16 length is at most its UTF-8 byte count, so the bound is safe.
   */
  fit(from: number, to: number, maxChars: number, reserved = 0): number {
    let used = reserved;
    for (let i = from; i < to; i++) {
      const len = Math.min(this.ends[i] - this.starts[i], MAX_RENDERED_LINE_CHARS + CUT_NOTE_CHARS);
      used += (i > from || reserved ? 1 : 0) + digitCount(i + 1) + 6 + len;
      if (used > maxChars) return Math.max(i, from + 1); // one line always fits: it is cut at MAX_RENDERED_LINE_CHARS
    }
    return to;
  }

  /** Every line's tag (computed once). */
  all(): string[] {
    if (!this.cache) this.cache = this.starts.map((_, i) => this.at(i));
    return this.cache;
  }
}

/** Room the cut marker of renderLine takes ("… [line cut: N chars]"). */
const CUT_NOTE_CHARS = 40;

/**
 * A window of a file's lines, rendered on demand: `toString()` is the plain text a model reads. The JSON-lines transport
 * encodes it straight from the file's bytes into a JSON string literal instead (protocol/jsonl/json-text.ts), which saves
 * decoding, escaping and re-encoding the text; nothing here knows about that wire.
 */
export class RenderedWindow {
  constructor(
    readonly lines: LineTags,
    readonly from: number,
    readonly to: number,
    readonly header: string,
  ) {}

  toString(): string {
    const rendered: string[] = this.header ? [this.header] : [];
    for (let i = this.from; i < this.to; i++) rendered.push(renderLine(i + 1, this.lines.at(i), this.lines.text(i)));
    return rendered.join("\n");
  }

  toJSON(): string {
    return this.toString();
  }
}
