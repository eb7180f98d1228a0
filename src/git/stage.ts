import { lstat } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../errors.js";
import { pathspec } from "./params.js";
import type { RepoCtx } from "./repo.js";
import { NO_SUBMODULE_WORKTREES, git, type GitCtx } from "./run.js";
import { withTempIndex } from "./temp-index.js";

export interface StageChange {
  action: "add" | "remove";
  path: string;
}

/**
 * What `git add -A -- paths` would stage, found without looking into a submodule's or embedded repository's worktree:
 * `git add` runs `git status` inside every submodule, under that repository's own configuration (its filters run),
 * which is not the root's to trust. A submodule whose HEAD moved is still listed, and staged as its new commit. Against
 * the context's index: a temporary one as it is, the real one through a private copy (a read must not refresh it).
 */
export async function pendingChanges(ctx: RepoCtx, rels: string[] | undefined): Promise<StageChange[]> {
  if (!ctx.env?.GIT_INDEX_FILE) return withTempIndex(ctx, "copy", (onCopy) => pendingChanges(onCopy, rels));
  const spec = ["--", ...(rels ?? ["."]).map(pathspec)];
  const [tracked, others] = await Promise.all([
    git(ctx, ["diff", "--name-status", "-z", "--no-renames", NO_SUBMODULE_WORKTREES, ...spec]),
    git(ctx, ["ls-files", "-z", "--others", "--exclude-standard", ...spec]),
  ]);
  const changes = new Map<string, StageChange>();
  const parts = tracked.stdout.split("\0");
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const [status, p] = [parts[i], parts[i + 1]];
    if (p) changes.set(p, { action: status === "D" ? "remove" : "add", path: p });
  }
  // An untracked embedded repository is listed as `emb/`; staged, it becomes a gitlink, as `git add` makes it.
  for (const p of others.stdout.split("\0")) if (p) changes.set(p.replace(/\/$/, ""), { action: "add", path: p.replace(/\/$/, "") });
  return [...changes.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Stages exactly `changes` into the context's index (update-index: no pathspec expansion, no look into submodules). */
export async function stageChanges(ctx: GitCtx, changes: StageChange[]): Promise<void> {
  if (!changes.length) return;
  await git(ctx, ["update-index", "--add", "--remove", "-z", "--stdin"], { input: changes.map((c) => `${c.path}\0`).join("") });
}

/** NOT_FOUND for a path that is neither on disk nor in the index: `git add` would say its pathspec matched nothing. */
export async function requireKnownPaths(ctx: GitCtx, rels: string[]): Promise<void> {
  for (const rel of rels) {
    if (
      await lstat(path.join(ctx.repo.root, rel)).then(
        () => true,
        () => false,
      )
    )
      continue;
    const r = await git(ctx, ["ls-files", "-z", "--", pathspec(rel)]);
    if (!r.stdout) throw new ToolError("NOT_FOUND", `${rel} matches no file, changed or tracked; check the path with git_status.`);
  }
}

/**
 * INVALID_PARAMS for a named path that is untracked and ignored: `git add` refuses it too (without -f), and staging
 * nothing without a word would look like success.
 */
export async function refuseIgnored(ctx: GitCtx, rels: string[], changes: StageChange[]): Promise<void> {
  const quiet = rels.filter((rel) => rel !== "." && !changes.some((c) => c.path === rel || c.path.startsWith(`${rel}/`)));
  if (!quiet.length) return;
  const r = await git(ctx, ["check-ignore", "-z", "--stdin"], { ok: [0, 1], input: quiet.map((p) => `${p}\0`).join("") });
  const ignored = r.stdout.split("\0").filter(Boolean);
  if (ignored.length) {
    throw new ToolError(
      "INVALID_PARAMS",
      `paths: ${ignored.join(", ")} ${ignored.length === 1 ? "is" : "are"} ignored (.gitignore) and not tracked, so nothing was staged; remove the ignore rule to stage ${ignored.length === 1 ? "it" : "them"}.`,
      { ignored },
    );
  }
}

/** `git add` of exactly these paths in one process: a conflicted path's resolution, or its removal when it is gone. */
export async function addPaths(ctx: GitCtx, rels: readonly string[]): Promise<void> {
  if (!rels.length) return;
  await git(ctx, ["add", "--pathspec-from-file=-", "--pathspec-file-nul"], { input: rels.map((p) => `${pathspec(p)}\0`).join("") });
}
