/**
 * The git library's own context for the call it runs in. The tools build one from theirs (tools/git-step.ts), so
 * nothing in git/ knows the tools or the dispatcher.
 */
import type { MultiWriteContext, VersionedFiles } from "../fs/versioned-write.js";
import type { CheckRunner } from "./checks.js";
import type { RepoCtx } from "./repo.js";
import { steady } from "./run.js";

/** A call's git work: its repository, signal and dry run (RepoCtx), the dispatcher's steps, and the services it writes through. */
export interface GitStep extends RepoCtx, MultiWriteContext {
  signal: AbortSignal;
  dryRun: boolean;
  /** The one versioned write: a conflict's resolution goes through it like any file write (SPEC 5). */
  files: Pick<VersionedFiles, "write">;
  /** Runs a custom check as a terminal command runs (SPEC 11). */
  runArgv: CheckRunner;
}

/** ctx.commit with a context whose signal never aborts: a cancel or timeout must not kill git halfway through a change. */
export function commitStep<C extends { signal?: AbortSignal; commit<T>(step: () => Promise<T>): Promise<T> }, T>(
  ctx: C,
  step: (ctx: C) => Promise<T>,
): Promise<T> {
  return ctx.commit(() => step(steady(ctx)));
}

/**
 * A commitStep that rewrites the worktree (checkout, reset, merge, stash...): it runs with the worktree to itself, so no
 * file write interleaves with git's update, and the files it changes are attributed to the call's session (SPEC 7).
 */
export function worktreeStep<C extends GitStep, T>(ctx: C, step: (ctx: C) => Promise<T>): Promise<T> {
  return ctx.exclusive(() => commitStep(ctx, step));
}
