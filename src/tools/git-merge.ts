import { z } from "zod";
import { analyze, conflictedFiles, integrationText, mergeConflict, requireNotOverwriting } from "../git/integrate.js";
import { refParam } from "../git/params.js";
import { worktreeStep, operationInProgress, cachedGitDir, resolveCommit, headInfo, gitState } from "../git/repo.js";
import { git } from "../git/run.js";
import { ToolError } from "../errors.js";
import { defineTool } from "./tool.js";

export const gitMergeTool = defineTool({
  id: "git_merge",
  description: "Merges a branch or commit into the current branch (fast-forward when possible unless no_ff). On conflicts the merge stays in progress for you to resolve. Preview: the incoming commits, fast-forward or not, and the files that would conflict (computed with merge-tree, nothing touched).",
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
    const text = integrationText(a, ref, false) + (!a.up_to_date && a.fast_forward && no_ff ? "\nno_ff: a merge commit will be created anyway" : "");
    if (ctx.dryRun || a.up_to_date) return { ref, commit: theirs, branch, ...a, text };

    return worktreeStep(ctx, async (ctx) => {
      const r = await git(ctx, ["merge", "--no-edit", ...(no_ff ? ["--no-ff"] : []), "--end-of-options", ref], { ok: "any", timeoutMs: 300_000 });
      if (r.code !== 0) {
        const files = await conflictedFiles(ctx);
        if (files.length) throw mergeConflict(files, `merge of ${ref}`);
        throw new ToolError("GIT_FAILED", `git merge failed (exit ${r.code}): ${(r.stderr || r.stdout).trim()}`);
      }
      const after = (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
      return { ref, commit: theirs, branch, head: after, ...a, text: `merged ${ref} into ${branch ?? "HEAD"}: now at ${after.slice(0, 7)}\n${text}` };
    });
  },
});
