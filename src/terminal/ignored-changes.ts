import { type Dirent, fchmodSync, fstatSync, lstatSync, readdirSync } from "node:fs";
import { parentOf } from "../vfs/file-index.js";

/**
 * How many changes a command made where the VFS does not watch (ignored folders such as build output or node_modules/,
 * ignored files): SPEC 11's "the result says how many changes were left out". The walk that finds the git dirs before
 * the command also notes, folder by folder, the files the index does not have; after the command the same places are
 * read again: a file that came is created, one that went is deleted, and one whose ctime is at or after the command's
 * start is modified (ctime, not mtime: no program sets it back, as a copy that keeps times does mtime). New folders are
 * found by the ctime of the watched folders that hold them, and read whole.
 */

/**
 * Unwatched files looked at after a command, at most: each costs an lstat after every command (20,000 take about 60 ms
 * on this loaded 2-core machine). The smallest unwatched places are counted first; those past the budget (a big
 * node_modules/) are named in `not_counted` instead.
 */
export const MAX_COUNTED_FILES = 20_000;

export interface IgnoredChanges {
  count: number;
  created: number;
  modified: number;
  deleted: number;
  /** Unwatched places too big to count (root-relative, a folder with a trailing `/`), when there are any. */
  not_counted?: string[];
}

/** What the index says about the tree: its files, and the folders that hold them with how many files each holds itself. */
export interface Watched {
  has(rel: string): boolean;
  folders: ReadonlyMap<string, number>;
}

/**
 * A ctime from the kernel's clock just before the command starts, later than anything stamped before it: the file is
 * stat'ed, then changed (chmod to its own mode), and a change after a stat gets a fine-grained time (multigrain
 * timestamps, Linux 6.13 and later) where the plain one is the current clock tick, which earlier writes may share.
 */
export function startStamp(fd: number): number {
  fchmodSync(fd, fstatSync(fd).mode & 0o7777);
  return fstatSync(fd).ctimeMs;
}

const join = (dir: string, name: string) => (dir ? `${dir}/${name}` : name);

/** The files under `rel` (root-relative; not through symlinked folders, not into `.git`), at most `max`; null past it. */
function filesUnder(root: string, rel: string, max: number): string[] | null {
  const files: string[] = [];
  const queue = [rel];
  for (let i = 0; i < queue.length; i++) {
    for (const e of readEntries(root, queue[i])) {
      if (e.name === ".git") continue;
      if (e.isDirectory()) queue.push(join(queue[i], e.name));
      else if (files.push(join(queue[i], e.name)) > max) return null;
    }
  }
  return files;
}

function readEntries(root: string, rel: string): Dirent[] {
  try {
    return readdirSync(rel ? `${root}/${rel}` : root, { withFileTypes: true });
  } catch {
    return [];
  }
}

function ctimeOf(root: string, rel: string): number | undefined {
  return lstatSync(`${root}/${rel}`, { throwIfNoEntry: false })?.ctimeMs;
}

/**
 * The unwatched files before a command, grouped by their topmost unwatched place: a folder with no watched file whose
 * parent has one, or an unwatched file in a watched folder. Fed by the git-dir walk (`visit`), which reads parents first.
 */
export class UnwatchedSnapshot {
  /** Top (folder or file) to its files; a top over the budget keeps its count only. */
  private readonly tops = new Map<string, string[] | number>();
  /** Each unwatched folder's top. */
  private readonly topOfFolder = new Map<string, string>();
  private recorded = 0;

  constructor(
    private readonly root: string,
    private readonly watched: Watched,
    private readonly budget = MAX_COUNTED_FILES,
  ) {}

