import { rm } from "node:fs/promises";
import path from "node:path";
import { type Backup, backupText, backupWork } from "./backup.js";
import { ToolError } from "../errors.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "./hooks.js";
import { type ConflictOp, type InProgress, clearRecord, currentOperation, operationName } from "./conflicts-operation.js";
import { unmergedPaths } from "./conflicts-stages.js";
import { keepEntries, untouchedEdits } from "./conflicts-untouched.js";
import type { RepoCtx } from "./repo.js";
import { NO_SUBMODULE_WORKTREES, git } from "./run.js";
import { type GitStep, worktreeStep } from "./step.js";
import { withTempIndex } from "./temp-index.js";
import { list } from "./text.js";

/**
 * Abandoning an operation in progress (SPEC 9): the state before it began comes back exactly (HEAD, index, worktree),
 * and what is discarded (resolutions made so far, commits a rebase replayed) is saved to a backup ref first. For an
 * operation the daemon started, its record holds that earlier state; one started outside gets git's own abort.
 */

export interface AbandonPlan {
  op: string;
  what: string;
  /** Files whose content or index entry the abandon changes. */
  files: string[];
  /** Files edited in the worktree that the operation never touched: the abandon leaves them as they are. */
  kept: string[];
  /** The daemon knows the exact earlier state (it started the operation). */
  exact: boolean;
  head_after: string | null;
}

/** What abandoning would change, read without touching anything (the worktree is diffed through a private index). */
export async function abandonPlan(ctx: RepoCtx, cur: InProgress): Promise<AbandonPlan> {
  const before = cur.record?.before;
  const target = before ? before.tree : "HEAD";
  const [worktree, index, unmerged, kept] = await Promise.all([
    withTempIndex(ctx, "copy", (onCopy) => git(onCopy, ["diff", "--name-only", "-z", "--no-renames", NO_SUBMODULE_WORKTREES, target], { ok: [0, 128] })),
    git(ctx, ["diff", "--cached", "--name-only", "-z", "--no-renames", before ? before.index_tree : "HEAD"], { ok: [0, 128] }),
    unmergedPaths(ctx),
    untouchedEdits(ctx, cur),
  ]);
  const files = new Set(
    [...worktree.stdout.split("\0"), ...index.stdout.split("\0"), ...unmerged.map((u) => u.path), ...(cur.record?.stash?.untracked ?? [])].filter(Boolean),
  );
  for (const p of kept) files.delete(p);
  return {
    op: cur.op,
    what: operationName(cur),
    files: [...files].sort(),
    kept,
    exact: !!before,
    head_after: before?.head ?? (cur.op === "rebase" ? null : cur.head),
  };
}

export function abandonPlanText(plan: AbandonPlan, done: boolean): string {
  return [
    `${done ? "abandoned" : "would abandon"} the ${plan.what}`,
    plan.exact
      ? `HEAD, the index and the worktree ${done ? "are" : "would be"} exactly as they were before it began${plan.head_after ? ` (HEAD ${plan.head_after.slice(0, 7)})` : ""}`
      : `git's own --abort ${done ? "ran" : "would run"} (the operation was started outside tool-layer, so its earlier state is git's to restore; uncommitted changes it did not touch stay)`,
    list(done ? "files changed back" : "files that would change back", plan.files),
    list(`edited since it began and untouched by it, so ${done ? "kept" : "they would stay"} as they are`, plan.kept),
    done ? "" : "what it discards (the resolutions so far, commits a rebase replayed) will be saved to a backup ref first",
  ]
    .filter(Boolean)
    .join("\n");
}

/** Abandons `cur`; runs inside a worktree step. */
export async function abandon(ctx: GitStep, cur: InProgress): Promise<{ backup: Backup | null; text: string }> {
  const untracked = cur.record?.stash?.untracked ?? [];
  const backup = await backupWork(ctx, `${cur.op}-abort`, cur.head, untracked);
  const putBack = await keepEntries(ctx, await untouchedEdits(ctx, cur));
  if (cur.op !== "stash") await git(ctx, [cur.op, "--abort"], { timeoutMs: 300_000 });
  else if (!cur.record) await git(ctx, ["reset", "--quiet", "--merge"]);
  const before = cur.record?.before;
  if (before) {
    // The worktree as it was (untracked and ignored files the operation replaced included), then the index as it was:
    // a path only the worktree snapshot has is left on disk, untracked again.
    await git(ctx, ["read-tree", "--reset", "-u", before.tree]);
    if (before.index_tree !== before.tree) await git(ctx, ["read-tree", before.index_tree]);
    // A stash's untracked files did not exist before its apply (git refuses to apply over them).
    const inTree = new Set((await git(ctx, ["ls-tree", "-r", "-z", "--name-only", before.tree])).stdout.split("\0"));
    for (const p of untracked) if (!inTree.has(p)) await rm(path.join(ctx.repo.root, p), { force: true });
  }
  await putBack();
  await clearRecord(ctx);
  return { backup, text: backup ? backupText(backup) : "" };
}

/**
 * git_merge {abort} and git_rebase {action:"abort"}: abandons the operation in progress if it is one of `accept` (a
 * preview says what would change), else says which call abandons it.
 */
export async function abandonOperation(ctx: GitStep, accept: readonly ConflictOp[], other: string): Promise<Record<string, unknown>> {
  const cur = await currentOperation(ctx);
  if (!cur) throw new ToolError("NO_CHANGE", `No ${accept.join(", ")} is in progress; there is nothing to abort (git_status shows the state).`);
  if (!accept.includes(cur.op))
    throw new ToolError("INVALID_PARAMS", `A ${cur.op} is in progress, not a ${accept[0]}: abandon it with ${other}.`, { in_progress: cur.op });
  const plan = await abandonPlan(ctx, cur);
  const hooks = await plannedHooks(ctx, cur.op === "rebase" ? OPERATION_HOOKS.rebase : OPERATION_HOOKS.reset);
  const shown = { aborted: cur.op, ...plan, hooks };
  if (ctx.dryRun) return { ...shown, text: [abandonPlanText(plan, false), hooksText(hooks, "would run")].filter(Boolean).join("\n") };
  return worktreeStep(ctx, async (ctx) => {
    const { backup, text } = await abandon(ctx, cur);
    const head = (await git(ctx, ["rev-parse", "--verify", "--quiet", "HEAD"], { ok: [0, 1] })).stdout.trim() || null;
    return { ...shown, head, backup, text: [abandonPlanText(plan, true), text, hooksText(hooks, "ran")].filter(Boolean).join("\n") };
  });
}
