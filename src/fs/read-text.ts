import { isUtf8 } from "node:buffer";
import { type Stats, closeSync, fstatSync, read, readSync } from "node:fs";
import { promisify } from "node:util";
import { fileHash } from "../core/hash.js";
import { LineTags } from "../core/line-tags.js";
import { BINARY_SNIFF_BYTES, type TextDoc, decodeText, hasBom, splitText } from "../core/text.js";
import { ToolError, isNodeError, toolErrorOf } from "../errors.js";
import type { ResolvedPath } from "../paths.js";
import { openReadConfined } from "./confined.js";

const readAsync = promisify(read);

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
 * Files up to this size are read synchronously: for a source file that takes tens of microseconds, while the
 * thread-pool round trips of the async calls cost ten times that under load (the 150-line read benchmark). Larger files
 * are read asynchronously so one big read never stalls other calls for long.
 */
export const SYNC_READ_MAX_BYTES = 1024 * 1024;
/** Chunk of an asynchronous read: one thread-pool round trip per MiB keeps a 10 MiB read to ten of them. */
const ASYNC_CHUNK_BYTES = 1024 * 1024;

export function notFound(path: Pick<ResolvedPath, "rel">): ToolError {
  return new ToolError("NOT_FOUND", `${path.rel} does not exist; check the path (find_file can search by name), or create it with file_write and content.`);
}

export function tooLarge(path: Pick<ResolvedPath, "rel">, size: number, maxBytes: number, would = false): ToolError {
  const what = would ? `would be ${size} bytes after this write` : `is ${size} bytes`;
  const how = would ? "write less, or split the file" : "use search to find what you need in it";
  return new ToolError("TOO_LARGE", `${path.rel} ${what}, over the ${maxBytes}-byte limit of the file tools (--max-file-bytes); ${how}.`, {
    size,
    max_bytes: maxBytes,
  });
}

/** An OS error of a file tool, as a ToolError that names the file root-relatively and says what to do. */
export function fileError(e: unknown, path: Pick<ResolvedPath, "rel">, doing: "read" | "write" | "delete" | "move"): unknown {
  if (e instanceof ToolError) return e;
  if (isNodeError(e, "ENOENT") || isNodeError(e, "ENOTDIR")) return notFound(path);
  if (isNodeError(e, "EACCES") || isNodeError(e, "EPERM")) {
    const how = doing === "read" ? "make it readable to the daemon's user" : "make the file and its folder writable to the daemon's user";
    return new ToolError("PERMISSION_DENIED", `${path.rel}: the daemon's user may not ${doing} it (${e.code}); ${how}, or use another path.`, {
      errno: e.code,
    });
  }
  if (isNodeError(e, "ENOSPC") || isNodeError(e, "EDQUOT")) {
    return new ToolError(
      "NO_SPACE",
      `${path.rel} could not be written: the disk (or quota) is full (${e.code}); nothing was changed. Free some space, then retry.`,
      { errno: e.code },
    );
  }
  if (isNodeError(e, "EROFS")) {
    return new ToolError("PERMISSION_DENIED", `${path.rel}: the file system is mounted read-only (EROFS); nothing was changed.`, { errno: e.code });
  }
  if (isNodeError(e, "ENXIO")) return notAFile(path, "not a regular file");
  return toolErrorOf(e, () => path.rel) ?? e;
}

function notAFile(path: Pick<ResolvedPath, "rel">, what: string): ToolError {
  return new ToolError("NOT_A_FILE", `${path.rel || "."} is ${what}; the file tools read and write regular files only.`);
}

/**
 * The raw bytes and hash, with no text checks (file_delete can remove a binary file it was given the hash of). One
 * descriptor does it all: opened without blocking (a FIFO, a device) and proven to be the checked file (confined.ts),
 * fstat'ed (not a regular file: NOT_A_FILE; over the limit: TOO_LARGE), then read, bounded by the bytes actually read
 * (a file whose stat says 0 bytes is still read only up to the limit).
 */
export async function readRaw(path: ResolvedPath, maxBytes: number): Promise<RawFile> {
  const { bytes, stats } = await readBytes(path, maxBytes);
  return { bytes, hash: fileHash(bytes), stats };
}

/**
 * A file's bytes a caller already holds (`bytes`, never changed) and a buffer of its own to read into (`scratch`, at
 * least as long; used by one read at a time, which the synchronous read and compare guarantee).
 */
export interface KnownBytes {
  readonly bytes: Buffer;
  readonly scratch: Buffer;
}

/**
 * readRaw without the hash: for a caller that may not need it (file_read's cached windows). With `known`, a file of
 * known's size that is read synchronously is read into `known.scratch` and compared there, in the same turn: equal
 * bytes come back as `known.bytes` itself (no new buffer for a reread of an unchanged file), others as a copy.
 */