  readonly visit = (rel: string, entries: readonly Dirent[]): void => {
    const watchedHere = this.watched.folders.has(rel);
    const top = watchedHere ? undefined : this.watched.folders.has(parentOf(rel)) ? rel : this.topOfFolder.get(parentOf(rel));
    if (!watchedHere) {
      // Undefined: below a place past the budget, whose folders are not kept (parents come first in the walk).
      if (top === undefined || (top !== rel && typeof this.tops.get(top) === "number")) return;
      this.topOfFolder.set(rel, top);
      if (!this.tops.has(top)) this.tops.set(top, []);
    }
    // A watched folder with as many files as the index has there holds no unwatched one: no path made for each.
    if (watchedHere && countFiles(entries) === this.watched.folders.get(rel)) return;
    for (const e of entries) {
      if (e.isDirectory() || e.name === ".git") continue;
      const file = join(rel, e.name);
      if (watchedHere && this.watched.has(file)) continue;
      this.note(top ?? file, file);
    }
  };

  private note(top: string, file: string): void {
    const files = this.tops.get(top) ?? [];
    if (typeof files === "number") this.tops.set(top, files + 1);
    else if (this.recorded >= this.budget) {
      this.recorded -= files.length; // past the budget: a count only, its names let go
      this.tops.set(top, files.length + 1);
    } else {
      files.push(file);
      this.recorded++;
      this.tops.set(top, files);
    }
  }

  /**
   * After the command, once the watcher has delivered its changes: what changed at the unwatched places since `since`
   * (the ctime of a file made just before the command started, so both come from the kernel's one clock).
   */
  changesSince(since: number, now: Watched): IgnoredChanges {
    const counts = { created: 0, modified: 0, deleted: 0 };
    const notCounted = new Set<string>();
    const unwatchedNow = (f: string) => !now.has(f);
    let budget = this.budget;
    // The smallest places first, so one big node_modules/ does not crowd out a build folder.
    const tops = [...this.tops].sort((a, b) => size(a[1]) - size(b[1]));
    for (const [top, before] of tops) {
      const isFolder = this.topOfFolder.has(top);
      if (typeof before === "number" || size(before) > budget) {
        notCounted.add(isFolder ? `${top}/` : top);
        continue;
      }
      const after = isFolder ? filesUnder(this.root, top, budget) : ctimeOf(this.root, top) === undefined ? [] : [top];
      if (after === null) {
        notCounted.add(`${top}/`);
        continue;
      }
      budget -= after.length;
      const had = new Set(before);
      const has = new Set(after);
      for (const f of before) if (!has.has(f) && unwatchedNow(f)) counts.deleted++;
      for (const f of after.filter(unwatchedNow)) {
        if (!had.has(f)) counts.created++;
        else if ((ctimeOf(this.root, f) ?? 0) >= since) counts.modified++;
      }
    }
    // Places that were not there before: in watched folders whose entries changed (their ctime moved).
    for (const folder of this.watched.folders.keys()) {
      if ((ctimeOf(this.root, folder || ".") ?? 0) < since) continue;
      for (const e of readEntries(this.root, folder)) {
        const rel = join(folder, e.name);
        if (e.name === ".git" || this.tops.has(rel) || this.watched.folders.has(rel)) continue;
        if (!e.isDirectory()) {
          if (unwatchedNow(rel)) counts.created++;
          continue;
        }
        const files = filesUnder(this.root, rel, budget);
        if (files === null) notCounted.add(`${rel}/`);
        else {
          budget -= files.length;
          counts.created += files.filter(unwatchedNow).length;
        }
      }
    }
    const out: IgnoredChanges = { count: counts.created + counts.modified + counts.deleted, ...counts };
    if (notCounted.size) out.not_counted = [...notCounted].sort();
    return out;
  }
}

function countFiles(entries: readonly Dirent[]): number {
  let n = 0;
  for (const e of entries) if (!e.isDirectory() && e.name !== ".git") n++;
  return n;
}

/** Every folder that holds `files` (root-relative) or a folder that does, the root ("") included, with how many of
 * them it holds itself. Pure. */
export function filesPerFolder(files: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>([["", 0]]);
  for (const f of files) {
    const dir = parentOf(f);
    counts.set(dir, (counts.get(dir) ?? 0) + 1);
    for (let d = dir; d !== ""; ) {
      d = parentOf(d);
      if (counts.has(d)) break;
      counts.set(d, 0);
    }
  }
  return counts;
}

function size(files: string[] | number): number {
  return typeof files === "number" ? files : files.length;
}
