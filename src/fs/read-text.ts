import { isUtf8 } from "node:buffer";
import { type Stats, closeSync, constants, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileHash } from "../core/hash.js";
import { LineTags } from "../core/line-tags.js";
import { BINARY_SNIFF_BYTES, type TextDoc, decodeText, hasBom, splitText } from "../core/text.js";
import { ToolError, isNodeError } from "../errors.js";
import type { ResolvedPath } from "../paths.js";

/** A file as the file tools see it: its raw bytes, their hash, and (for text) its lines. */
export interface RawFile {
  bytes: Buffer;
  hash: string;
  stats: Stats;
}

export interface TextFile extends RawFile {
  doc: TextDoc;
}

/**
 * Files up to this size are stat'ed and read synchronously: for a source file that takes tens of microseconds, while the
 * thread-pool round trips of the async calls cost ten times that under load (the 150-line read benchmark). Larger files
 * are read asynchronously so one big read never stalls other calls for long.
 */
export const SYNC_READ_MAX_BYTES = 1024 * 1024;

/** Stats the file a path names: NOT_FOUND, NOT_A_FILE and TOO_LARGE are decided here, before anything is read. */
export async function statFile(path: ResolvedPath, maxBytes: number): Promise<Stats> {
  let stats: Stats;
  try {
    stats = statSync(path.real);
  } catch (e) {
    if (isNodeError(e, "ENOENT") || isNodeError(e, "ENOTDIR")) throw notFound(path);
    throw e;
  }
  if (!stats.isFile()) {
    throw new ToolError("NOT_A_FILE", `${path.rel || "."} is ${stats.isDirectory() ? "a directory" : "not a regular file"}; the file tools read and write regular files only.`);
  }
  if (stats.size > maxBytes) throw tooLarge(path, stats.size, maxBytes);
  return stats;
}

export function notFound(path: ResolvedPath): ToolError {
  return new ToolError("NOT_FOUND", `${path.rel} does not exist; check the path (find_file can search by name), or create it with file_write and content.`);
}

function tooLarge(path: ResolvedPath, size: number, maxBytes: number): ToolError {
  return new ToolError("TOO_LARGE", `${path.rel} is ${size} bytes, over the ${maxBytes}-byte limit of the file tools; use search to find what you need in it.`, { size, max_bytes: maxBytes });
}

/**
 * Opens, fstats and reads a small regular file through one descriptor: one syscall fewer than stat + readFileSync (which
 * opens and fstats again). Anything else (an open error, not a regular file, too large, empty) returns undefined, and
 * readRaw takes its general path, so every error is decided and worded exactly as before.
 */
function readSmallFile(real: string, maxBytes: number): { bytes: Buffer; stats: Stats } | undefined {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer (the general path refuses it as NOT_A_FILE after a stat).
    fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    const size = stats.size;
    if (!stats.isFile() || size === 0 || size > maxBytes || size > SYNC_READ_MAX_BYTES) return undefined;
    const bytes = Buffer.allocUnsafe(size);
    let n = 0;
    // Up to the fstat'ed size, as readFileSync reads a regular file; a file that shrank meanwhile is returned shorter.
    while (n < size) {
      const got = readSync(fd, bytes, n, size - n, n);
      if (got === 0) break;
      n += got;
    }
    return { bytes: n < size ? bytes.subarray(0, n) : bytes, stats };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The raw bytes and hash, with no text checks (file_delete can remove a binary file it was given the hash of). */
export async function readRaw(path: ResolvedPath, maxBytes: number): Promise<RawFile> {
  const small = readSmallFile(path.real, maxBytes);
  if (small) return { bytes: small.bytes, hash: fileHash(small.bytes), stats: small.stats };
  const stats = await statFile(path, maxBytes);
  let bytes: Buffer;
  try {
    bytes = stats.size <= SYNC_READ_MAX_BYTES ? readFileSync(path.real) : await readFile(path.real);
  } catch (e) {
    if (isNodeError(e, "ENOENT")) throw notFound(path);
    throw e;
  }
  // It may have grown between the stat and the read.
  if (bytes.length > maxBytes) throw tooLarge(path, bytes.length, maxBytes);
  return { bytes, hash: fileHash(bytes), stats };
}

/** Reads a UTF-8 text file: BINARY_FILE and ENCODING carry the file's hash, so a caller can still delete it. */
export async function readText(path: ResolvedPath, maxBytes: number): Promise<TextFile> {
  const raw = await readCheckedText(path, maxBytes);
  // Validated, so the plain (fast) decoder cannot replace anything.
  const bom = hasBom(raw.bytes);
  return { ...raw, doc: { bom, ...splitText(raw.bytes.toString("utf8", bom ? 3 : 0)) } };
}

/**
 * Reads a UTF-8 text file as indexed lines, decoding only the lines asked for: a 150-line window of a large file costs
 * a validation pass and a newline scan, not a decode and a split of the whole file.
 */
export async function readLines(path: ResolvedPath, maxBytes: number): Promise<RawFile & { lines: LineTags }> {
  const raw = await readCheckedText(path, maxBytes);
  return { ...raw, lines: new LineTags(raw.bytes) };
}

/** The raw file, refused (with its hash in the error) unless it is UTF-8 text: decodeText's checks, without the decode. */
async function readCheckedText(path: ResolvedPath, maxBytes: number): Promise<RawFile> {
  const raw = await readRaw(path, maxBytes);
  const { bytes } = raw;
  // isBinary's test with a native scan (memchr) instead of a JS loop; decodeText then throws the precise error.
  const binary = bytes.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) !== -1;
  if (binary || !isUtf8(hasBom(bytes) ? bytes.subarray(3) : bytes)) {
    try {
      decodeText(bytes, path.rel);
    } catch (e) {
      if (e instanceof ToolError) throw new ToolError(e.code, e.message, { ...e.details, hash: raw.hash });
      throw e;
    }
  }
  return raw;
}
