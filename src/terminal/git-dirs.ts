import { type BigIntStats, type Dirent, lstatSync, readdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { readSmallText } from "../vfs/file-probe.js";

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

/** A gitfile or commondir file is one short line; a bigger one, or a FIFO a command left as `.git`, is not read. */
const MAX_POINTER_BYTES = 4096;

async function gitdirOf(dotGit: string): Promise<string[]> {
  const text = await readSmallText(dotGit, MAX_POINTER_BYTES);
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m) return [];
  const dir = path.resolve(path.dirname(dotGit), m[1]);
  const common = (await readSmallText(path.join(dir, "commondir"), MAX_POINTER_BYTES)).trim();
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

/** Sees each folder a walk reads: its root-relative path ("" for the root) and its entries. */
export type FolderVisitor = (rel: string, entries: readonly Dirent[]) => void;

/**
 * A folder is trusted unchanged only once its ctime is this far behind the time it was read: a change within the same
 * clock tick as the read (the kernel's timestamps are coarse, filesystems such as FAT keep 2 s) leaves ctime equal.
 */
const RACY_NS = 2_000_000_000n;

interface KnownFolder {
  ino: bigint;
  ctimeNs: bigint;
  mtimeNs: bigint;
  /** Wall clock just before the read. */
  readAtNs: bigint;
  entries: Dirent[];
}

/**
 * Every `.git` in the tree by a walk of every folder (ignored ones too: a repository in build/ or node_modules/ is one
 * all the same), symlinked folders not followed and git dirs not entered; `visit` sees each folder read. `truncated`
 * when it stopped at `maxDirs`. A path is joined only for what is walked on.
 *
 * The walk is fresh each time (a repository a command made a moment ago must be in) but cheap: a folder's entries are
 * kept from the last walk while its ctime, mtime and inode stay the same, since adding, removing or renaming an entry
 * changes the folder's mtime and ctime, and ctime cannot be set back (touch -d sets mtime, and ctime to now). So each
 * folder costs an lstat, and only changed ones a readdir. Gitfiles are read every time (their content names the git
 * dir). On 100,000 files in 5,500 folders a walk of readdirs took about 90 ms here.
 */
export class GitDirScan {
  private known = new Map<string, KnownFolder>();
  /** Folders read (readdir) by the walks so far, against those kept. */
  readonly counts = { read: 0, kept: 0 };

  /** `racyNs`: see RACY_NS (tests lower it: their folders are all fresh). */
  constructor(private readonly racyNs = RACY_NS) {}

  async find(root: string, opts: { maxDirs?: number; visit?: FolderVisitor } = {}): Promise<{ dirs: string[]; truncated: boolean }> {
    const maxDirs = opts.maxDirs ?? MAX_SCAN_DIRS;
    const found = new Set<string>();
    const seen = new Map<string, KnownFolder>();
    const queue: string[] = [""];
    try {
      for (let i = 0; i < queue.length; i++) {
        if (i >= maxDirs) return { dirs: [...found].sort(), truncated: true };
        const rel = queue[i];
        const abs = rel ? `${root}/${rel}` : root;
        const entries = this.entries(rel, abs, seen);
        opts.visit?.(rel, entries);
        for (const e of entries) {
          if (e.name === ".git") await add(path.join(abs, e.name), e.isDirectory(), e.isSymbolicLink(), found);
          else if (e.isDirectory()) queue.push(rel ? `${rel}/${e.name}` : e.name); // a git dir is not walked into
        }
        if ((i + 1) % SLICE_DIRS === 0) await yieldToLoop();
      }
    } finally {
      this.known = seen; // folders gone since are forgotten
    }
    return { dirs: [...found].sort(), truncated: false };
  }

  /** A folder's entries: the last walk's while it is unchanged, else read now. */
  private entries(rel: string, abs: string, seen: Map<string, KnownFolder>): Dirent[] {
    let st: BigIntStats;
    try {
      st = lstatSync(abs, { bigint: true });
    } catch {
      return []; // gone or unreadable: nothing to protect there
    }
    if (!st.isDirectory()) return [];
    const last = this.known.get(rel);
    if (last && last.ino === st.ino && last.ctimeNs === st.ctimeNs && last.mtimeNs === st.mtimeNs && last.readAtNs - st.ctimeNs > this.racyNs) {
      this.counts.kept++;
      seen.set(rel, last);
      return last.entries;
    }
    const readAtNs = BigInt(Date.now()) * 1_000_000n;
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      return [];
    }
    this.counts.read++;
    seen.set(rel, { ino: st.ino, ctimeNs: st.ctimeNs, mtimeNs: st.mtimeNs, readAtNs, entries });
    return entries;
  }
}

/** One walk with nothing kept from before (see GitDirScan). */
export function findGitDirs(root: string, opts: { maxDirs?: number; visit?: FolderVisitor } = {}): Promise<{ dirs: string[]; truncated: boolean }> {
  return new GitDirScan().find(root, opts);
}
