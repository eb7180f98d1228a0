/**
 * The line tools' index write done by the daemon itself (issue 23): a `git update-index --index-info` costs the main
 * thread a fork of the daemon's heap, most of a staging call. Only entries replaced in place (index-file.ts,
 * withEntriesReplaced); everything else, and any configuration under which git could write the index otherwise, goes
 * to git (objects.ts writeIndex), which then also gives git's own errors.
 *
 * As git does: index.lock is created with O_CREAT|O_EXCL (one held by another writer sends the write to git, which
 * reports it), the index is read under the lock, the new one written into the lock and renamed over the index. Not
 * fsynced: core.fsync's default leaves the index out, and a configured core.fsync goes to git. Synchronous, so the
 * lock is held for the least time: the index is read whole and hashed on this thread anyway, as parseIndex does.
 */
import { closeSync, constants, accessSync, fstatSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { isNodeError } from "../errors.js";
import { type EntryWrites, withEntriesReplaced } from "./index-file.js";
import type { IndexWrite } from "./objects.js";
import type { RepoCtx } from "./repo.js";

/**
 * Configuration under which git's index write differs from a replacement: a split or sparse index, a skipped
 * checksum, fsync, shared permissions, an untracked cache git would add, hooks run after an index change, includes.
 */
const INDEX_CONFIG = /splitindex|sparse|skiphash|manyfiles|fsync|sharedrepository|untrackedcache|hookspath|\[\s*(index|hook)\b|include/i;

/** Writes these entries into the context's index, or answers false (nothing written) for git to do it. */
export async function replaceIndexEntries(ctx: RepoCtx, writes: readonly IndexWrite[]): Promise<boolean> {
  const entries = new Map<string, { mode: string; sha: string }>();
  for (const w of writes) {
    if (!w.entry || entries.has(w.gitPath)) return false;
    entries.set(w.gitPath, w.entry);
  }
  const repo = await ctx.repo.location();
  if (!ctx.repo.configFiles.free(repo, INDEX_CONFIG) || executable(path.join(repo.commonDir, "hooks", "post-index-change"))) return false;
  return replaceUnderLock(ctx.env?.GIT_INDEX_FILE ?? path.join(repo.gitDir, "index"), entries);
}

function replaceUnderLock(index: string, entries: EntryWrites): boolean {
  const lock = `${index}.lock`;
  let fd: number;
  try {
    fd = openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o666);
  } catch (e) {
    if (isNodeError(e, "EEXIST")) return false; // held by another writer: git says so
    throw e;
  }
  let done = false;
  try {
    const next = nextIndex(index, entries);
    if (!next) return false;
    for (let at = 0; at < next.length; ) at += writeSync(fd, next, at); // a write may take less than all
    closeSync(fd);
    fd = -1;
    renameSync(lock, index);
    done = true;
    return true;
  } finally {
    if (!done) {
      if (fd >= 0) closeSync(fd);
      unlinkSync(lock);
    }
  }
}

/** The index with the entries replaced, or null (no index yet, or not a replacement here). */
function nextIndex(index: string, entries: EntryWrites): Buffer | null {
  let fd: number;
  try {
    fd = openSync(index, "r");
  } catch (e) {
    if (isNodeError(e, "ENOENT")) return null;
    throw e;
  }
  try {
    // git's racy-entry check compares with the index's modification time in whole seconds.
    const mtimeSec = Number(fstatSync(fd, { bigint: true }).mtimeNs / 1_000_000_000n);
    return withEntriesReplaced(readFileSync(fd), mtimeSec, entries);
  } finally {
    closeSync(fd);
  }
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
