import { type Stats, closeSync, constants, fstatSync, lstatSync, openSync, read, readSync, realpathSync } from "node:fs";
import path from "node:path";
import { fileHash } from "../core/hash.js";
import { isInside } from "../paths.js";
import { absOf } from "./rel-path.js";

/**
 * Regular files up to this size are read synchronously: for the small files of a checkout the thread-pool hop of an async
 * read costs more than the read itself, and 256 KiB is read in about 50 microseconds. Larger ones are read in chunks.
 */
export const SYNC_READ_MAX_BYTES = 256 * 1024;
/** A larger file is read this much per asynchronous read, so no one read holds the thread pool or memory for long. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * Where a small file whose bytes are not kept is read to be hashed (see probe): a checkout's 50,000 files are then
 * read without a buffer each. Its owner reads one file at a time; it is filled and hashed synchronously.
 */
export const newScratch = (): Buffer => Buffer.allocUnsafe(SYNC_READ_MAX_BYTES + 1);
/**
 * O_NOFOLLOW: the path's last component must not be a link (links are resolved and checked first); O_NONBLOCK: a FIFO or
 * device swapped in after the lstat must not block the open; O_NOCTTY: a terminal never becomes the daemon's.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** What is at a root-relative path, as far as the VFS cares. */
export type Probe =
  | {
      kind: "file";
      /** Root-relative real path: the path itself, or a link's target (SPEC 3: one file, however it is named). */
      real: string;
      size: number;
      mtimeMs: number;
      /** null: not hashed (over the limit, or unreadable). */
      hash: string | null;
      /** The bytes hashed, when asked for (see probe's `keep`). */
      content?: Buffer;
    }
  /** A folder (never one reached through a link: links to folders are not followed). */
  | { kind: "folder" }
  /** Nothing there. */
  | { kind: "gone" }
  /**
   * Not a workspace file: a FIFO, socket or device, a link to a folder, a dangling or looping link, or a link whose real
   * path leaves the root (`/proc/self/pagemap`, `/dev/zero`). Never opened, never read.
   */
  | { kind: "other" }
  /** Replaced between the lstat and the open (stat and descriptor disagree): the change that did it brings an event. */
  | { kind: "unstable" };

const GONE: Probe = { kind: "gone" };
const OTHER: Probe = { kind: "other" };
const UNSTABLE: Probe = { kind: "unstable" };
const FOLDER: Probe = { kind: "folder" };

