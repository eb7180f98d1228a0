import { z } from "zod";
import { saveRef } from "../git/backup.js";
import { checksText, enforceChecks, plannedChecks, plannedChecksText } from "../git/checks.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "../git/hooks.js";
import { refParam, remoteParam } from "../git/params.js";
import { parsePushPorcelain, pushFailure } from "../git/push.js";
import { commitStep } from "../git/step.js";
import { commitLine, logCommits } from "../git/log.js";
import { requireBranchName, defaultRemote, headInfo, requireRemote, tryResolve, upstreamOf } from "../git/refs.js";
import { NETWORK_TIMEOUT_MS, git } from "../git/run.js";
import { ToolError } from "../errors.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitPushTool = defineTool({
  id: "git_push",
  description:
    "Pushes a branch (default: the current one) to its remote, setting the upstream if it has none; runs the push checks of .tool-layer.json and the pre-push hook first. force pushes with --force-with-lease against what the last fetch saw, after saving the remote's old tip to a backup ref. Preview: what the remote would accept (push --dry-run), the commits that would go, and the checks (with their commands) and hooks (with the SHA-256 of each) that would run; a preview runs none of them.",
  params: {
    remote: remoteParam().optional().describe("Remote name (default: the branch's upstream remote, else origin)."),
    branch: refParam().optional().describe("Local branch to push (default: the current branch)."),
    force: z.boolean().optional().describe("Overwrite the remote branch, but only if it is still where the last fetch saw it (--force-with-lease)."),
  },
  mutating: true,
  hints: { open_world: true, idempotent: true },
  timeoutMs: NETWORK_TIMEOUT_MS + 600_000,
  state: gitToolState,
  async run(params, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    const info = await headInfo(ctx);
    const branch = params.branch ?? info.branch;
    if (!branch) throw new ToolError("INVALID_PARAMS", "branch: HEAD is detached; name the branch to push.");
    if (params.branch) await requireBranchName(ctx, params.branch, "branch");
    const local = await tryResolve(ctx, `refs/heads/${branch}`);
    if (!local) throw new ToolError("NOT_FOUND", `branch: there is no local branch "${branch}"; git_branch lists them.`);
    const up = await upstreamOf(ctx, branch);
    const remote = params.remote ?? (await defaultRemote(ctx, branch));
    await requireRemote(ctx, remote);
    const remoteBranch = up && up.remote === remote ? up.branch : branch;
    const tracking = await tryResolve(ctx, `refs/remotes/${remote}/${remoteBranch}`);
    const outgoing = await logCommits(ctx, ["-n50", local, ...(tracking ? [`^${tracking}`] : [])]);
    // The lease is what the last fetch saw (empty: the branch must not exist yet); we never fetch first, that would defeat it.
    const lease = params.force ? [`--force-with-lease=refs/heads/${remoteBranch}:${tracking ?? ""}`] : [];
    const refspec = `refs/heads/${branch}:refs/heads/${remoteBranch}`;
    const [hooks, planned] = await Promise.all([plannedHooks(ctx, OPERATION_HOOKS.push), plannedChecks(ctx.repo.root, { on: "push" })]);
    const target = `${remote}/${remoteBranch}`;

    if (ctx.dryRun) {
      // --no-verify: a dry run would otherwise run the pre-push hook, which may do anything.
      const r = await git(ctx, ["push", "--dry-run", "--porcelain", "--no-verify", "--recurse-submodules=no", ...lease, "--end-of-options", remote, refspec], {
        ok: "any",
        timeoutMs: NETWORK_TIMEOUT_MS,
      });
      const refs = parsePushPorcelain(r.stdout);
      if (r.code !== 0) throw await pushFailure(ctx, r, refs, remote, false);
      const upToDate = refs.every((x) => x.flag === "=");
      const text = upToDate
        ? `${target} is up to date; nothing to push`
        : [
            `would push ${branch} to ${target}${params.force ? " (force-with-lease; the remote's old tip would be saved to a backup ref)" : ""}${up ? "" : ", setting it as upstream"}:`,
            ...outgoing.map((c) => `  ${commitLine(c)}`),
            plannedChecksText(planned),
            hooksText(hooks, "would run"),
          ]
            .filter(Boolean)
            .join("\n");
      return { remote, branch, remote_branch: remoteBranch, force: !!params.force, refs, commits: outgoing, checks: planned, hooks, text };
    }

    const checks = await enforceChecks(ctx, "push", "push");
    // A check may rewrite a hook: what runs must be what this call found (and what an approved preview showed).
    const running = await plannedHooks(ctx, OPERATION_HOOKS.push);
    if (JSON.stringify(running) !== JSON.stringify(hooks)) {
      throw new ToolError("PREVIEW_STALE", "A hook changed while the checks ran; nothing was pushed. Preview the push again and approve what it shows.", {
        hooks: running,
      });
    }
    return commitStep(ctx, async (ctx) => {
      const restore = (ref: string) =>
        `git_show {ref:"${ref}"} shows the remote's old tip; to put it back, git_reset {ref:"${ref}", mode:"hard"} on ${branch} (your tip is backed up first) and git_push {force:true}`;
      const backup = params.force && tracking ? await saveRef(ctx, "push-force", tracking, "commit", restore) : null;
      const r = await git(
        ctx,
        ["push", "--porcelain", "--recurse-submodules=no", ...(up ? [] : ["--set-upstream"]), ...lease, "--end-of-options", remote, refspec],
        { ok: "any", timeoutMs: NETWORK_TIMEOUT_MS },
      );
      const refs = parsePushPorcelain(r.stdout);
      if (r.code !== 0) throw await pushFailure(ctx, r, refs, remote, true);
      const upToDate = refs.every((x) => x.flag === "=");
      const text = [
        upToDate
          ? `${target} was already up to date`
          : `pushed ${branch} to ${target}${params.force ? " (forced with lease)" : ""}: ${outgoing.length} commit${outgoing.length === 1 ? "" : "s"}`,
        backup ? `the remote's previous tip ${backup.commit.slice(0, 7)} is saved as ${backup.ref}; restore: ${backup.restore}` : "",
        checksText(checks),
        hooksText(running, "ran"),
      ]
        .filter(Boolean)
        .join("\n");
      return { remote, branch, remote_branch: remoteBranch, force: !!params.force, refs, commits: outgoing, checks, hooks: running, backup, text };
    });
  },
});
