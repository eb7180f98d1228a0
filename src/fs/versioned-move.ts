import { type Stats, closeSync, constants, fstatSync, linkSync, lstatSync, openSync, readSync, renameSync, statSync, unlinkSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileHash } from "../core/hash.js";
import { ToolError, isNodeError } from "../errors.js";
import type { Entry, ResolvedPath } from "../paths.js";
import { checkDirConfined, openDirConfined } from "./confined.js";
import { checkHash } from "./hash-check.js";
import { fileError, notFound, readRaw } from "./read-text.js";
import type { FilesHost, MultiWriteContext } from "./files-host.js";

/** Files of a moved folder whose views are carried to the new path, at most: a walk of the folder must stay bounded. */
export const MAX_MOVED_FILES = 100_000;

export interface MoveRequest {
  from: ResolvedPath;
  to: ResolvedPath;
  /** The file's hash (what the caller read); a folder takes none (see file-move.ts for why). */
  expected: string | undefined;
}

export interface MoveOutcome {
  kind: "file" | "symlink" | "folder";
  /** The moved file's content hash (a symlink's: its target's); null for a folder. */
  hash: string | null;
  /** Files under a moved folder (1 for a file), counted up to MAX_MOVED_FILES. */
  files: number;
  /** The count stopped at MAX_MOVED_FILES. */
  more: boolean;
}

type MoveDeps = Pick<FilesHost, "root" | "maxFileBytes" | "history" | "views" | "paths" | "expectToolWrite" | "recordSeen">;

/**
 * file_move's one operation: with the worktree to itself (no write interleaves, every change meanwhile is the session's),
 * check the source (it exists; a file is still the version `expected` names) and that nothing is at the destination,
 * then move the entry itself (a symlink stays a link) through confined folders. A file is hard-linked to its new name
 * and then unlinked from the old one, so an existing destination is never overwritten (link fails with EEXIST; Node
 * has no renameat2 RENAME_NOREPLACE); a folder, or a file on a file system without hard links, is renamed after the
 * destination was found free under the lock. Sessions' views of the moved files are carried to the new paths.
 */
export async function moveEntry(ws: MoveDeps, ctx: MultiWriteContext, req: MoveRequest): Promise<MoveOutcome> {
  const { from, to } = req;
  if (from.rel === "") throw new ToolError("INVALID_PARAMS", "from: the workspace root cannot be moved.");
  const src = ws.paths.entryOf(from);
  const srcReal = path.join(src.dir, src.name);
  const dst = { dir: path.dirname(to.real), name: path.basename(to.real) };
  if (to.real === srcReal) throw new ToolError("INVALID_PARAMS", `to: ${to.rel} is where ${from.rel} already is; name another path.`);
  if (to.real.startsWith(`${srcReal}/`)) throw new ToolError("INVALID_PARAMS", `to: ${to.rel} is inside ${from.rel}; a folder cannot be moved into itself.`);
  // Checked first outside the lock, so a refused move never holds the worktree or opens an attribution window;
  // then again with the worktree held, where it is acted on.
  const checked = await inspect(ws, req, src);
  checkDirConfined(to.root, dst.dir, to.rel);
  if (ctx.dryRun) return checked.outcome;
  // A file (or a link to one) is announced whole by its hash at both paths, so no attribution window is opened: one
  // would claim an outside write made just after the answer for this move. A folder's files may be too many to
  // announce, so a folder move keeps the window. The kind cannot change under the lock without failing inspect: a file
  // is held to its hash, a folder refuses one.
  const announced = checked.outcome.kind !== "folder" && checked.outcome.hash !== null;
  const move = async () => {
    const { outcome, bytes, moved } = await inspect(ws, req, src);
    const { kind, hash } = outcome;
    const srcDir = openDir(from, src.dir, false);
    try {
      const dstDir = openDir(to, dst.dir, true);
      try {
        const there = lstatOrNull(dstDir.path(dst.name));
        if (there) throw alreadyExists(to, there);
        const fromRel = ws.paths.toRel(srcReal);
        const toRel = to.realRel;
        const expected = kind === "folder" ? expectedOfFolder(srcDir.path(src.name), moved, ws.maxFileBytes) : hash ? [{ rel: "", hash }] : [];
        await ctx.commit(async () => {
          for (const e of expected) {
            const sub = (rel: string) => (e.rel ? `${rel}/${e.rel}` : rel);
            ws.expectToolWrite({ session: ctx.sessionId, tool: ctx.toolId, rel: sub(toRel), hash: e.hash });
            ws.expectToolWrite({ session: ctx.sessionId, tool: ctx.toolId, rel: sub(fromRel), hash: null });
          }
          rename(srcDir.path(src.name), dstDir.path(dst.name), kind, from, to);
        });
        // A symlink's views are its target's, which did not move; a file's and a folder's files' go with them.
        if (kind !== "symlink") for (const f of moved) carryViews(ws, f ? `${fromRel}/${f}` : fromRel, f ? `${toRel}/${f}` : toRel);
        if (kind === "file" && hash && bytes) ws.recordSeen(ctx.sessionId, toRel, hash, bytes);
      } finally {
        dstDir.close();
      }
    } finally {
      srcDir.close();
    }
    return outcome;
  };
  return ctx.exclusive(move, { announced });
}

