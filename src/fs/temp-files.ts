import { lstat, readdir, unlink } from "node:fs/promises";
import path from "node:path";
import { addExcludeLine } from "./exclude-file.js";
import type { Supervisor } from "../platform/supervisor.js";
import { TEMP_FILE_GLOB, TEMP_FILE_PATTERN, tempFileOwner } from "./atomic-write.js";
import { openDirConfined } from "./confined.js";
import { pidAlive } from "../platform/pid-alive.js";

/**
 * A temp file whose owner is still running is left alone unless it is older than this: no write takes ten minutes
 * (a 10 MiB file is written in milliseconds), so by then its pid belongs to another process.
 */
export const STALE_TEMP_MS = 10 * 60 * 1000;
/** Entries the walk outside git visits at most: a start must not crawl a huge tree (git bounds its own listing). */
export const MAX_WALK_ENTRIES = 200_000;
/** Folders the walk outside git skips: dependencies, never a file tool's usual target, and the git folder. */
const SKIPPED_DIRS = new Set([".git", "node_modules"]);
/** A listing of a huge repository may take long; past this the cleanup gives up (the files stay excluded). */
const GIT_TIMEOUT_MS = 60_000;

const EXCLUDE_COMMENT = "# tool-layer: temp files of its atomic writes (a daemon killed mid-write may leave some)";

export interface TempFileDeps {
  root: string;
  processes: Supervisor;
  log: (message: string) => void;
}

/**
 * At start: keeps the file tools' temp files out of git (a pattern in the repository's info/exclude, which git_status,
 * git_add and search all honour, and which no tracked file is) and removes those a killed daemon left behind.
 * Never throws: a read-only git folder or an unreadable tree only leaves the temp files where they are.
 */
export async function tidyTempFiles(deps: TempFileDeps): Promise<{ removed: string[]; excluded: boolean }> {
  const commonDir = await gitCommonDir(deps).catch(() => null);
  let excluded = false;
  if (commonDir)
    excluded = await addExcludeLine(path.join(commonDir, "info", "exclude"), TEMP_FILE_GLOB, EXCLUDE_COMMENT)
      .then(() => true)
      .catch((e: unknown) => (deps.log(`could not add the temp file pattern to info/exclude: ${String(e)}`), false));
  const found = commonDir ? await listWithGit(deps).catch(() => walkForTempFiles(deps.root)) : await walkForTempFiles(deps.root);
  const removed: string[] = [];
  const now = Date.now();
  for (const rel of found) {
    if (await removeIfStale(deps.root, rel, now)) removed.push(rel);
  }
  if (removed.length)
    deps.log(`removed ${removed.length} temp file(s) left by a daemon killed mid-write: ${removed.slice(0, 5).join(", ")}${removed.length > 5 ? ", …" : ""}`);
  return { removed, excluded };
}

async function git(deps: TempFileDeps, args: string[]): Promise<string> {
  const r = await deps.processes.run(
    {
      cmd: "git",
      args: ["-c", "core.fsmonitor=false", "-c", "core.quotePath=false", ...args],
      cwd: deps.root,
      env: { GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" },
      group: false,
      label: "git (temp files)",
    },
    { timeoutMs: GIT_TIMEOUT_MS, maxBytes: 64 * 1024 * 1024 },
  );
  if (r.code !== 0 || r.truncated) throw new Error(`git ${args[0]} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

/** The repository's common git folder (where info/exclude lives, also for a linked worktree), or null outside git. */
async function gitCommonDir(deps: TempFileDeps): Promise<string | null> {
  const [inside, dir] = (await git(deps, ["rev-parse", "--is-inside-work-tree", "--git-common-dir"])).trim().split("\n");
  return inside === "true" && dir ? path.resolve(deps.root, dir) : null;
}

/** Temp files git sees under the root (ignored folders it skips as a whole, as its own listing does). */
async function listWithGit(deps: TempFileDeps): Promise<string[]> {
  const out = await git(deps, [
    "ls-files",
    "-z",
    "--others",
    "--ignored",
    "--exclude-standard",
    `--exclude=${TEMP_FILE_GLOB}`,
    "--directory",
    "--no-empty-directory",
  ]);
  return out.split("\0").filter((f) => f && TEMP_FILE_PATTERN.test(f));
}

/** Outside git: a walk that follows no symlink, skips SKIPPED_DIRS and stops after MAX_WALK_ENTRIES entries. */
export async function walkForTempFiles(root: string, maxEntries = MAX_WALK_ENTRIES): Promise<string[]> {
  const found: string[] = [];
  const queue = [""];
  let visited = 0;
  while (queue.length && visited < maxEntries) {
    const rel = queue.shift()!;
    const entries = await readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (++visited > maxEntries) break;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!SKIPPED_DIRS.has(e.name)) queue.push(child);
      } else if (e.isFile() && TEMP_FILE_PATTERN.test(child)) found.push(child);
    }
  }
  return found;
}

/** Removes a temp file whose daemon is gone (or that is older than STALE_TEMP_MS), through its confined folder. */
async function removeIfStale(root: string, rel: string, now: number): Promise<boolean> {
  const name = path.basename(rel);
  const owner = tempFileOwner(name);
  const abs = path.join(root, rel);
  const st = await lstat(abs).catch(() => null);
  if (!st?.isFile()) return false;
  const old = now - st.mtimeMs > STALE_TEMP_MS;
  // An earlier version's names had 12 random digits: read as a pid, they name no running process (pids are 22 bits).
  if (!old && owner !== undefined && (owner === process.pid || pidAlive(owner))) return false;
  try {
    const dir = openDirConfined(root, path.dirname(abs), { rel });
    try {
      await unlink(dir.path(name));
    } finally {
      dir.close();
    }
    return true;
  } catch {
    return false;
  }
}
