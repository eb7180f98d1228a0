import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { fileHash } from "../core/hash.js";

/**
 * Files in the git dir whose presence means an operation is in progress, in the order git's own prompt checks them:
 * one table for the git tools (what a new operation must not start on top of) and the VFS (git.changed's `operation`).
 */
export const OPERATION_MARKERS: readonly (readonly [file: string, operation: string])[] = [
  ["rebase-merge", "rebase"],
  ["rebase-apply", "rebase"],
  ["MERGE_HEAD", "merge"],
  ["CHERRY_PICK_HEAD", "cherry-pick"],
  ["REVERT_HEAD", "revert"],
  ["BISECT_LOG", "bisect"],
];

/** What `git.changed` reports (SPEC 7), plus the index's fingerprint to tell a rewrite from a change. */
export interface GitState {
  head: string | null;
  branch: string | null;
  operation: string | null;
  indexHash: string | null;
}

/** Which parts of the git folder a batch of events touched. */
export interface GitTouch {
  head: boolean;
  index: boolean;
  refs: boolean;
  operation: boolean;
  /** info/exclude: the ignore rules change. */
  exclude: boolean;
}

const OPERATION_FILES = new Set([...OPERATION_MARKERS.map(([f]) => f), "REBASE_HEAD", "sequencer"]);

/** Folders of the git dir that never bear on git.changed; not watched (objects alone holds 256 folders). */
export const GIT_DIR_UNWATCHED = ["objects", "logs", "hooks", "lfs", "modules", "worktrees"];

export function emptyTouch(): GitTouch {
  return { head: false, index: false, refs: false, operation: false, exclude: false };
}

/** Files a git command writes to take a lock; the rename that follows is what counts. */
const LOCK_SUFFIX = ".lock";

/** Marks what an event at `rel` (relative to the git dir, with `/`) touched; false when it bears on nothing. */
export function touchGit(touch: GitTouch, rel: string): boolean {
  if (rel.endsWith(LOCK_SUFFIX)) return false;
  const top = rel.split("/")[0];
  if (rel === "HEAD") touch.head = true;
  else if (rel === "index") touch.index = true;
  else if (top === "refs" || rel === "packed-refs") touch.refs = true;
  else if (OPERATION_FILES.has(top)) touch.operation = true;
  else if (rel === "info/exclude") touch.exclude = true;
  else return false;
  return true;
}

/** HEAD, branch and operation from the files themselves (no git process): cheap enough for every window. */
export async function readGitState(gitDir: string): Promise<GitState> {
  const headText = (await readFile(path.join(gitDir, "HEAD"), "utf8").catch(() => "")).trim();
  let branch: string | null = null;
  let head: string | null = null;
  const ref = /^ref:\s*(\S+)$/.exec(headText)?.[1];
  if (ref) {
    branch = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
    head = await resolveRef(gitDir, ref);
  } else if (/^[0-9a-f]{40,64}$/.test(headText)) head = headText;
  let operation: string | null = null;
  for (const [file, name] of OPERATION_MARKERS) {
    if (await stat(path.join(gitDir, file)).then(() => true, () => false)) {
      operation = name;
      break;
    }
  }
  const index = await readFile(path.join(gitDir, "index")).catch(() => null);
  return { head, branch, operation, indexHash: index ? fileHash(index) : null };
}

/** A loose ref file, else packed-refs; null for an unborn branch. */
async function resolveRef(gitDir: string, ref: string): Promise<string | null> {
  const loose = (await readFile(path.join(gitDir, ref), "utf8").catch(() => "")).trim();
  if (/^[0-9a-f]{40,64}$/.test(loose)) return loose;
  const packed = await readFile(path.join(gitDir, "packed-refs"), "utf8").catch(() => "");
  for (const line of packed.split("\n")) {
    const [sha, name] = line.split(" ");
    if (name === ref && /^[0-9a-f]{40,64}$/.test(sha)) return sha;
  }
  return null;
}
