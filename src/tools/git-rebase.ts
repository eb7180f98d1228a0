import { z } from "zod";
import { backupText, backupWork, saveRef } from "../git/backup.js";
import { abandonOperation } from "../git/conflicts-abandon.js";
import { nextStepText, settleAndContinue, settledText, stoppedError } from "../git/conflicts-continue.js";
import { finalizeOperation } from "../git/conflicts-finalize.js";
import { type AutoMode, autoModeOf } from "../git/conflicts-model.js";
import { type InProgress, busyError, busyWith, clearRecord, currentOperation, operationName, preState } from "../git/conflicts-operation.js";
import { predictReplay, replayText } from "../git/conflicts-predict.js";
import { afterStop } from "../git/conflicts-start.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "../git/hooks.js";
import { inTheWayText, refuseUntracked } from "../git/in-the-way.js";
import { analyze, integrationInTheWay, integrationText, requireNoTrackedChanges } from "../git/integrate.js";
import { refParam } from "../git/params.js";
import { type GitStep, worktreeStep } from "../git/step.js";
import { resolveCommit, headInfo } from "../git/refs.js";
import { git } from "../git/run.js";
import { ToolError } from "../errors.js";
import { autoResolveParam } from "./conflict-params.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitRebaseTool = defineTool({
  id: "git_rebase",
  description:
    'Replays the current branch\'s own commits on top of another branch or commit (onto), after saving the branch to a backup ref. Where a commit conflicts, auto-resolution settles every block that is safe to resolve (auto_resolve) and the rebase goes on when nothing is left; else it stops there (CONFLICT) with what is left, block by block: resolve with git_conflict_resolve, then action "continue" (or git_conflict_finalize); "skip" drops the commit being replayed; "abort" goes back to exactly where the branch, index and worktree were, keeping a backup of what it discards. Preview: the commits to replay, the conflicts each would hit and which blocks auto-resolution would settle (simulated in the object store, nothing touched).',
  params: {
    onto: refParam().optional().describe("Branch or commit to rebase onto."),
    action: z
      .enum(["continue", "skip", "abort"])
      .optional()
      .describe("For a rebase that stopped: continue (after resolving), skip the commit being replayed, or abort the whole rebase."),
    auto_resolve: autoResolveParam("Where a replayed commit conflicts"),
  },
  mutating: true,
  timeoutMs: 600_000,
  state: gitToolState,
  async run({ onto, action, auto_resolve }, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    if (action) {
      if (onto !== undefined)
        throw new ToolError("INVALID_PARAMS", `onto: give either onto (to start a rebase) or action (for the one in progress), not both.`);
      if (action === "abort") {
        if (auto_resolve !== undefined) throw new ToolError("INVALID_PARAMS", "auto_resolve: abort touches no block; give action alone.");
        return abandonOperation(ctx, ["rebase"], "git_merge {abort:true}");
      }
      const cur = await currentOperation(ctx);
      if (cur?.op !== "rebase")
        throw new ToolError(
          cur ? "INVALID_PARAMS" : "NO_CHANGE",
          cur ? `A ${cur.op} is in progress, not a rebase: finish it with git_conflict_finalize.` : "No rebase is in progress; start one with onto.",
        );
      const mode = auto_resolve === undefined ? undefined : autoModeOf(auto_resolve);
      return action === "continue" ? finalizeOperation(ctx, cur, { mode }) : skip(ctx, cur, mode ?? cur.record?.auto ?? "all");
    }
    if (onto === undefined)
      throw new ToolError(
        "INVALID_PARAMS",
        `onto: name the branch or commit to rebase onto, or pass action ("continue", "skip", "abort") for a rebase in progress.`,
      );
    const busy = await busyWith(ctx);
    if (busy) throw busyError(busy);
    const { head, branch } = await headInfo(ctx);
    if (!head || !branch) throw new ToolError("INVALID_PARAMS", "Rebase needs a checked-out branch with commits; git_checkout one first.");
    const target = await resolveCommit(ctx, onto, "onto");
    await requireNoTrackedChanges(ctx, "rebase");
    const mode = autoModeOf(auto_resolve);
    const analysis = await analyze(ctx, head, target, true, (c, o, h) => predictReplay({ ...c, repo: ctx.repo }, o, h, mode));
    const a = analysis.integration;
    const way = await integrationInTheWay(ctx, head, target, analysis);
    refuseUntracked(way, `rebase onto ${onto}`);
    const conflicting = a.replay?.some((s) => s.conflicts.length);
    const hooks = a.up_to_date ? [] : await plannedHooks(ctx, conflicting ? [...OPERATION_HOOKS.rebase, ...OPERATION_HOOKS.commit] : OPERATION_HOOKS.rebase);
    const predicted = a.replay ? replayText(a.replay) : "";
    const text = (done: boolean) =>
      [integrationText(a, onto, true, done), done ? "" : predicted, inTheWayText(way, done ? "were" : "would be"), hooksText(hooks, done ? "ran" : "would run")]
        .filter(Boolean)
        .join("\n");
    const shown = { onto, branch, ...a, overwritten: way.ignored, hooks };
    if (ctx.dryRun || a.up_to_date) return { ...shown, text: text(false) };

    return worktreeStep(ctx, async (ctx) => {
      const before = await preState(ctx, head, branch, way.ignored);
      // The old tip, or (with ignored files in the way) the worktree on top of it: either brings the branch back.
      const backup =
        way.ignored.length && before.snapshot ? await saveRef(ctx, "rebase", before.snapshot, "worktree") : await saveRef(ctx, "rebase", head, "commit");
      const r = await git(ctx, ["rebase", "--end-of-options", target], { ok: "any", timeoutMs: 300_000 });
      let settled: unknown[] = [];
      let note = "";
      if (r.code !== 0) {
        const stop = await afterStop(ctx, { op: "rebase", what: `rebase of ${branch} onto ${onto}`, before, backup, auto: mode });
        if (!stop) {
          if ((await currentOperation(ctx))?.op === "rebase") await git(ctx, ["rebase", "--abort"]);
          throw new ToolError("GIT_FAILED", `git rebase failed (exit ${r.code}); it was undone: ${(r.stderr || r.stdout).trim()}`, { backup });
        }
        if (!stop.outcome.done) throw stoppedError(stop.outcome, `rebase of ${branch} onto ${onto}`, backup);
        settled = stop.outcome.settled;
        note = [`git stopped on conflicts; auto-resolution settled every block, so the rebase went on`, settledText(stop.outcome.settled)].join("\n");
      }
      const after = (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
      return {
        ...shown,
        head: after,
        backup,
        ...(settled.length ? { auto_resolved: settled } : {}),
        text: [`rebased ${branch} onto ${onto}: now at ${after.slice(0, 7)}; the old tip was ${head.slice(0, 7)}`, text(true), note, backupText(backup)]
          .filter(Boolean)
          .join("\n"),
      };
    });
  },
});