function lstatOrNull(abs: string): Stats | null {
  try {
    return lstatSync(abs, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null; // ENOTDIR: a parent became a file
  }
}

/**
 * The real path of a link when it is a regular file inside the root, else null. A link that leaves the root is not a
 * workspace file (SPEC 3 refuses it as PATH_OUTSIDE_ROOT), so nothing behind it is ever opened.
 */
export function linkTarget(root: string, abs: string): { real: string; stats: Stats } | null {
  let real: string;
  try {
    real = realpathSync.native(abs);
  } catch {
    return null; // dangling, looping, or a parent gone
  }
  if (!isInside(root, real)) return null;
  const stats = lstatOrNull(real);
  return stats?.isFile() ? { real, stats } : null;
}

/**
 * Looks at one path and, for a regular file, reads and hashes it through one descriptor whose fstat must agree with the
 * lstat (same device and inode, a regular file): a swap between the two is never read. Reads stop at `hashMax` bytes
 * actually read, whatever the stat said (a file that claims size 0 and never ends is capped like any other). The bytes
 * come back in `content`, unless a `scratch` (newScratch) is given: then they are read there and only hashed.
 */
export async function probe(root: string, rel: string, hashMax: number, scratch?: Buffer): Promise<Probe> {
  const abs = absOf(root, rel);
  let stats = lstatOrNull(abs);
  if (!stats) return GONE;
  if (stats.isDirectory()) return FOLDER;
  let real = abs;
  if (stats.isSymbolicLink()) {
    const target = linkTarget(root, abs);
    if (!target) return OTHER;
    ({ real, stats } = target);
  }
  if (!stats.isFile()) return OTHER;
  const realRel = real === abs ? rel : path.relative(root, real).split(path.sep).join("/");
  return readRegular(real, realRel, stats, hashMax, scratch);
}

/**
 * Reads and hashes the regular file at `real` that `stats` (its lstat) describes, through one descriptor that must be
 * that very file: opened without following a link or blocking, and fstat'ed to the same device and inode.
 */
export async function readRegular(real: string, realRel: string, stats: Stats, hashMax: number, scratch?: Buffer): Promise<Probe> {
  // Not hashed: over the limit, or there but unreadable (EACCES): reported by size and time.
  const unhashed = (size = stats.size, mtimeMs = stats.mtimeMs): Probe => ({ kind: "file", real: realRel, size, mtimeMs, hash: null });
  if (stats.size > hashMax) return unhashed();
  let fd: number;
  try {
    fd = openSync(real, OPEN_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return GONE;
    if (code === "ELOOP") return UNSTABLE; // became a link since the lstat
    return unhashed();
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile() || opened.dev !== stats.dev || opened.ino !== stats.ino) return UNSTABLE;
    const content = await readCapped(fd, opened.size, hashMax, scratch);
    if (!content) return unhashed(opened.size, opened.mtimeMs);
    const file = { kind: "file", real: realRel, size: content.length, mtimeMs: opened.mtimeMs, hash: fileHash(content) } as const;
    return scratch ? file : { ...file, content };
  } catch {
    return unhashed();
  } finally {
    closeSync(fd);
  }
}

function readAsync(fd: number, buffer: Buffer, length: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, 0, length, null, (e, n) => (e ? reject(e) : resolve(n))));
}

/**
 * Reads an open regular file to its end, or null once more than `max` bytes were read. `sizeHint` (the fstat) picks the
 * path: a small file in one synchronous read of its size plus one byte (to see it end), anything else, or a small one
 * that turns out longer, in asynchronous chunks. With `scratch` a small file may come back in it, good only until the
 * scratch's next read (the caller hashes it at once and keeps nothing).
 */
export async function readCapped(fd: number, sizeHint: number, max: number, scratch?: Buffer): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  if (sizeHint <= SYNC_READ_MAX_BYTES) {
    const length = Math.min(sizeHint, max) + 1;
    const buffer = scratch && scratch.length >= length ? scratch.subarray(0, length) : Buffer.allocUnsafe(length);
    while (total < buffer.length) {
      const got = readSync(fd, buffer, total, buffer.length - total, null);
      if (got === 0) return buffer.subarray(0, total);
      total += got;
    }
    chunks.push(buffer.buffer === scratch?.buffer ? Buffer.from(buffer) : buffer); // read on asynchronously: not the scratch then
  }
  for (;;) {
    if (total > max) return null;
    const want = Math.min(CHUNK_BYTES, max + 1 - total);
    const buffer = Buffer.allocUnsafe(want);
    const got = await readAsync(fd, buffer, want);
    if (got === 0) break;
    chunks.push(got < want ? buffer.subarray(0, got) : buffer);
    total += got;
  }
  return total > max ? null : Buffer.concat(chunks, total);
}

/**
 * A small text file the VFS itself reads (a .gitignore): never through a link (as git 2.32+ reads them), only a regular
 * file, at most `max` bytes (more: ignored, as git ignores an oversized .gitignore). "" when any of that fails.
 */
export async function readSmallText(abs: string, max: number): Promise<string> {
  let fd: number;
  try {
    fd = openSync(abs, OPEN_FLAGS);
  } catch {
    return "";
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > max) return "";
    return (await readCapped(fd, stats.size, max))?.toString("utf8") ?? "";
  } catch {
    return "";
  } finally {
    closeSync(fd);
  }
}
