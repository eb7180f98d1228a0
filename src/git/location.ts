import { type GitCtx, git } from "./run.js";

/** Where the root's repository is, as one `git rev-parse` says it. */
export interface RepoLocation {
  /** The absolute git dir (a linked worktree's own, under the main one's `worktrees/`). */
  gitDir: string;
  /** The absolute common dir: refs, objects and info/exclude (the main repository's git dir for a linked worktree). */
  commonDir: string;
  /** The root's path inside the repository ("" at its top, "sub/" below), so root-relative paths become git paths. */
  prefix: string;
  /** false when the root is inside a git dir or is a bare repository: then there is no worktree to watch or list. */
  insideWorkTree: boolean;
}

/**
 * The one discovery of the root's repository: NOT_A_REPOSITORY when it is in none (TOOL_MISSING without git, NOT_FOUND
 * when the root is gone). GitRepo remembers the answer; nothing else asks git for it.
 */
export async function discoverRepo(ctx: GitCtx): Promise<RepoLocation> {
  const r = await git(ctx, ["rev-parse", "--is-inside-work-tree", "--absolute-git-dir", "--path-format=absolute", "--git-common-dir", "--show-prefix"]);
  const [inside, gitDir, commonDir, prefix = ""] = r.stdout.replace(/\n$/, "").split("\n");
  return { gitDir, commonDir, prefix, insideWorkTree: inside === "true" };
}