/** Drops the commit being replayed (what was resolved of it is saved first), and goes on as after any stop. */
async function skip(ctx: GitStep, cur: InProgress, mode: AutoMode) {
  const step = await nextStepText(cur);
  const what = `skip the commit being replayed (its changes and any resolution of them are dropped; saved to a backup ref first), then ${step.replace(/^git rebase --continue: commit this step, then /, "")}`;
  const hooks = await plannedHooks(ctx, [...OPERATION_HOOKS.rebase, ...OPERATION_HOOKS.commit]);
  if (ctx.dryRun) return { action: "skip", operation: cur.op, hooks, text: [`would ${what}`, hooksText(hooks, "would run")].filter(Boolean).join("\n") };
  return worktreeStep(ctx, async (ctx) => {
    const backup = await backupWork(ctx, "rebase-skip", cur.head);
    const r = await git(ctx, ["rebase", "--skip"], { ok: "any", timeoutMs: 300_000 });
    const next = await currentOperation(ctx);
    if (r.code !== 0 && next?.op !== "rebase")
      throw new ToolError("GIT_FAILED", `git rebase --skip failed (exit ${r.code}): ${(r.stderr || r.stdout).trim()}`, { backup });
    const outcome = next ? await settleAndContinue(ctx, next, mode) : null;
    if (outcome && !outcome.done) throw stoppedError(outcome, operationName(cur), cur.record?.backup ?? backup);
    if (!next) await clearRecord(ctx);
    const head = (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
    const text = [
      `skipped the commit; the rebase is done: now at ${head.slice(0, 7)}`,
      ...(outcome?.steps ?? []),
      settledText(outcome?.settled ?? []),
      backup ? backupText(backup) : "",
      hooksText(hooks, "ran"),
    ]
      .filter(Boolean)
      .join("\n");
    return { action: "skip", operation: cur.op, head, backup, auto_resolved: outcome?.settled ?? [], hooks, text };
  });
}
