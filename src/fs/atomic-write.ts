import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { mkdir, open, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { ConfinedDir, openDirConfined } from "./confined.js";

const fdatasync = promisify(fs.fdatasync);

/**
 * Temp files are `.NAME.tl-PPPPPPPPRRRR.tmp` beside the target: the same folder keeps the rename atomic (one file
 * system), and the fixed shape lets the watcher, git (an info/exclude pattern) and the cleanup at start know them.
 * PPPPPPPP is the writing daemon's pid in hex (so a later daemon can tell a dead daemon's leftovers from a live one's
 * write in progress) and RRRR four random hex digits.
 */
export const TEMP_FILE_PATTERN = /(^|\/)\.[^/]*\.tl-[0-9a-f]{12}\.tmp$/;
/** The same shape as a git ignore pattern (for info/exclude) and an rg glob. */
export const TEMP_FILE_GLOB = ".*.tl-????????????.tmp";

/** Mode a new file gets before the umask, like any editor's `open(O_CREAT, 0666)`. */
const NEW_FILE_MODE = 0o666;
/** Most bytes of the target's name kept in its temp file's name, so `.NAME.tl-….tmp` stays within NAME_MAX (255). */
const TEMP_NAME_KEPT_BYTES = 200;

/**
 * Up to this size the bytes go to the page cache with synchronous calls (well under a millisecond), because the
 * thread-pool round trips of the async ones cost several milliseconds under load; the flush to disk, the slow part,
 * always runs off the event loop. Larger files are written asynchronously throughout.
 */
export const SYNC_WRITE_MAX_BYTES = 1024 * 1024;

/** The pid a temp file name carries, or undefined when the name is not one of ours. */
export function tempFileOwner(name: string): number | undefined {
  const m = /\.tl-([0-9a-f]{8})[0-9a-f]{4}\.tmp$/.exec(name);
  return m && TEMP_FILE_PATTERN.test(name) ? parseInt(m[1], 16) : undefined;
}

export function tempNameFor(name: string): string {
  let kept = name;
  while (Buffer.byteLength(kept) > TEMP_NAME_KEPT_BYTES) kept = kept.slice(0, -1);
  const owner = (process.pid >>> 0).toString(16).padStart(8, "0");
  return `.${kept}.tl-${owner}${randomBytes(2).toString("hex")}.tmp`;
}

/**
 * Replaces `real` (a real path inside `root`, never a symlink) with `data` so that no reader ever sees a half-written
 * file: write a temp file in the same folder, flush it to disk, then rename it over the target. Both go through the
 * folder opened by a confined walk (confined.ts), so a folder swapped for a symlink meanwhile cannot redirect them.
 * `mode` keeps an existing file's permission bits; without it the file is new and its parent folders are created.
 * The flush is fdatasync: it covers the data and the size (what a reader after a crash needs); the timestamps it
 * skips are not worth an fsync's extra journal write on every edit.
 */
export async function atomicWriteConfined(root: string, real: string, data: Uint8Array, mode: number | undefined, rel: string): Promise<void> {
  const dir = openDirConfined(root, path.dirname(real), { create: mode === undefined, rel });
  try {
    await writeIn(dir, path.basename(real), data, mode);
  } finally {
    dir.close();
  }
}

/** The same for a file the daemon keeps for itself outside the workspace (approvals, state): plain paths, no walk. */
export async function atomicWrite(target: string, data: Uint8Array, mode?: number): Promise<void> {
  if (mode === undefined) await mkdir(path.dirname(target), { recursive: true });
  await writeIn(new ConfinedDir(undefined, path.dirname(target)), path.basename(target), data, mode);
}

async function writeIn(dir: ConfinedDir, name: string, data: Uint8Array, mode: number | undefined): Promise<void> {
  const temp = dir.path(tempNameFor(name));
  let renamed = false;
  try {
    if (data.length <= SYNC_WRITE_MAX_BYTES) await writeSmall(temp, data, mode);
    else await writeLarge(temp, data, mode);
    await rename(temp, dir.path(name));
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
 * atomicWriteConfined in two halves, for a change of several files that must all land or none (an LSP rename): stage
 * every file first (where a full disk or a permission problem shows), then commit each, a rename that hardly ever fails.
 * The folder stays open (confined) between the two, so the rename goes where the temp file went.
 */
export async function stageWriteConfined(root: string, real: string, data: Uint8Array, mode: number | undefined, rel: string): Promise<StagedWrite> {
  const dir = openDirConfined(root, path.dirname(real), { create: mode === undefined, rel });
  const temp = dir.path(tempNameFor(path.basename(real)));
  try {
    if (data.length <= SYNC_WRITE_MAX_BYTES) await writeSmall(temp, data, mode);
    else await writeLarge(temp, data, mode);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    dir.close();
    throw e;
  }
  let settled = false;
  return {
    async commit() {
      settled = true;
      try {
        await rename(temp, dir.path(path.basename(real)));
      } catch (e) {
        await unlink(temp).catch(() => undefined);
        throw e;
      } finally {
        dir.close();
      }
    },
    async discard() {
      if (settled) return;
      settled = true;
      await unlink(temp).catch(() => undefined);
      dir.close();
    },
  };
}
