import { type Dirent, lstatSync, readdirSync, realpathSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parentOf } from "../vfs/file-index.js";

/**
 * The git directories a sandboxed command must see read-only (SPEC 11: history and refs change only through the git
 * tools): every `.git` folder or file in the workspace, nested repositories' included, and the folders a `.git` file
 * names (`gitdir:` of a linked worktree or submodule) with their common dir.
 */

/** Folders read at most by a walk; a tree beyond this is listed as far as it got. */
export const MAX_SCAN_DIRS = 200_000;
/**
 * Folders read synchronously between yields to the event loop: an async readdir's thread-pool round trip costs more than
 * the read of a small folder, and a slice blocks the loop a few milliseconds at most.
 */
const SLICE_DIRS = 128;

async function gitdirOf(dotGit: string): Promise<string[]> {
  const text = await readFile(dotGit, "utf8").catch(() => "");
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m) return [];
  const dir = path.resolve(path.dirname(dotGit), m[1]);
  const common = (await readFile(path.join(dir, "commondir"), "utf8").catch(() => "")).trim();
  return common ? [dir, path.resolve(dir, common)] : [dir];
}

function real(p: string): string | null {
  try {
    return realpathSync.native(p);
  } catch {
    return null;
  }
}

/** Adds `dotGit` (a `.git` entry that exists) and, for a `.git` file, the git dirs it names. */
async function add(dotGit: string, isDir: boolean, isLink: boolean, found: Set<string>): Promise<void> {
  const target = isLink ? real(dotGit) : dotGit;
  if (!target) return;
  found.add(target);
  if (!isDir) for (const d of await gitdirOf(target)) found.add(real(d) ?? d);
}

const yieldToLoop = () => new Promise((r) => setImmediate(r));

/** By a walk of every folder (symlinked ones not followed); `truncated` when it stopped at `maxDirs`. */
export async function findGitDirs(root: string, maxDirs = MAX_SCAN_DIRS): Promise<{ dirs: string[]; truncated: boolean }> {
  const found = new Set<string>();
  const queue = [root];
  for (let i = 0; i < queue.length; i++) {
    if (i >= maxDirs) return { dirs: [...found].sort(), truncated: true };
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(queue[i], { withFileTypes: true });
    } catch {
      /* gone or unreadable: nothing to protect there */
    }
    for (const e of entries) {
      const abs = path.join(queue[i], e.name);
      if (e.name === ".git") await add(abs, e.isDirectory(), e.isSymbolicLink(), found);
      else if (e.isDirectory()) queue.push(abs); // a git dir is not walked into
    }
    if ((i + 1) % SLICE_DIRS === 0) await yieldToLoop();
  }
  return { dirs: [...found].sort(), truncated: false };
}

/** The folders that hold `files` (root-relative paths) and every folder above them, the root ("") included. Pure. */
export function foldersOf(files: Iterable<string>): string[] {
  const folders = new Set<string>([""]);
  for (const f of files) for (let d = parentOf(f); !folders.has(d); d = parentOf(d)) folders.add(d);
  return [...folders];
}

/**
 * The same as a walk, from `folders` (root-relative, foldersOf the VFS's watched files): a `.git` is looked for in each,
 * so ignored folders (node_modules/, build output) cost nothing. A repository with no watched file (nested in an
 * ignored folder, or with an empty worktree) is not found this way.
 */
export async function gitDirsIn(root: string, folders: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (let i = 0; i < folders.length; i++) {
    const dotGit = path.join(root, folders[i], ".git");
    const st = lstatSync(dotGit, { throwIfNoEntry: false });
    if (st) await add(dotGit, st.isDirectory(), st.isSymbolicLink(), found);
    if ((i + 1) % (SLICE_DIRS * 8) === 0) await yieldToLoop();
  }
  return [...found].sort();
}
