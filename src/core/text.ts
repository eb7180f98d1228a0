import { ToolError } from "../errors.js";

/** Bytes scanned for a NUL to call a file binary (SPEC 4; git and ripgrep use the same heuristic). */
export const BINARY_SNIFF_BYTES = 8 * 1024;
/** A longer line is cut in rendered `text`; its tag still covers the whole line (SPEC 5). */
export const MAX_RENDERED_LINE_CHARS = 2000;

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export type Eol = "\n" | "\r\n";

/** A text file split per SPEC 4: `lines[i]` has no terminator, `eols[i]` is its terminator ("" only for a last line without one). */
export interface TextDoc {
  bom: boolean;
  lines: string[];
  eols: ("" | Eol)[];
}

export function isBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

export function hasBom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === UTF8_BOM[0] && bytes[1] === UTF8_BOM[1] && bytes[2] === UTF8_BOM[2];
}

/** Decodes strictly: binary and invalid UTF-8 are refused, never replaced. */
export function decodeText(bytes: Uint8Array, path: string): { bom: boolean; text: string } {
  if (isBinary(bytes)) throw new ToolError("BINARY_FILE", `${path} is a binary file (it has a NUL byte); the file tools only handle UTF-8 text.`);
  const bom = hasBom(bytes);
  try {
    return { bom, text: strictUtf8.decode(bom ? bytes.subarray(3) : bytes) };
  } catch {
    throw new ToolError("ENCODING", `${path} is not valid UTF-8; the file tools refuse to read or rewrite it rather than corrupt it.`);
  }
}

export function splitText(text: string): Pick<TextDoc, "lines" | "eols"> {
  const lines: string[] = [];
  const eols: ("" | Eol)[] = [];
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf("\n", start);
    if (nl === -1) {
      lines.push(text.slice(start));
      eols.push("");
      break;
    }
    const cr = nl > start && text.charCodeAt(nl - 1) === 13;
    lines.push(text.slice(start, cr ? nl - 1 : nl));
    eols.push(cr ? "\r\n" : "\n");
    start = nl + 1;
  }
  return { lines, eols };
}

export function parseText(bytes: Uint8Array, path: string): TextDoc {
  const { bom, text } = decodeText(bytes, path);
  return { bom, ...splitText(text) };
}

export function serialize(doc: TextDoc): Buffer {
  let out = doc.bom ? "\ufeff" : "";
  for (let i = 0; i < doc.lines.length; i++) out += doc.lines[i] + doc.eols[i];
  return Buffer.from(out, "utf8");
}

const BOM_BYTES = Buffer.from(UTF8_BOM);

/** A version's lines as splicedBytes reads them (a TextDoc, or a LineSeq with its BOM). */
interface Lines {
  bom: boolean;
  readonly lines: readonly string[];
  readonly eols: readonly ("" | Eol)[];
}

/** Byte offsets of each line of `ref` in `bytes`, the bytes it was parsed from, and one past the end last. */
export function lineStarts(ref: Lines, bytes: Buffer): Int32Array {
  const n = ref.lines.length;
  const starts = new Int32Array(n + 1);
  starts[0] = ref.bom ? UTF8_BOM.length : 0;
  for (let i = 0; i < n; i++) starts[i + 1] = ref.eols[i] === "" ? bytes.length : bytes.indexOf(10, starts[i]) + 1;
  return starts;
}

/**
 * The bytes of `doc`, as serialize makes them, when most of its lines are lines of `ref` (a version parsed from
 * `refBytes`, its lineStarts `starts`): each run of lines that `from` maps to consecutive lines of `ref` with the same
 * terminator is copied from `refBytes`, and only the others are encoded. `from[k]` is the line of `ref` whose content line k of `doc` has, -1 for
 * none: the caller vouches for the content (it is not compared), the terminators are compared here. A property test
 * holds the bytes equal to serialize's.
 */
export function splicedBytes(doc: Lines, from: Int32Array, ref: Lines, refBytes: Buffer, starts = lineStarts(ref, refBytes)): Buffer {
  const pieces: Buffer[] = doc.bom ? [BOM_BYTES] : [];
  // At most one of the two is pending: lines of ref [runStart, runEnd) to copy, or text to encode.
  let runStart = -1;
  let runEnd = -1;
  let text = "";
  for (let k = 0; k < doc.lines.length; k++) {
    const j = from[k];
    if (j >= 0 && doc.eols[k] === ref.eols[j]) {
      if (j === runEnd) {
        runEnd++;
        continue;
      }
      if (runStart >= 0) pieces.push(refBytes.subarray(starts[runStart], starts[runEnd]));
      else if (text) pieces.push(Buffer.from(text, "utf8"));
      text = "";
      runStart = j;
      runEnd = j + 1;
      continue;
    }
    if (runStart >= 0) pieces.push(refBytes.subarray(starts[runStart], starts[runEnd]));
    runStart = runEnd = -1;
    text += doc.lines[k] + doc.eols[k];
  }
  if (runStart >= 0) pieces.push(refBytes.subarray(starts[runStart], starts[runEnd]));
  else if (text) pieces.push(Buffer.from(text, "utf8"));
  return Buffer.concat(pieces);
}

export type EolStyle = "lf" | "crlf" | "mixed" | "none";

function countEols(eols: readonly string[]): { lf: number; crlf: number } {
  let lf = 0;
  let crlf = 0;
  for (const e of eols) {
    if (e === "\n") lf++;
    else if (e === "\r\n") crlf++;
  }
  return { lf, crlf };
}

export function eolStyle(eols: readonly string[]): EolStyle {
  const { lf, crlf } = countEols(eols);
  if (lf && crlf) return "mixed";
  return crlf ? "crlf" : lf ? "lf" : "none";
}

/** The terminator new lines get: the majority's (LF on a tie or when there is none). */
export function dominantEol(eols: readonly string[]): Eol {
  const { lf, crlf } = countEols(eols);
  return crlf > lf ? "\r\n" : "\n";
}

/** `N|TAG content`, the rendering every tool uses so a model can edit straight from any output. */
/** A count with its noun, singular for one only: `1 line`, `2 lines` (`many` for a plural that is not `one` + s). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function renderLine(n: number, tag: string, line: string): string {
  const shown = line.length > MAX_RENDERED_LINE_CHARS ? `${line.slice(0, MAX_RENDERED_LINE_CHARS)}… [line cut: ${line.length} chars]` : line;
  return `${n}|${tag} ${shown}`;
}