/** What is to be moved, checked: it exists, a file is the version `expected` names, a folder has no hash, `to` is free. */
async function inspect(ws: MoveDeps, req: MoveRequest, src: Entry): Promise<{ outcome: MoveOutcome; bytes?: Buffer; moved: string[] }> {
  const { from, to } = req;
  const srcDir = openDir(from, src.dir, false);
  let st: Stats | null;
  try {
    st = lstatOrNull(srcDir.path(src.name));
  } finally {
    srcDir.close();
  }
  if (!st) throw notFound(from);
  const kind = st.isDirectory() ? "folder" : st.isSymbolicLink() ? "symlink" : "file";
  if (kind === "file" && !st.isFile())
    throw new ToolError("NOT_A_FILE", `${from.rel} is not a regular file or folder; file_move moves files and folders only.`);
  const taken = lstatOrNull(to.abs);
  if (taken) throw alreadyExists(to, taken);
  if (kind === "folder") {
    if (req.expected !== undefined) throw new ToolError("INVALID_PARAMS", `hash: ${from.rel} is a folder, which takes no hash; leave hash out to move it.`);
    const moved = await filesUnder(path.join(src.dir, src.name));
    return { outcome: { kind, hash: null, files: moved.files.length, more: moved.more }, moved: moved.files };
  }
  // A symlink to a folder is moved like a folder's name: no content to hash (and no file to report).
  if (kind === "symlink" && statSync(path.join(src.dir, src.name), { throwIfNoEntry: false })?.isDirectory()) {
    if (req.expected !== undefined)
      throw new ToolError("INVALID_PARAMS", `hash: ${from.rel} is a symlink to a folder, which takes no hash; leave hash out to move it.`);
    return { outcome: { kind, hash: null, files: 0, more: false }, moved: [] };
  }
  if (req.expected === undefined)
    throw new ToolError("INVALID_PARAMS", `hash: required to move the file ${from.rel}; pass the hash from your last file_read of it.`);
  const current = await readRaw(from, ws.maxFileBytes);
  checkHash(ws, from, req.expected, current);
  return { outcome: { kind, hash: current.hash, files: 1, more: false }, bytes: current.bytes, moved: kind === "symlink" ? [] : [""] };
}

function openDir(target: ResolvedPath, dir: string, create: boolean) {
  try {
    return openDirConfined(target.root, dir, { create, rel: target.rel });
  } catch (e) {
    throw fileError(e, target, "move");
  }
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch (e) {
    if (isNodeError(e, "ENOENT") || isNodeError(e, "ENOTDIR")) return null;
    throw e;
  }
}

