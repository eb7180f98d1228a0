import { z } from "zod";
import { backupText, backupWork, saveRef } from "../git/backup.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "../git/hooks.js";
import { inTheWayText, refuseUntracked } from "../git/in-the-way.js";
import { analyze, conflictedFiles, integrationInTheWay, integrationText, mergeConflict, requireNoTrackedChanges, requireNotOverwriting } from "../git/integrate.js";
import { refParam, remoteParam } from "../git/params.js";
import { worktreeStep, requireBranchName, defaultRemote, operationInProgress, requireBranch, requireRemote, cachedGitDir, upstreamOf, gitState } from "../git/repo.js";
import { git } from "../git/run.js";
import { ToolError } from "../errors.js";
import { type ToolContext, defineTool } from "./tool.js";
import { NETWORK_TIMEOUT_MS } from "../git/run.js";

export const gitPullTool = defineTool({
  id: "git_pull",
  description: "Fetches a remote branch (default: the upstream) and merges it into the current branch, or rebases onto it with rebase. Preview: fetches the objects without moving any ref, then shows the incoming and outgoing commits, fast-forward or not, and the conflicts the merge or rebase would hit.",
  params: {
    remote: remoteParam().optional().describe("Remote name (default: the branch's upstream remote, else origin)."),
    branch: refParam().optional().describe("Remote branch to pull (default: the upstream branch, else the same name)."),
    rebase: z.boolean().optional().describe("Rebase local commits onto the remote branch instead of merging (the old tip is saved to a backup ref)."),
  },
  mutating: true,
  hints: { open_world: true },
  timeoutMs: NETWORK_TIMEOUT_MS + 300_000,
  state: gitState,
  async run(params, ctx) {
    const gitDir = await cachedGitDir(ctx);
    const op = await operationInProgress(gitDir);
    if (op) throw new ToolError("CONFLICT", `A ${op} is already in progress; finish or abandon it first.`);
    const { head, branch } = await requireBranch(ctx);
    const up = await upstreamOf(ctx, branch);
    const remote = params.remote ?? (await defaultRemote(ctx, branch));
    await requireRemote(ctx, remote);
    if (params.branch) await requireBranchName(ctx, params.branch, "branch");
    const remoteBranch = params.branch ?? (up && up.remote === remote ? up.branch : branch);
    const rebase = !!params.rebase;
    if (rebase) await requireNoTrackedChanges(ctx, "pull with rebase");
    const what = `${remote}/${remoteBranch}`;

    // The preview fetches objects only: an empty --refmap and no FETCH_HEAD, so no ref moves, not even refs/remotes/.
    const theirs = await remoteTip(ctx, remote, remoteBranch);
    await git(ctx, ["fetch", "--quiet", "--no-write-fetch-head", "--refmap=", "--no-recurse-submodules", "--end-of-options", remote, `refs/heads/${remoteBranch}`], { timeoutMs: NETWORK_TIMEOUT_MS });
    const a = head ? await analyze(ctx, head, theirs, rebase) : null;
    if (head && a && !a.up_to_date) await requireNotOverwriting(ctx, head, theirs, "pull");
    const way = head && a ? await integrationInTheWay(ctx, head, theirs, a, rebase) : { ignored: [], untracked: [] };
    refuseUntracked(way, `pull of ${what}`);
    const hooks = a?.up_to_date ? [] : await plannedHooks(ctx, [...OPERATION_HOOKS.fetch, ...(rebase ? OPERATION_HOOKS.rebase : OPERATION_HOOKS.merge)]);
    const text = (done: boolean) => [
      a ? integrationText(a, what, rebase, done) : `the branch has no commits yet: it ${done ? "was" : "would be"} set to ${what} (${theirs.slice(0, 7)})`,
      inTheWayText(way, done ? "were" : "would be"),
      hooksText(hooks, done ? "ran" : "would run"),
    ].filter(Boolean).join("\n");
    const shown = { remote, branch, remote_branch: remoteBranch, rebase, remote_commit: theirs, ...a, overwritten: way.ignored, hooks };
    if (ctx.dryRun || a?.up_to_date) return { ...shown, text: text(false) };

    return worktreeStep(ctx, async (ctx) => {
      const backup = way.ignored.length ? await backupWork(ctx, "pull", head, way.ignored) : rebase && head ? await saveRef(ctx, "pull-rebase", head, "commit") : null;
      const r = await git(ctx, ["pull", "--no-edit", "--no-recurse-submodules", rebase ? "--rebase" : "--no-rebase", "--end-of-options", remote, remoteBranch], { ok: "any", timeoutMs: NETWORK_TIMEOUT_MS + 120_000 });
      if (r.code !== 0) {
        const files = await conflictedFiles(ctx);
        if (rebase && (await operationInProgress(gitDir)) === "rebase") {
          await git(ctx, ["rebase", "--abort"]);
          throw new ToolError("CONFLICT", `Rebasing onto ${what} conflicts in ${files.join(", ")}; the rebase was undone and ${branch} is as it was. Pull without rebase (a merge), or resolve the differences first.`, { files, backup });
        }
        if (files.length) throw mergeConflict(files, `pull of ${what}`, backup);
        throw new ToolError("GIT_FAILED", `git pull failed (exit ${r.code}): ${(r.stderr || r.stdout).trim()}`, { backup });
      }
      const after = (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
      const done = [`pulled ${what} into ${branch}: now at ${after.slice(0, 7)}`, text(true), backup ? backupText(backup) : ""].filter(Boolean).join("\n");
      return { ...shown, head: after, backup, text: done };
    });
  },
});

async function remoteTip(ctx: ToolContext, remote: string, branch: string): Promise<string> {
  const r = await git(ctx, ["ls-remote", "--end-of-options", remote, `refs/heads/${branch}`], { timeoutMs: NETWORK_TIMEOUT_MS });
  const line = r.stdout.split("\n").find((l) => l.endsWith(`\trefs/heads/${branch}`));
  if (!line) throw new ToolError("NOT_FOUND", `branch: ${remote} has no branch "${branch}"; git_fetch and git_branch show what it has.`);
  return line.split("\t")[0];
}
