import { type Dirent, realpathSync } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";

/**
 * The git directories a sandboxed command must see read-only (SPEC 11: history and refs change only through the git
 * tools): every `.git` folder or file in the workspace, nested repositories' included, and the folders a `.git` file
 * names (`gitdir:` of a linked worktree or submodule) with their common dir. Found by a walk of the tree's folders.
 */

/** Folders read at most; a tree beyond this is listed as far as it got (the root's own `.git` is always first). */
export const MAX_SCAN_DIRS = 200_000;
/** Folders read between yields to the event loop, so a large tree does not hold up other calls. */
const SLICE_DIRS = 256;

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

/** Every git dir to protect, as real paths, sorted; `truncated` when the walk stopped at MAX_SCAN_DIRS. */
export async function findGitDirs(root: string, maxDirs = MAX_SCAN_DIRS): Promise<{ dirs: string[]; truncated: boolean }> {
  const found = new Set<string>();
  const queue = [root];
  let read = 0;
  for (let i = 0; i < queue.length; i++) {
    if (read >= maxDirs) return { dirs: [...found].sort(), truncated: true };
    const dir = queue[i];
    const entries: Dirent[] = await readdir(dir, { withFileTypes: true }).catch(() => []);
    read++;
    for (const e of entries) {
      const abs = path.join(dir, e.name);
      if (e.name === ".git") {
        const target = e.isSymbolicLink() ? real(abs) : abs;
        if (!target) continue;
        found.add(target);
        if (!e.isDirectory()) for (const d of await gitdirOf(target)) found.add(real(d) ?? d);
      } else if (e.isDirectory()) {
        queue.push(abs); // symlinked folders are not followed: what they point to is outside or walked anyway
      }
    }
    if (read % SLICE_DIRS === 0) await new Promise((r) => setImmediate(r));
  }
  return { dirs: [...found].sort(), truncated: false };
}
