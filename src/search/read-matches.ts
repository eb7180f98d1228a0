import { isUtf8 } from "node:buffer";
import { closeSync, constants, fstatSync, openSync, read, readSync, readlinkSync } from "node:fs";
import { promisify } from "node:util";
import { fileHash, tagOfBytes } from "../core/hash.js";
import { BINARY_SNIFF_BYTES, isBinary } from "../core/text.js";
import { isNodeError } from "../errors.js";
import { SYNC_READ_MAX_BYTES } from "../fs/read-text.js";
import { DECODE_WHOLE_BYTES, MAX_SEARCH_LINE_CHARS, NOT_UTF8_MARKER, type SearchFile, type SearchLine, shownStart, shownText } from "./render.js";
import type { RgFile, RgLine } from "./ripgrep.js";
import { shownPath } from "./rg-output.js";

/**
 * Turns what rg reported about one file into a result with the file's hash and real line tags, from ONE read of the file.
 * rg read the file before; it may have changed since. So every line rg named is checked against the bytes read here (its
 * number, its offset, its first bytes): when all agree, the hash, the tags and the shown text describe those bytes, and
 * file_write with that hash edits exactly the version shown. When one disagrees, the file changed between the two reads
 * and its lines are left out with a note, never shown with a hash they do not belong to.
 */

const readAsync = promisify(read);
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export interface MatchSource {
  root: string;
  maxFileBytes: number;
  isInside(abs: string): boolean;
  /** Where the first match of a long line is (-1: unknown, shown from its start). */
  matchStart(line: Buffer): Promise<number>;
  /** Characters of `text` the answer may still take; lines past it are left out, and `full` says so. */
  budget: { chars: number; full: boolean };
}

export interface ReadMatches {
  file?: SearchFile;
  /** Why the file's lines are not in the result. */
  note?: string;
  /** Some line was cut to MAX_SEARCH_LINE_CHARS. */
  linesCut: boolean;
  /** Bytes read from the file. */
  bytesRead?: number;
}

export async function readMatches(src: MatchSource, rg: RgFile): Promise<ReadMatches> {
  const path = shownPath(rg.pathBytes);
  const abs = Buffer.concat([Buffer.from(`${src.root}/`), rg.pathBytes]);
  let fd: number;
  try {
    // O_NONBLOCK: a path that became a FIFO must not block the daemon; fstat then refuses it.
    fd = openSync(abs, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    const why = isNodeError(e, "ENOENT") ? "was deleted while it was searched" : `could not be read (${isNodeError(e) ? e.code : String(e)})`;
    return { note: `${path} ${why}; its matches are left out.`, linesCut: false };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { note: `${path} is no longer a regular file; its matches are left out.`, linesCut: false };
    if (!openedInside(src, fd))
      return { note: `${path} now leads outside the workspace (a symlink was swapped in); its matches are left out.`, linesCut: false };
    if (stats.size > src.maxFileBytes) return await overLimit(src, fd, path, stats.size, rg.lines);
    const bytes = await readUpTo(fd, stats.size, src.maxFileBytes + 1);
    if (bytes.length > src.maxFileBytes) return await overLimit(src, fd, path, bytes.length, rg.lines);
    return { ...(await fromBytes(src, path, bytes, rg.lines)), bytesRead: bytes.length };
  } finally {
    closeSync(fd);
  }
}

/** The descriptor's real path, from /proc: a folder swapped for a symlink after rg's walk cannot lead the read outside. */
function openedInside(src: MatchSource, fd: number): boolean {
  let real: string;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return true; // no /proc (not Linux): the open followed what rg walked, which never follows links
  }
  return src.isInside(real);
}

