import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readlinkSync } from "node:fs";
import path from "node:path";
import { ToolError, isNodeError, toolErrorOf } from "../errors.js";
import type { ResolvedPath } from "../paths.js";

/**
 * Acting on a checked path without re-resolving it. The path check (paths.ts) resolves symlinks once; a local process
 * that swaps a folder on the path for a symlink right after the check (renameat2 exchanges) would make a plain
 * open/rename/unlink of the same string land outside the root. Node 20 has no openat/renameat/unlinkat, so:
 * - a read opens the file and then proves the descriptor is the checked file (Linux's /proc/self/fd/N names the file a
 *   descriptor holds), refusing anything else;
 * - a write, rename or unlink first walks the folders from the root one component at a time with O_NOFOLLOW (each open
 *   relative to the folder before it, through `/proc/self/fd/DIRFD/name`), then acts on a single name in that folder, so
 *   no symlink on the way is followed and nothing outside the root can be reached.
 * Without /proc (not Linux) both fall back to the plain path: the check before is then all there is.
 */
const PROC_FD = "/proc/self/fd";
export const HAS_PROC_FD = (() => {
  try {
    return existsSync(PROC_FD) && readlinkSync(`${PROC_FD}/0`).length > 0;
  } catch {
    return false;
  }
})();

/** A FIFO opens at once instead of waiting for a writer; a terminal never becomes the daemon's; a symlink in last place is refused. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | constants.O_NOFOLLOW;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** The path of the file descriptor `fd` holds, as the kernel sees it now. */
function fdPath(fd: number): string {
  return readlinkSync(`${PROC_FD}/${fd}`);
}

/** The path changed between the check and the open: nothing was read or written through it. */
function changed(target: { root: string; rel: string }, now: string): ToolError {
  const inside = now === target.root || now.startsWith(`${target.root}/`);
  if (!inside) {
    return new ToolError(
      "PATH_OUTSIDE_ROOT",
      `${target.rel} now leads outside the workspace root (a folder on its path was replaced by a symlink while it was opened); nothing was read or written.`,
    );
  }
  return new ToolError("BUSY", `${target.rel} was moved or replaced while it was being opened; nothing was read or written: retry.`);
}

/**
 * Opens the checked file `target.real` for reading and proves the descriptor holds that file. Throws ToolErrors for a
 * path that changed meanwhile (see `changed`) and OS errors (ENOENT, EACCES, ...) as they are.
 */
export function openReadConfined(target: Pick<ResolvedPath, "root" | "rel" | "real">): number {
  let fd: number;
  try {
    fd = openSync(target.real, READ_FLAGS);
  } catch (e) {
    // The last component was a plain name at the check; a symlink there now means it was swapped meanwhile.
    if (isNodeError(e, "ELOOP")) throw changed(target, target.root);
    throw e;
  }
  if (!HAS_PROC_FD) return fd;
  let now: string;
  try {
    now = fdPath(fd);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  if (now !== target.real) {
    closeSync(fd);
    throw changed(target, now);
  }
  return fd;
}

/** An open folder inside the root: names in it are reached through the descriptor, never by re-resolving its path. */
export class ConfinedDir {
  constructor(
    private readonly fd: number | undefined,
    /** The folder's real path (for messages and the fallback). */
    readonly real: string,
  ) {}

  /** A path to `name` in this folder that the kernel resolves through the open descriptor. */
  path(name: string): string {
    return this.fd === undefined ? path.join(this.real, name) : `${PROC_FD}/${this.fd}/${name}`;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
  }
}

export interface OpenDirOptions {
  /** Create missing folders on the way (a new file's parents). */
  create?: boolean;
  /** Root-relative name of what is being written, for messages. */
  rel: string;
}

/**
 * Opens the folder `realDir` (a real path inside `root`) by walking from the root one component at a time, each opened
 * with O_NOFOLLOW relative to the one before: a component that is (now) a symlink is refused, never followed.
 * Missing folders are created when `create`; without it a missing one is NOT_FOUND. A file on the way is NOT_A_FILE.
 */
export function openDirConfined(root: string, realDir: string, options: OpenDirOptions): ConfinedDir {
  const parts = path.relative(root, realDir).split(path.sep).filter(Boolean);
  if (parts[0] === "..") throw changed({ root, rel: options.rel }, realDir);
  if (!HAS_PROC_FD) {
    if (options.create) mkdirSync(realDir, { recursive: true });
    return new ConfinedDir(undefined, realDir);
  }
  let fd = openSync(root, DIR_FLAGS);
  let at = root;
  try {
    for (const part of parts) {
      at = path.join(at, part);
      const next = `${PROC_FD}/${fd}/${part}`;
      let child: number;
      try {
        child = openSync(next, DIR_FLAGS);
      } catch (e) {
        // O_DIRECTORY|O_NOFOLLOW on a symlink is ENOTDIR (or ELOOP): only a file there now is a file on the path;
        // a symlink, or a folder again, means the path is being swapped.
        if (isNodeError(e, "ENOTDIR") || isNodeError(e, "ELOOP")) {
          const now = lstatSync(next, { throwIfNoEntry: false });
          if (!now || now.isSymbolicLink() || now.isDirectory()) throw changed({ root, rel: options.rel }, root);
        }
        if (!isNodeError(e, "ENOENT") || !options.create) throw e;
        try {
          mkdirSync(next);
        } catch (made) {
          if (!isNodeError(made, "EEXIST")) throw made; // created meanwhile: open what is there now
        }
        child = openSync(next, DIR_FLAGS);
      }
      closeSync(fd);
      fd = child;
    }
  } catch (e) {
    closeSync(fd);
    throw walkError(e, root, at, options.rel);
  }
  return new ConfinedDir(fd, realDir);
}

/**
 * Whether the folders of a new file's path could be created: each existing one must be a folder (dry runs check this
 * too, without creating anything). Walks like openDirConfined and stops at the first missing folder.
 */
export function checkDirConfined(root: string, realDir: string, rel: string): void {
  try {
    openDirConfined(root, realDir, { rel }).close();
  } catch (e) {
    if (e instanceof ToolError && e.code === "NOT_FOUND") return;
    throw e;
  }
}

function walkError(e: unknown, root: string, failed: string, rel: string): unknown {
  const name = path.relative(root, failed).split(path.sep).join("/");
  if (isNodeError(e, "ENOTDIR")) return new ToolError("NOT_A_FILE", `${rel} cannot be written: ${name} on its path is a file, not a folder.`);
  if (isNodeError(e, "ENOENT")) return new ToolError("NOT_FOUND", `${rel}: the folder ${name} does not exist.`);
  return toolErrorOf(e, () => name || ".") ?? e;
}
