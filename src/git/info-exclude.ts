import path from "node:path";
import { addExcludeLine } from "../fs/exclude-file.js";
import { type GitCtx, git } from "./run.js";

/** Marks the lines the daemon adds, so a person reading `.git/info/exclude` knows where they came from. */
const MARK = "# added by tool-layer";

/**
 * Makes git ignore `pattern` in the root's repository without touching any tracked file: a line in `.git/info/exclude`
 * (the repository's private ignore file). Used for what the daemon's own tools keep in the worktree (CodeGraph's
 * index). Nothing happens outside a git repository. Returns whether the line was added.
 */
export async function ensureExcluded(ctx: GitCtx, pattern: string): Promise<boolean> {
  const r = await git(ctx, ["rev-parse", "--git-path", "info/exclude"], { ok: "any" });
  if (r.code !== 0) return false;
  return addExcludeLine(path.resolve(ctx.repo.root, r.stdout.trim()), pattern, MARK);
}
