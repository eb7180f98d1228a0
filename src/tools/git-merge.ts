import { z } from "zod";
import { backupText, saveRef } from "../git/backup.js";
import { abandonOperation } from "../git/conflicts-abandon.js";
import { settledText, stoppedError } from "../git/conflicts-continue.js";
import { autoModeOf } from "../git/conflicts-model.js";
import { busyError, busyWith, preState } from "../git/conflicts-operation.js";
import { predictMergeAuto, predictionText } from "../git/conflicts-predict.js";
import { afterStop } from "../git/conflicts-start.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "../git/hooks.js";
import { inTheWayText, refuseUntracked } from "../git/in-the-way.js";
import { analyze, integrationInTheWay, integrationText, requireNotOverwriting } from "../git/integrate.js";
import { refParam } from "../git/params.js";
import { worktreeStep } from "../git/step.js";
import { resolveCommit, headInfo } from "../git/refs.js";
import { git } from "../git/run.js";
import { ToolError } from "../errors.js";
import { autoResolveParam } from "./conflict-params.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitMergeTool = defineTool({
  id: "git_merge",
  description:
    "Merges a branch or commit into the current branch (fast-forward when possible unless no_ff). When git stops on conflicts, auto-resolution settles every block that is safe to resolve (auto_resolve) and, when nothing is left, the merge completes as a clean one would (unless a word merge settled a block: then it stops before committing, CONFLICT with the merged lines, and git_conflict_finalize commits); else it stops (CONFLICT) with what it settled and what is left, block by block, for git_conflict_resolve and git_conflict_finalize. abort:true abandons a merge (or a cherry-pick, revert or stash apply) in progress, restoring the state before it began and keeping a backup of what it discards. Ignored files (.env) that the merge brings in are replaced, after being saved to a backup ref. Preview: the incoming commits, fast-forward or not, the files that would conflict and which blocks auto-resolution would settle (merge-tree, nothing touched), the ignored files replaced and the hooks that would run.",
  params: {
    ref: refParam().optional().describe("Branch, tag or commit to merge in."),
    no_ff: z.boolean().optional().describe("Always create a merge commit, even when a fast-forward is possible."),
    auto_resolve: autoResolveParam(),
    abort: z
      .boolean()
      .optional()
      .describe("Abandon the merge (or cherry-pick, revert, stash apply) in progress instead: HEAD, index and worktree go back to before it began."),
  },
  mutating: true,
  timeoutMs: 600_000,
  state: gitToolState,
  async run({ ref, no_ff, auto_resolve, abort }, call) {
    const ctx = gitStep(call);
    if (abort) {
      if (ref !== undefined || no_ff !== undefined || auto_resolve !== undefined)
        throw new ToolError("INVALID_PARAMS", "abort: give it alone; it abandons the merge in progress.");
      return abandonOperation(ctx, ["merge", "cherry-pick", "revert", "stash"], `git_rebase {action:"abort"}`);
    }
    if (ref === undefined)
      throw new ToolError("INVALID_PARAMS", "ref: name the branch, tag or commit to merge in (or pass abort:true to abandon a merge in progress).");
    const busy = await busyWith(ctx);
    if (busy) throw busyError(busy);
    const { head, branch } = await headInfo(ctx);
    if (!head) throw new ToolError("INVALID_PARAMS", "There is no commit on this branch yet; nothing to merge into.");
    const theirs = await resolveCommit(ctx, ref);
    const analysis = await analyze(ctx, head, theirs, false);
    const a = analysis.integration;
    if (!a.up_to_date) await requireNotOverwriting(ctx, head, theirs, "merge");
    const way = await integrationInTheWay(ctx, head, theirs, analysis);
    refuseUntracked(way, `merge of ${ref}`);
    const mode = autoModeOf(auto_resolve);
    const prediction = await predictMergeAuto(ctx, analysis.merged, mode);
    const hooks = a.up_to_date
      ? []
      : await plannedHooks(ctx, prediction?.completes ? [...OPERATION_HOOKS.merge, ...OPERATION_HOOKS.commit] : OPERATION_HOOKS.merge);
    const noFf = !a.up_to_date && a.fast_forward && no_ff ? `no_ff: a merge commit ${ctx.dryRun ? "will be" : "was"} created anyway` : "";
    const predicted = prediction ? predictionText(prediction, "then the merge would complete as a clean one does (committed with git's message)") : "";
    const text = (done: boolean) =>
      [
        integrationText(a, ref, false, done),
        noFf,
        done ? "" : predicted,
        inTheWayText(way, done ? "were" : "would be"),
        hooksText(hooks, done ? "ran" : "would run"),
      ]
        .filter(Boolean)
        .join("\n");
    const shown = { ref, commit: theirs, branch, ...a, auto_resolution: prediction, overwritten: way.ignored, hooks };
    if (ctx.dryRun || a.up_to_date) return { ...shown, text: text(false) };

    return worktreeStep(ctx, async (ctx) => {
      const before = await preState(ctx, head, branch, way.ignored);
      const backup = way.ignored.length && before.snapshot ? await saveRef(ctx, "merge", before.snapshot, "worktree") : null;
      const r = await git(ctx, ["merge", "--no-edit", ...(no_ff ? ["--no-ff"] : []), "--end-of-options", ref], { ok: "any", timeoutMs: 300_000 });
      if (r.code !== 0) {
        const stop = await afterStop(ctx, { op: "merge", what: `merge of ${ref}`, before, backup, auto: mode, theirs: ref });
        if (!stop) throw new ToolError("GIT_FAILED", `git merge failed (exit ${r.code}): ${(r.stderr || r.stdout).trim()}`, backup ? { backup } : {});
        if (!stop.outcome.done) throw stoppedError(stop.outcome, `merge of ${ref}`, stop.backup);
        const after = (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
        const lines = [
          `merged ${ref} into ${branch ?? "HEAD"}: now at ${after.slice(0, 7)}`,
          `git stopped on conflicts; auto-resolution settled every block, so the merge completed as a clean one does`,
          settledText(stop.outcome.settled),
          inTheWayText(way, "were"),
          hooksText(hooks, "ran"),
          stop.backup ? backupText(stop.backup) : "",
        ];
        return { ...shown, head: after, auto_resolved: stop.outcome.settled, backup: stop.backup, text: lines.filter(Boolean).join("\n") };
      }
      const after = (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
      return {
        ...shown,
        head: after,
        backup,
        text: [`merged ${ref} into ${branch ?? "HEAD"}: now at ${after.slice(0, 7)}`, text(true), backup ? backupText(backup) : ""].filter(Boolean).join("\n"),
      };
    });
  },
});
