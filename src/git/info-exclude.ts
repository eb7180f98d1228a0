import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
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
  const file = path.resolve(ctx.ws.root, r.stdout.trim());
  const text = await readFile(file, "utf8").catch(() => "");
  if (text.split("\n").some((l) => l.trim() === pattern)) return false;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${text}${text && !text.endsWith("\n") ? "\n" : ""}${MARK}\n${pattern}\n`);
  return true;
}
