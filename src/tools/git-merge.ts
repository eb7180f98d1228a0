import { z } from "zod";
import { backupText, backupWork } from "../git/backup.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "../git/hooks.js";
import { inTheWayText, refuseUntracked } from "../git/in-the-way.js";
import { analyze, conflictedFiles, integrationInTheWay, integrationText, mergeConflict, requireNotOverwriting } from "../git/integrate.js";
import { refParam } from "../git/params.js";
import { worktreeStep, operationInProgress, cachedGitDir, resolveCommit, headInfo, gitState } from "../git/repo.js";
import { git } from "../git/run.js";
import { ToolError } from "../errors.js";
import { defineTool } from "./tool.js";

export const gitMergeTool = defineTool({
  id: "git_merge",
  description: "Merges a branch or commit into the current branch (fast-forward when possible unless no_ff). On conflicts the merge stays in progress for you to resolve. Ignored files (.env) that the merge brings in are replaced, after being saved to a backup ref. Preview: the incoming commits, fast-forward or not, the files that would conflict (computed with merge-tree, nothing touched), the ignored files replaced and the hooks that would run.",
  params: {
    ref: refParam().describe("Branch, tag or commit to merge in."),
    no_ff: z.boolean().optional().describe("Always create a merge commit, even when a fast-forward is possible."),
  },
  mutating: true,
  timeoutMs: 300_000,
  state: gitState,
  async run({ ref, no_ff }, ctx) {
    const gitDir = await cachedGitDir(ctx);
    const op = await operationInProgress(gitDir);
    if (op) throw new ToolError("CONFLICT", `A ${op} is already in progress; finish it (git_commit) or abandon it (git_reset {ref:"HEAD", mode:"hard"}) first.`);
    const { head, branch } = await headInfo(ctx);
    if (!head) throw new ToolError("INVALID_PARAMS", "There is no commit on this branch yet; nothing to merge into.");
    const theirs = await resolveCommit(ctx, ref);
    const a = await analyze(ctx, head, theirs, false);
    if (!a.up_to_date) await requireNotOverwriting(ctx, head, theirs, "merge");
    const way = await integrationInTheWay(ctx, head, theirs, a, false);
    refuseUntracked(way, `merge of ${ref}`);
    const hooks = a.up_to_date ? [] : await plannedHooks(ctx, OPERATION_HOOKS.merge);
    const noFf = !a.up_to_date && a.fast_forward && no_ff ? `no_ff: a merge commit ${ctx.dryRun ? "will be" : "was"} created anyway` : "";
    const text = (done: boolean) => [integrationText(a, ref, false, done), noFf, inTheWayText(way, done ? "were" : "would be"), hooksText(hooks, done ? "ran" : "would run")].filter(Boolean).join("\n");
    const shown = { ref, commit: theirs, branch, ...a, overwritten: way.ignored, hooks };
    if (ctx.dryRun || a.up_to_date) return { ...shown, text: text(false) };

    return worktreeStep(ctx, async (ctx) => {
      const backup = way.ignored.length ? await backupWork(ctx, "merge", head, way.ignored) : null;
      const r = await git(ctx, ["merge", "--no-edit", ...(no_ff ? ["--no-ff"] : []), "--end-of-options", ref], { ok: "any", timeoutMs: 300_000 });
      if (r.code !== 0) {
        const files = await conflictedFiles(ctx);
        if (files.length) throw mergeConflict(files, `merge of ${ref}`, backup);
        throw new ToolError("GIT_FAILED", `git merge failed (exit ${r.code}): ${(r.stderr || r.stdout).trim()}`, backup ? { backup } : {});
      }
      const after = (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
      return { ...shown, head: after, backup, text: [`merged ${ref} into ${branch ?? "HEAD"}: now at ${after.slice(0, 7)}`, text(true), backup ? backupText(backup) : ""].filter(Boolean).join("\n") };
    });
  },
});
