/**
 * Temporary indexes: the one way a git command runs on another index than the repository's (GIT_INDEX_FILE in the
 * context's environment, so every git command of `work`, and every hook git runs for it, uses it). The file lives in
 * a private temp folder, removed when `work` ends, whether it returns, throws or is aborted.
 *
 * A private copy serves a read-only call: `git diff` against the worktree rewrites the index when it finds files whose
 * stat changed but whose content did not (a refresh under index.lock), and `--no-optional-locks` does not stop it
 * (git 2.39); a read-only call must neither write the index nor take its lock.
 */
import { copyFile, mkdtemp, rm, stat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { isNodeError } from "../errors.js";
import { type GitCtx, git } from "./run.js";

/**
 * What the temporary index starts as: `copy`, a private copy of the real index (none when there is none, which git
 * reads as empty); `empty`, no entries; `{tree}`, a tree's entries (`read-tree`; null: none, for an unborn HEAD).
 */
export type TempIndexKind = "copy" | "empty" | { tree: string | null };

/** What `work` learns of the index it got: for `copy`, whether there was a real index to copy. */
export interface TempIndex {
  copied: boolean;
}

/** Runs `work` with a context whose git commands use a temporary index made as `kind` says; see the header. */
export async function withTempIndex<C extends GitCtx & { repo: { gitDir(): Promise<string> } }, T>(
  ctx: C,
  kind: TempIndexKind,
  work: (ctx: C, index: TempIndex) => Promise<T>,
): Promise<T> {
  const gitDir = kind === "copy" ? await ctx.repo.gitDir() : null;
  const dir = await mkdtemp(path.join(tmpdir(), "tool-layer-index-"));
  try {
    const file = path.join(dir, "index");
    const onIndex: C = { ...ctx, env: { ...ctx.env, GIT_INDEX_FILE: file } };
    let copied = false;
    if (gitDir) copied = await copyIndex(gitDir, file);
    else if (typeof kind === "object") await git(onIndex, kind.tree ? ["read-tree", kind.tree] : ["read-tree", "--empty"]);
    return await work(onIndex, { copied });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Copies the index to `to` with the original's modification time (a little earlier, never later): git judges an entry
 * "racily clean" by comparing its mtime with the index file's, and a copy with a fresh mtime would make a file edited
 * in the same second as the last index write look unchanged. false when there is no index yet (it reads as empty).
 */
async function copyIndex(gitDir: string, to: string): Promise<boolean> {
  const from = path.join(gitDir, "index");
  try {
    const st = await stat(from);
    await copyFile(from, to);
    // One millisecond earlier: utimes rounds, and an earlier index only makes git re-read more files, never fewer.
    await utimes(to, st.atime, new Date(st.mtimeMs - 1));
    return true;
  } catch (e) {
    if (isNodeError(e, "ENOENT")) return false;
    throw e;
  }
}
