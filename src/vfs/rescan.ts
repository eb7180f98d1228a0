import { type Dirent, type Stats, lstatSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import type { RawEvent } from "./engine.js";
import type { FileIndex } from "./file-index.js";
import type { IgnoreRules } from "./ignore-rules.js";
import type { GitReader } from "./listing.js";
import { absOf } from "./rel-path.js";

/**
 * How far before a flood's first event a file's mtime may be and still count as touched by it (for files whose mtime
 * the index does not know yet): covers the engine's own delay before the first event and coarse timestamps.
 */
const MTIME_SLACK_MS = 500;

/**
 * The kernel drops inotify events past fs.inotify.max_queued_events (16,384 by default), which a 10,000-file checkout
 * exceeds, and neither engine says so. After a flood, the folders it touched are read again: files whose mtime or size
 * differs from the index's (or, when it knows none, modified since the flood began), files not in the index and index
 * entries gone are returned as raw events for the pipeline, which drops what it has already reported (same hash). The
 * work is the flood's folders and their files, never the whole index.
 */
export async function rescanFolders(
  root: string,
  dirs: Iterable<string>,
  sinceMs: number,
  index: FileIndex,
  rules: IgnoreRules,
  /** When the watcher went live: what the first listing saw is the baseline, not a change. */
  notBeforeMs = 0,
): Promise<RawEvent[]> {
  const out: RawEvent[] = [];
  const since = Math.max(sinceMs - MTIME_SLACK_MS, notBeforeMs);
  const changed = (rel: string, st: Stats | null) => {
    const entry = index.get(rel);
    if (!st || !entry) return false; // gone meanwhile: its own event says so
    return entry.mtimeMs === undefined ? st.mtimeMs >= since : st.mtimeMs !== entry.mtimeMs || (entry.size !== undefined && st.size !== entry.size);
  };
  const folders = [...new Set(dirs)];
  for (let i = 0; i < folders.length; i += READDIR_BATCH) {
    const batch = folders.slice(i, i + READDIR_BATCH);
    const listed = await Promise.all(batch.map((dir) => readdir(path.join(root, dir), { withFileTypes: true }).catch(() => null)));
    const known: string[] = [];
    for (const [k, dir] of batch.entries()) findChanged(root, dir, listed[k], index, rules, out, known);
    // the batch's files compared as they are stat'ed: nothing of the stats is kept (a flood's folders hold most files)
    for (const rel of await filterByStat(known, (rel) => absOf(root, rel), changed)) out.push({ path: absOf(root, rel), kind: "update" });
  }
  return out;
}

/** One folder's listing against the index: new entries and gone ones into `out`, indexed files to stat into `known`. */
function findChanged(root: string, dir: string, entries: Dirent[] | null, index: FileIndex, rules: IgnoreRules, out: RawEvent[], known: string[]): void {
  const present = new Set<string>();
  for (const e of entries ?? []) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    present.add(rel);
    const isDir = e.isDirectory();
    if (!index.has(rel) && rules.ignores(rel, isDir)) continue;
    if (isDir) {
      if (!index.hasFolder(rel)) out.push({ path: absOf(root, rel), kind: "create" }); // a new folder: the pipeline walks it
    } else if (!index.has(rel)) out.push({ path: absOf(root, rel), kind: "create" });
    else known.push(rel);
  }
  for (const rel of index.children(dir)) if (!present.has(rel)) out.push({ path: absOf(root, rel), kind: "delete" });
}

/** Root-relative paths that differ between two commits (a checkout, a reset, a pull moved HEAD). */
export async function gitChangedPaths(git: GitReader, from: string, to: string): Promise<string[]> {
  const out = await git(["diff", "--name-only", "--no-renames", "--relative", "-z", from, to]).catch(() => "");
  return out.split("\0").filter(Boolean);
}

/** Files lstat'ed between two yields to the event loop. */
const STAT_SLICE = 256;
/** Folders read at once: a listing is larger than a stat, and a flood's folders can be tens of thousands. */
const READDIR_BATCH = 16;

/**
 * The items whose lstat (null where it fails) `keep` accepts, STAT_SLICE stats between yields to the event loop; the
 * stats themselves are dropped as they go. Synchronous within a slice: a stat is a few microseconds, and the thread-pool
 * hop of an async one costs more than that (the resolver reads small files the same way), so a flood's 750,000 files
 * at a million take seconds, in slices that hold a tool call up by a millisecond or so.
 */
export async function filterByStat<T>(items: readonly T[], abs: (item: T) => string, keep: (item: T, st: Stats | null) => boolean): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < items.length; i++) {
    if (keep(items[i], lstatOrNull(abs(items[i])))) out.push(items[i]);
    if (i % STAT_SLICE === STAT_SLICE - 1) await new Promise((resolve) => setImmediate(resolve));
  }
  return out;
}

function lstatOrNull(abs: string): Stats | null {
  try {
    return lstatSync(abs, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null; // unreadable, or a file where a folder was: as good as gone
  }
}

/**
 * Indexed files modified since `sinceMs` (or whose mtime differs from the one the index knows), as raw updates: what a
 * watcher that was down missed (added and removed files come from a new listing). Unchanged ones drop out by hash.
 */
export async function modifiedSince(root: string, index: FileIndex, sinceMs: number): Promise<RawEvent[]> {
  const since = sinceMs - MTIME_SLACK_MS;
  const modified = (rel: string, st: Stats | null) => {
    const known = index.get(rel)?.mtimeMs;
    return st !== null && (st.mtimeMs >= since || (known !== undefined && st.mtimeMs !== known));
  };
  const found = await filterByStat(index.paths(), (rel) => absOf(root, rel), modified);
  return found.map((rel) => ({ path: absOf(root, rel), kind: "update" as const }));
}