/** Reads to the end, at most `max` bytes, whatever fstat said (a file may grow, and some files report size 0). */
async function readUpTo(fd: number, sizeHint: number, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  let want = Math.min(max, Math.max(sizeHint, 1) + 1); // one byte more than stat says, to see that it grew
  while (total < max) {
    const buffer = Buffer.allocUnsafe(Math.min(want, max - total));
    const n = want <= SYNC_READ_MAX_BYTES ? readSync(fd, buffer, 0, buffer.length, total) : (await readAsync(fd, buffer, 0, buffer.length, total)).bytesRead;
    if (n === 0) break;
    chunks.push(n < buffer.length ? buffer.subarray(0, n) : buffer);
    total += n;
    want = 64 * 1024;
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
}

async function fromBytes(src: MatchSource, path: string, bytes: Buffer, lines: RgLine[]): Promise<ReadMatches> {
  const changed = changedNote(path);
  if (isBinary(bytes.subarray(0, BINARY_SNIFF_BYTES))) {
    // rg decodes UTF-16 files (a BOM says so) and searched the text; the file tools take them as binary
    return { note: `${path} is binary to the file tools (UTF-16 or NUL bytes); its matches are left out.`, linesCut: false };
  }
  const bom = bytes.length >= 3 && bytes.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0; // rg strips it: its offsets are after it
  const out: SearchLine[] = [];
  let linesCut = false;
  let lineNumber = 1;
  let lineStart = 0;
  for (const rg of lines) {
    if (spent(src)) break;
    if (rg.line < lineNumber) {
      lineNumber = 1;
      lineStart = 0;
    }
    while (lineNumber < rg.line) {
      const nl = bytes.indexOf(10, lineStart);
      if (nl < 0) return changed;
      lineStart = nl + 1;
      lineNumber++;
    }
    const contentStart = lineStart + (lineNumber === 1 ? bom : 0);
    if (contentStart - bom !== rg.offset || contentStart > bytes.length) return changed;
    const nl = bytes.indexOf(10, contentStart);
    let end = nl < 0 ? bytes.length : nl;
    if (nl >= 0 && end > contentStart && bytes[end - 1] === 13) end--; // SPEC 4: the \r of CRLF is the terminator's
    const content = bytes.subarray(contentStart, end);
    if (!sameStart(content, rg, nl < 0)) return changed;

    // every line that may be longer than the window (bytes bound characters): its window is centred on the match
    const matchStart = rg.match && content.length > MAX_SEARCH_LINE_CHARS ? await src.matchStart(content) : -1;
    const shown = shownText(content, matchStart);
    linesCut ||= shown.cut;
    const line: SearchLine = { line: rg.line, tag: tagOfBytes(content), text: shown.text, match: rg.match };
    if (!isUtf8(content)) {
      line.text += NOT_UTF8_MARKER;
      line.not_utf8 = true;
    }
    keep(src, out, line);
  }
  if (!out.some((l) => l.match)) return { linesCut }; // the budget ran out on its before-context
  const file: SearchFile = { path, hash: fileHash(bytes), lines: out };
  if (!isUtf8(bom ? bytes.subarray(3) : bytes)) file.not_utf8 = true;
  return { file, linesCut };
}

/**
 * The line's start as rg saw it is the line's start here (the whole line, when rg saw it whole). `last`: the file's last
 * line, without a newline: rg printed it with one, and its \r then looked like CRLF's to the parser, which dropped it.
 */
function sameStart(content: Buffer, rg: RgLine, last: boolean): boolean {
  let ours = content;
  if (rg.whole && last && ours.length && ours[ours.length - 1] === 13) ours = ours.subarray(0, -1);
  if (rg.whole) return ours.equals(rg.head);
  return ours.length >= rg.head.length && ours.subarray(0, rg.head.length).equals(rg.head);
}

/**
 * A file over the size limit is not read whole: no hash (the file tools cannot read or write it anyway) and no tags, and
 * each line's start is read where rg said it is, to show it.
 */
async function overLimit(src: MatchSource, fd: number, path: string, size: number, lines: RgLine[]): Promise<ReadMatches> {
  const bomBytes = Buffer.alloc(3);
  const bom = (await readAsync(fd, bomBytes, 0, 3, 0)).bytesRead === 3 && bomBytes.equals(UTF8_BOM) ? 3 : 0;
  const out: SearchLine[] = [];
  let linesCut = false;
  for (const rg of lines) {
    if (spent(src)) break;
    const window = Buffer.allocUnsafe(DECODE_WHOLE_BYTES + 1);
    const n = (await readAsync(fd, window, 0, window.length, rg.offset + bom)).bytesRead;
    const got = window.subarray(0, n);
    const nl = got.indexOf(10);
    let text: string;
    if (nl >= 0 || n < window.length) {
      let content = got.subarray(0, nl >= 0 ? nl : n);
      if (nl >= 0 && content.length && content[content.length - 1] === 13) content = content.subarray(0, -1);
      if (!sameStart(content, rg, nl < 0)) return changedNote(path);
      const shown = shownText(content, -1);
      linesCut ||= shown.cut;
      text = shown.text;
    } else {
      if (!sameStart(got, { ...rg, whole: false }, false)) return changedNote(path);
      linesCut = true;
      text = shownStart(got);
    }
    keep(src, out, { line: rg.line, tag: null, text, match: rg.match });
  }
  if (!out.some((l) => l.match)) return { linesCut };
  return { file: { path, hash: null, size, lines: out }, linesCut };
}

/** Whether the answer's budget is spent (the line that spent it stays): the lines after it are left out. */
function spent(src: MatchSource): boolean {
  if (src.budget.chars > 0) return false;
  src.budget.full = true;
  return true;
}

/** A rendered line's `N|TAG ` and newline, charged to the budget with its text (a line number of up to 9 digits). */
const LINE_OVERHEAD_CHARS = 16;

function keep(src: MatchSource, out: SearchLine[], line: SearchLine): void {
  out.push(line);
  src.budget.chars -= line.text.length + LINE_OVERHEAD_CHARS;
}

function changedNote(path: string): ReadMatches {
  return { note: `${path} changed while it was searched; its matches are left out: search again.`, linesCut: false };
}
