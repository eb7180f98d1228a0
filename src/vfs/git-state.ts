import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
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
  /** See indexFingerprint; null without an index. */
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

/**
 * HEAD, branch and operation from the files themselves (no git process): cheap enough for every window. Read
 * synchronously, a few small files: a lane of async reads would wait behind a flood's resolver for every hop.
 */
export function readGitState(gitDir: string): GitState {
  const headText = readText(path.join(gitDir, "HEAD")).trim();
  let branch: string | null = null;
  let head: string | null = null;
  const ref = /^ref:\s*(\S+)$/.exec(headText)?.[1];
  if (ref) {
    branch = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
    head = resolveRef(gitDir, ref);
  } else if (/^[0-9a-f]{40,64}$/.test(headText)) head = headText;
  let operation: string | null = null;
  for (const [file, name] of OPERATION_MARKERS) {
    if (existsSync(path.join(gitDir, file))) {
      operation = name;
      break;
    }
  }
  return { head, branch, operation, indexHash: indexFingerprint(path.join(gitDir, "index")) };
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** The index's header (signature, version, entry count) and the largest checksum git writes (SHA-256). */
const INDEX_HEADER_BYTES = 12;
const INDEX_CHECKSUM_MAX_BYTES = 32;

/**
 * What tells one index from another without reading it: git ends the file with a checksum of everything before it
 * (SHA-1, 20 bytes, or SHA-256, 32), so its header and last 32 bytes change whenever any entry does, and stay the same
 * when `git status` rewrites it identically. A million-file index is over 100 MB: reading it per event in the git
 * folder cost more than anything else a flood did. With index.skipHash (git 2.40) the checksum is zeros: then the whole
 * file is hashed, as before.
 */
export function indexFingerprint(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return null;
  }
  try {
    const { size } = fstatSync(fd);
    if (size <= INDEX_HEADER_BYTES + INDEX_CHECKSUM_MAX_BYTES) return fileHash(readFileSync(fd));
    const ends = Buffer.alloc(INDEX_HEADER_BYTES + INDEX_CHECKSUM_MAX_BYTES);
    readSync(fd, ends, 0, INDEX_HEADER_BYTES, 0);
    readSync(fd, ends, INDEX_HEADER_BYTES, INDEX_CHECKSUM_MAX_BYTES, size - INDEX_CHECKSUM_MAX_BYTES);
    // SHA-1's 20 bytes are the last of the 32 read: zeros there mean no checksum at all
    if (ends.subarray(ends.length - 20).every((b) => b === 0)) return fileHash(readFileSync(fd));
    return `${size}:${ends.toString("hex")}`;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** A loose ref file, else packed-refs; null for an unborn branch. */
function resolveRef(gitDir: string, ref: string): string | null {
  const loose = readText(path.join(gitDir, ref)).trim();
  if (/^[0-9a-f]{40,64}$/.test(loose)) return loose;
  for (const line of readText(path.join(gitDir, "packed-refs")).split("\n")) {
    const [sha, name] = line.split(" ");
    if (name === ref && /^[0-9a-f]{40,64}$/.test(sha)) return sha;
  }
  return null;
}