function alreadyExists(to: ResolvedPath, st: Stats): ToolError {
  const what = st.isDirectory() ? "a folder" : st.isSymbolicLink() ? "a symlink" : "a file";
  return new ToolError("ALREADY_EXISTS", `${to.rel} already exists (${what}); file_move never overwrites: pick another name, or delete it first.`);
}

/** Errors after which a hard link cannot be made here, though a rename can: a file system without hard links, a link count limit. */
const NO_HARD_LINK = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "EMLINK", "ENOSYS"]);

function rename(src: string, dst: string, kind: MoveOutcome["kind"], from: ResolvedPath, to: ResolvedPath): void {
  try {
    if (kind !== "folder") {
      try {
        linkSync(src, dst);
        unlinkSync(src);
        return;
      } catch (e) {
        if (!isNodeError(e) || !NO_HARD_LINK.has(e.code ?? "")) throw e;
      }
    }
    renameSync(src, dst);
  } catch (e) {
    if (isNodeError(e, "EEXIST") || isNodeError(e, "ENOTEMPTY"))
      throw new ToolError("ALREADY_EXISTS", `${to.rel} appeared while ${from.rel} was being moved; nothing was moved. Pick another name.`);
    if (isNodeError(e, "EXDEV")) {
      throw new ToolError(
        "INVALID_PARAMS",
        `to: ${to.rel} is on another file system than ${from.rel}; a move cannot cross it. Write a copy with file_write and delete the original instead.`,
      );
    }
    throw fileError(e, from, "move");
  }
}

/** Files of a moved folder announced to the watcher one by one, at most (the rest fall to the attribution window). */
export const MAX_EXPECTED_FILES = 2000;
/** Bytes read to hash them for that, at most. */
const EXPECTED_BYTES_BUDGET = 32 * 1024 * 1024;

/**
 * The moved folder's files with the hash the watcher will see at their new path, so each delete and create is matched
 * to this move exactly (the worktree-wide attribution window of `exclusive` covers the rest, but a window that another
 * session's operation closed just before can claim events too). Regular files up to the size limit, within a budget.
 */
function expectedOfFolder(dir: string, files: readonly string[], maxBytes: number): { rel: string; hash: string | null }[] {
  const out: { rel: string; hash: string | null }[] = [];
  let budget = EXPECTED_BYTES_BUDGET;
  for (const rel of files.slice(0, MAX_EXPECTED_FILES)) {
    const bytes = readRegular(path.join(dir, rel), Math.min(maxBytes, budget));
    if (!bytes) continue; // not a regular file, too large, gone or unreadable: the window attributes it
    budget -= bytes.length;
    out.push({ rel, hash: fileHash(bytes) });
  }
  return out;
}

/** A regular file's bytes if it has at most `maxBytes`: opened without following a last symlink or blocking on a FIFO. */
function readRegular(file: string, maxBytes: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return undefined;
    const bytes = Buffer.allocUnsafe(st.size);
    let n = 0;
    while (n < st.size) {
      const got = readSync(fd, bytes, n, st.size - n, n);
      if (got === 0) break;
      n += got;
    }
    return bytes.subarray(0, n);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The paths (relative to `dir`) of every file below it, found without following symlinks, up to MAX_MOVED_FILES. */
async function filesUnder(dir: string): Promise<{ files: string[]; more: boolean }> {
  const files: string[] = [];
  const queue = [""];
  while (queue.length) {
    const rel = queue.shift()!;
    const entries = await readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) queue.push(child);
      else if (files.length === MAX_MOVED_FILES) return { files, more: true };
      else files.push(child);
    }
  }
  return { files, more: false };
}

/** Every session that saw `from` has seen the same version at `to` (the content did not change): it is not stale there. */
function carryViews(ws: Pick<FilesHost, "views">, from: string, to: string): void {
  // staleSessions against a hash no file has lists every session with a view of `from`.
  for (const session of ws.views.staleSessions(from, "")) {
    const seen = ws.views.seen(session, from);
    if (seen !== undefined && seen !== null) ws.views.record(session, to, seen);
  }
}
