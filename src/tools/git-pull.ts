import { z } from "zod";
import { backupText, saveRef } from "../git/backup.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "../git/hooks.js";
import { inTheWayText, refuseUntracked } from "../git/in-the-way.js";
import { settledText, stoppedError } from "../git/conflicts-continue.js";
import { autoModeOf } from "../git/conflicts-model.js";
import { busyError, busyWith, preState } from "../git/conflicts-operation.js";
import { predictMergeAuto, predictReplay, predictionText, replayText } from "../git/conflicts-predict.js";
import { afterStop } from "../git/conflicts-start.js";
import { analyze, integrationInTheWay, integrationText, requireNoTrackedChanges, requireNotOverwriting } from "../git/integrate.js";
import { refParam, remoteParam } from "../git/params.js";
import { type GitStep, worktreeStep } from "../git/step.js";
import { requireBranchName, defaultRemote, requireBranch, requireRemote, upstreamOf } from "../git/refs.js";
import { git } from "../git/run.js";
import { ToolError } from "../errors.js";
import { autoResolveParam } from "./conflict-params.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";
import { NETWORK_TIMEOUT_MS } from "../git/run.js";

export const gitPullTool = defineTool({
  id: "git_pull",
  description:
    'Fetches a remote branch (default: the upstream) and merges it into the current branch, or rebases onto it with rebase. When git stops on conflicts, auto-resolution settles every block that is safe to resolve (auto_resolve) and the pull completes when nothing is left; else it stops (CONFLICT) with what is left, block by block, for git_conflict_resolve and git_conflict_finalize (abandon: git_merge {abort:true}, or git_rebase {action:"abort"} for a rebase). Preview: fetches the objects without moving any ref, then shows the incoming and outgoing commits, fast-forward or not, the conflicts the merge or rebase would hit and which blocks auto-resolution would settle.',
  params: {
    remote: remoteParam().optional().describe("Remote name (default: the branch's upstream remote, else origin)."),
    branch: refParam().optional().describe("Remote branch to pull (default: the upstream branch, else the same name)."),
    rebase: z.boolean().optional().describe("Rebase local commits onto the remote branch instead of merging (the old tip is saved to a backup ref)."),
    auto_resolve: autoResolveParam(),
  },
  mutating: true,
  hints: { open_world: true },
  timeoutMs: NETWORK_TIMEOUT_MS + 300_000,
  state: gitToolState,
  async run(params, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    const busy = await busyWith(ctx);
    if (busy) throw busyError(busy);
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
    await git(
      ctx,
      ["fetch", "--quiet", "--no-write-fetch-head", "--refmap=", "--no-recurse-submodules", "--end-of-options", remote, `refs/heads/${remoteBranch}`],
      { timeoutMs: NETWORK_TIMEOUT_MS },
    );
    const mode = autoModeOf(params.auto_resolve);
    const analysis = head ? await analyze(ctx, head, theirs, rebase, (c, onto, tip) => predictReplay({ ...c, repo: ctx.repo }, onto, tip, mode)) : null;
    const a = analysis?.integration ?? null;
    const prediction = analysis ? await predictMergeAuto(ctx, analysis.merged, mode) : null;
    if (head && a && !a.up_to_date) await requireNotOverwriting(ctx, head, theirs, "pull");
    const way = head && analysis ? await integrationInTheWay(ctx, head, theirs, analysis) : { ignored: [], untracked: [] };
    refuseUntracked(way, `pull of ${what}`);
    const finishing = prediction?.completes || (rebase && a?.replay?.some((s) => "auto" in s)) ? OPERATION_HOOKS.commit : [];
    const hooks = a?.up_to_date
      ? []
      : await plannedHooks(ctx, [...OPERATION_HOOKS.fetch, ...(rebase ? OPERATION_HOOKS.rebase : OPERATION_HOOKS.merge), ...finishing]);
    const predicted = prediction
      ? predictionText(prediction, "then the merge would complete as a clean one does (committed with git's message)")
      : rebase && a?.replay
        ? replayText(a.replay)
        : "";
    const text = (done: boolean) =>
      [
        a ? integrationText(a, what, rebase, done) : `the branch has no commits yet: it ${done ? "was" : "would be"} set to ${what} (${theirs.slice(0, 7)})`,
        done ? "" : predicted,
        inTheWayText(way, done ? "were" : "would be"),
        hooksText(hooks, done ? "ran" : "would run"),
      ]
        .filter(Boolean)
        .join("\n");
    const shown = {
      remote,
      branch,
      remote_branch: remoteBranch,
      rebase,
      remote_commit: theirs,
      ...a,
      auto_resolution: prediction,
      overwritten: way.ignored,
      hooks,
    };
    if (ctx.dryRun || a?.up_to_date) return { ...shown, text: text(false) };

    return worktreeStep(ctx, async (ctx) => {
      const before = await preState(ctx, head, branch, way.ignored);
      const backup =
        way.ignored.length && before.snapshot
          ? await saveRef(ctx, "pull", before.snapshot, "worktree")
          : rebase && head
            ? await saveRef(ctx, "pull-rebase", head, "commit")
            : null;
      const r = await git(
        ctx,
        ["pull", "--no-edit", "--no-recurse-submodules", rebase ? "--rebase" : "--no-rebase", "--end-of-options", remote, remoteBranch],
        { ok: "any", timeoutMs: NETWORK_TIMEOUT_MS + 120_000 },
      );
      let settled: ReturnType<typeof settledText> = "";
      let autoResolved: unknown[] = [];
      let kept = backup;
      if (r.code !== 0) {
        const doing = rebase ? `rebase onto ${what} (git_pull)` : `pull of ${what}`;
        const stop = await afterStop(ctx, { op: rebase ? "rebase" : "merge", what: doing, before, backup, auto: mode, theirs: what });
        if (!stop) throw new ToolError("GIT_FAILED", `git pull failed (exit ${r.code}): ${(r.stderr || r.stdout).trim()}`, { backup });
        if (!stop.outcome.done) throw stoppedError(stop.outcome, doing, stop.backup);
        kept = stop.backup;
        autoResolved = stop.outcome.settled;
        settled = `git stopped on conflicts; auto-resolution settled every block, so the ${rebase ? "rebase" : "merge"} completed as a clean one does\n${settledText(stop.outcome.settled)}`;
      }
      const after = (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
      const done = [
        `pulled ${what} into ${branch}: now at ${after.slice(0, 7)}`,
        settled || text(true),
        settled ? hooksText(hooks, "ran") : "",
        kept ? backupText(kept) : "",
      ]
        .filter(Boolean)
        .join("\n");
      return { ...shown, head: after, backup: kept, ...(autoResolved.length ? { auto_resolved: autoResolved } : {}), text: done };
    });
  },
});

async function remoteTip(ctx: GitStep, remote: string, branch: string): Promise<string> {
  const r = await git(ctx, ["ls-remote", "--end-of-options", remote, `refs/heads/${branch}`], { timeoutMs: NETWORK_TIMEOUT_MS });
  const line = r.stdout.split("\n").find((l) => l.endsWith(`\trefs/heads/${branch}`));
  if (!line) throw new ToolError("NOT_FOUND", `branch: ${remote} has no branch "${branch}"; git_fetch and git_branch show what it has.`);
  return line.split("\t")[0];
}
