import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { mkdir, open, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const fdatasync = promisify(fs.fdatasync);

/**
 * Temp files are `.NAME.tl-RANDOM.tmp` beside the target: the same folder keeps the rename atomic (one file system),
 * and the fixed shape lets the watcher ignore them.
 */
export const TEMP_FILE_PATTERN = /(^|\/)\.[^/]*\.tl-[0-9a-f]{12}\.tmp$/;

/** Mode a new file gets before the umask, like any editor's `open(O_CREAT, 0666)`. */
const NEW_FILE_MODE = 0o666;

/**
 * Up to this size the bytes go to the page cache with synchronous calls (well under a millisecond), because the
 * thread-pool round trips of the async ones cost several milliseconds under load; the flush to disk, the slow part,
 * always runs off the event loop. Larger files are written asynchronously throughout.
 */
export const SYNC_WRITE_MAX_BYTES = 1024 * 1024;

function tempPathFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.tl-${randomBytes(6).toString("hex")}.tmp`);
}

/**
 * Replaces `target` (a real path, never a symlink) with `data` so that no reader ever sees a half-written file:
 * write a temp file in the same folder, flush it to disk, then rename it over the target. `mode` keeps an existing
 * file's permission bits; without it the file is new and its parent folders are created.
 * The flush is fdatasync: it covers the data and the size (what a reader after a crash needs); the timestamps it
 * skips are not worth an fsync's extra journal write on every edit.
 */
export async function atomicWrite(target: string, data: Uint8Array, mode?: number): Promise<void> {
  if (mode === undefined) await mkdir(path.dirname(target), { recursive: true });
  const temp = tempPathFor(target);
  let renamed = false;
  try {
    if (data.length <= SYNC_WRITE_MAX_BYTES) await writeSmall(temp, data, mode);
    else await writeLarge(temp, data, mode);
    await rename(temp, target);
    renamed = true;
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
}

async function writeSmall(temp: string, data: Uint8Array, mode?: number): Promise<void> {
  const fd = fs.openSync(temp, "wx", mode ?? NEW_FILE_MODE);
  try {
    fs.writeFileSync(fd, data);
    // open() applies the umask; an existing file's bits are restored exactly.
    if (mode !== undefined) fs.fchmodSync(fd, mode);
    await fdatasync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

async function writeLarge(temp: string, data: Uint8Array, mode?: number): Promise<void> {
  const handle = await open(temp, "wx", mode ?? NEW_FILE_MODE);
  try {
    await handle.writeFile(data);
    if (mode !== undefined) await handle.chmod(mode);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/** Permission bits of a stat's mode, the part a rewrite keeps. */
export const permissionBits = (mode: number) => mode & 0o7777;

/** A file written beside its target and flushed, not yet in place: `commit` renames it over the target, `discard` removes it. */
export interface StagedWrite {
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/**
 * atomicWrite in two halves, for a change of several files that must all land or none (an LSP rename): stage every
 * file first (where a full disk or a permission problem shows), then commit each, a rename that hardly ever fails.
 */
export async function stageWrite(target: string, data: Uint8Array, mode?: number): Promise<StagedWrite> {
  if (mode === undefined) await mkdir(path.dirname(target), { recursive: true });
  const temp = tempPathFor(target);
  try {
    if (data.length <= SYNC_WRITE_MAX_BYTES) await writeSmall(temp, data, mode);
    else await writeLarge(temp, data, mode);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  let settled = false;
  return {
    async commit() {
      settled = true;
      try {
        await rename(temp, target);
      } catch (e) {
        await unlink(temp).catch(() => undefined);
        throw e;
      }
    },
    async discard() {
      if (settled) return;
      settled = true;
      await unlink(temp).catch(() => undefined);
    },
  };
}
