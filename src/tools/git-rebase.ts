import { backupText, backupWork, saveRef } from "../git/backup.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "../git/hooks.js";
import { inTheWayText, refuseUntracked } from "../git/in-the-way.js";
import { analyze, conflictedFiles, integrationInTheWay, integrationText, requireNoTrackedChanges } from "../git/integrate.js";
import { refParam } from "../git/params.js";
import { worktreeStep, operationInProgress, cachedGitDir, resolveCommit, headInfo, gitState } from "../git/repo.js";
import { git } from "../git/run.js";
import { ToolError } from "../errors.js";
import { defineTool } from "./tool.js";

export const gitRebaseTool = defineTool({
  id: "git_rebase",
  description: "Replays the current branch's own commits on top of another branch or commit, after saving the branch to a backup ref. If a commit conflicts the rebase is undone and the conflicting files are reported. Preview: the commits to replay and the conflicts each would hit (simulated in the object store, nothing touched).",
  params: {
    onto: refParam().describe("Branch or commit to rebase onto."),
  },
  mutating: true,
  timeoutMs: 300_000,
  state: gitState,
  async run({ onto }, ctx) {
    const gitDir = await cachedGitDir(ctx);
    const op = await operationInProgress(gitDir);
    if (op) throw new ToolError("CONFLICT", `A ${op} is already in progress; finish or abandon it first.`);
    const { head, branch } = await headInfo(ctx);
    if (!head || !branch) throw new ToolError("INVALID_PARAMS", "Rebase needs a checked-out branch with commits; git_checkout one first.");
    const target = await resolveCommit(ctx, onto, "onto");
    await requireNoTrackedChanges(ctx, "rebase");
    const a = await analyze(ctx, head, target, true);
    const way = await integrationInTheWay(ctx, head, target, a, true);
    refuseUntracked(way, `rebase onto ${onto}`);
    const hooks = a.up_to_date ? [] : await plannedHooks(ctx, OPERATION_HOOKS.rebase);
    const text = (done: boolean) => [integrationText(a, onto, true, done), inTheWayText(way, done ? "were" : "would be"), hooksText(hooks, done ? "ran" : "would run")].filter(Boolean).join("\n");
    const shown = { onto, branch, ...a, overwritten: way.ignored, hooks };
    if (ctx.dryRun || a.up_to_date) return { ...shown, text: text(false) };

    return worktreeStep(ctx, async (ctx) => {
      // The old tip, or (with ignored files in the way) the worktree on top of it: either brings the branch back.
      const backup = way.ignored.length ? (await backupWork(ctx, "rebase", head, way.ignored))! : await saveRef(ctx, "rebase", head, "commit");
      const r = await git(ctx, ["rebase", "--end-of-options", target], { ok: "any", timeoutMs: 300_000 });
      if (r.code !== 0) {
        const files = await conflictedFiles(ctx);
        if ((await operationInProgress(gitDir)) === "rebase") await git(ctx, ["rebase", "--abort"]);
        if (files.length) {
          throw new ToolError("CONFLICT", `Rebasing onto ${onto} conflicts in ${files.join(", ")}; the rebase was undone and ${branch} is as it was. Merge instead (git_merge) or resolve the differences first.`, { files, backup });
        }
        throw new ToolError("GIT_FAILED", `git rebase failed (exit ${r.code}); it was undone: ${(r.stderr || r.stdout).trim()}`, { backup });
      }
      const after = (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
      return { ...shown, head: after, backup, text: [`rebased ${branch} onto ${onto}: now at ${after.slice(0, 7)}; the old tip was ${head.slice(0, 7)}`, text(true), backupText(backup)].join("\n") };
    });
  },
});