export async function readBytes(path: ResolvedPath, maxBytes: number, known?: () => KnownBytes | undefined): Promise<Omit<RawFile, "hash">> {
  let fd: number;
  try {
    fd = openReadConfined(path);
  } catch (e) {
    throw fileError(e, path, "read");
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw notAFile(path, stats.isDirectory() ? "a directory" : "not a regular file");
    if (stats.size > maxBytes) throw tooLarge(path, stats.size, maxBytes);
    const was = stats.size > 0 && stats.size <= SYNC_READ_MAX_BYTES ? known?.() : undefined;
    const bytes =
      was && was.bytes.length === stats.size && was.scratch.length >= stats.size
        ? readOver(fd, stats.size, was)
        : stats.size <= SYNC_READ_MAX_BYTES
          ? readSmall(fd, stats.size, maxBytes)
          : await readLarge(fd, stats.size);
    if (bytes.length > maxBytes) throw tooLarge(path, bytes.length, maxBytes);
    return { bytes, stats };
  } catch (e) {
    throw fileError(e, path, "read");
  } finally {
    closeSync(fd);
  }
}

/**
 * Up to the fstat'ed size, as readFileSync reads a regular file (a file that shrank meanwhile comes back shorter). A
 * size of 0 may be a file that does not know its size: it is read until its end, up to one byte over the limit.
 */
function readSmall(fd: number, size: number, maxBytes: number): Buffer {
  if (size === 0) {
    const chunk = Buffer.allocUnsafe(Math.min(maxBytes + 1, 64 * 1024));
    const parts: Buffer[] = [];
    let total = 0;
    while (total <= maxBytes) {
      const got = readSync(fd, chunk, 0, chunk.length, null);
      if (got === 0) break;
      parts.push(Buffer.from(chunk.subarray(0, got)));
      total += got;
    }
    return Buffer.concat(parts);
  }
  const bytes = Buffer.allocUnsafe(size);
  let n = 0;
  while (n < size) {
    const got = readSync(fd, bytes, n, size - n, n);
    if (got === 0) break;
    n += got;
  }
  return n < size ? bytes.subarray(0, n) : bytes;
}

/** readSmall of a file of `size` bytes (> 0) into `known.scratch`: known.bytes if equal, else a copy of what was read. */
function readOver(fd: number, size: number, known: KnownBytes): Buffer {
  const { scratch } = known;
  let n = 0;
  while (n < size) {
    const got = readSync(fd, scratch, n, size - n, n);
    if (got === 0) break;
    n += got;
  }
  const read = scratch.subarray(0, n);
  return n === known.bytes.length && read.equals(known.bytes) ? known.bytes : Buffer.from(read);
}

async function readLarge(fd: number, size: number): Promise<Buffer> {
  const bytes = Buffer.allocUnsafe(size);
  let n = 0;
  while (n < size) {
    const { bytesRead } = await readAsync(fd, bytes, n, Math.min(ASYNC_CHUNK_BYTES, size - n), n);
    if (bytesRead === 0) break;
    n += bytesRead;
  }
  return n < size ? bytes.subarray(0, n) : bytes;
}

/** Reads a UTF-8 text file: BINARY_FILE and ENCODING carry the file's hash, so a caller can still delete it. */
export async function readText(path: ResolvedPath, maxBytes: number): Promise<TextFile> {
  return withText(await readRaw(path, maxBytes), path.rel);
}

/** The text of a raw file, or BINARY_FILE / ENCODING with its hash. */
export function withText(raw: RawFile, rel: string): TextFile {
  checkText(raw, rel);
  // Validated, so the plain (fast) decoder cannot replace anything.
  const bom = hasBom(raw.bytes);
  return { ...raw, doc: { bom, ...splitText(raw.bytes.toString("utf8", bom ? 3 : 0)) } };
}

/**
 * Reads a UTF-8 text file as indexed lines, decoding only the lines asked for: a 150-line window of a large file costs
 * a validation pass and a newline scan, not a decode and a split of the whole file.
 */
export async function readLines(path: ResolvedPath, maxBytes: number): Promise<RawFile & { lines: LineTags }> {
  return textLines(await readRaw(path, maxBytes), path.rel);
}

/** A file read as its lines: refused (with its hash) unless UTF-8 text. */
export function textLines(raw: RawFile, rel: string): RawFile & { lines: LineTags } {
  checkText(raw, rel);
  return { ...raw, lines: new LineTags(raw.bytes) };
}

/** Refuses (with its hash in the error) what is not UTF-8 text: decodeText's checks, without the decode. */
function checkText(raw: RawFile, rel: string): void {
  const { bytes } = raw;
  // isBinary's test with a native scan (memchr) instead of a JS loop; decodeText then throws the precise error.
  const binary = bytes.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) !== -1;
  if (binary || !isUtf8(hasBom(bytes) ? bytes.subarray(3) : bytes)) {
    try {
      decodeText(bytes, rel);
    } catch (e) {
      if (e instanceof ToolError) throw new ToolError(e.code, e.message, { ...e.details, hash: raw.hash });
      throw e;
    }
  }
}
