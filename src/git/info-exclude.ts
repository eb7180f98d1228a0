import { appendFile, mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { isNodeError } from "../errors.js";
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

/**
 * Appends `pattern` (after `comment`) to an exclude file unless a line already says it; false when one did. A missing
 * file is created; one that cannot be read for another reason throws, and nothing is written over it.
 */
export async function addExcludeLine(file: string, pattern: string, comment: string): Promise<boolean> {
  const text = await readFile(file, "utf8").catch((e: unknown) => {
    if (isNodeError(e, "ENOENT")) return "";
    throw e;
  });
  if (text.split("\n").some((l) => l.trim() === pattern)) return false;
  await mkdir(path.dirname(file), { recursive: true });
  await appendFile(file, `${text && !text.endsWith("\n") ? "\n" : ""}${comment}\n${pattern}\n`);
  return true;
}
