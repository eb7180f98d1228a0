import { type Backup, saveRef } from "./backup.js";
import { type RunOutcome, settleAndContinue } from "./conflicts-continue.js";
import { type OperationRecord, type PreState, currentOperation, writeRecord } from "./conflicts-operation.js";
import { unmergedPaths } from "./conflicts-stages.js";
import type { GitStep } from "./step.js";

/**
 * Where an operation the daemon started (merge, pull, rebase, stash apply) hands over when git stopped: if it stopped on
 * conflicts, the earlier state is kept (a backup ref holds its snapshot), recorded, and auto-resolution runs; else
 * null, for the caller to report git's failure.
 */
export async function afterStop(
  ctx: GitStep,
  rec: Omit<OperationRecord, "backup"> & { backup: Backup | null },
): Promise<{ outcome: RunOutcome; backup: Backup | null } | null> {
  if (!(await unmergedPaths(ctx)).length) return null;
  const backup = rec.backup ?? (await keepSnapshot(ctx, rec.op, rec.before));
  await writeRecord(ctx, { ...rec, backup });
  const cur = await currentOperation(ctx);
  if (!cur) return null;
  return { outcome: await settleAndContinue(ctx, cur, rec.auto), backup };
}

/** The earlier state's snapshot must outlive the call (an abandon restores it): a backup ref keeps it, and shows it. */
async function keepSnapshot(ctx: GitStep, op: string, before: PreState): Promise<Backup | null> {
  return before.snapshot ? saveRef(ctx, op, before.snapshot, "worktree") : null;
}
