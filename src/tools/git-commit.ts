import { z } from "zod";
import { checksText, enforceChecks, plannedChecks, plannedChecksText } from "../git/checks.js";
import { OPERATION_HOOKS, type PlannedHook, hooksText, plannedHooks } from "../git/hooks.js";
import { pathspec, pathsParam, relPaths } from "../git/params.js";
import { EMPTY_TREE, headInfo } from "../git/refs.js";
import { type FileStat, numstat, statText } from "../git/log.js";
import { operationInProgress } from "../git/operation-markers.js";
import { git, steady } from "../git/run.js";
import { pendingChanges, requireKnownPaths, stageChanges } from "../git/stage.js";
import { ToolError } from "../errors.js";
import { fileList } from "../git/text.js";
import { commitChangelist } from "../git/commit-changelist.js";
import type { GitStep } from "../git/step.js";
import { withTempIndex } from "../git/temp-index.js";
import { defineTool, type ToolResult } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

/** Checks and hooks may run a test suite: a commit gets ten minutes before it is stopped. */
export const COMMIT_TIMEOUT_MS = 600_000;

export const gitCommitTool = defineTool({
  id: "git_commit",
  description:
    "Commits the index, or with paths exactly those files (new ones included) and nothing else that is staged. Runs the commit checks of .tool-layer.json and the repository's hooks (pre-commit, commit-msg, ...); a failure blocks the commit and its output comes back. Preview: the files and diff stat, and the checks (with their commands) and hooks (with the SHA-256 of each) that would run; a preview runs none of them.",
  params: {
    message: z.string().min(1).describe("The commit message."),
    paths: pathsParam().optional().describe("Commit only these files or folders, as they are in the worktree; other staged changes stay staged."),
    amend: z.boolean().optional().describe("Replace the last commit (its changes plus these) instead of adding one."),
    changelist: z
      .string()
      .min(1)
      .optional()
      .describe("Commit exactly this changelist's changes (HEAD plus them); every other list's changes stay in the worktree, and in the index where staged."),
  },
  mutating: true,
  hints: { destructive: false },
  timeoutMs: COMMIT_TIMEOUT_MS,
  state: gitToolState,
  run({ message, paths, amend, changelist }, call) {
    const ctx = gitStep(call);
    if (changelist !== undefined) return commitChangelist(ctx, { changelist, paths }, (onList) => commitOn(onList, { message, amend }));
    return commitOn(ctx, { message, paths, amend });
  },
});

/** git_commit on the context's index: the real one, or a changelist commit's temporary one. */
async function commitOn(ctx: GitStep, { message, paths, amend }: { message: string; paths?: string[]; amend?: boolean }): Promise<ToolResult> {
  const gitDir = await ctx.repo.gitDir();
  const { head, branch } = await headInfo(ctx);
  if (amend && !head) throw new ToolError("INVALID_PARAMS", "amend: there is no commit to amend yet; commit without amend.");
  const rels = paths ? await relPaths(ctx, paths) : undefined;
  const files = await filesToCommit(ctx, head, rels, !!amend);
  const merging = (await operationInProgress(gitDir)) === "merge";
  if (!files.length && !amend && !merging) {
    throw new ToolError(
      "NO_CHANGE",
      rels
        ? `Nothing to commit in ${rels.join(", ")}: they match HEAD.`
        : "Nothing to commit: the index matches HEAD; stage changes with git_add, or pass paths.",
    );
  }
  const hookNames = OPERATION_HOOKS[amend ? "amend" : "commit"];
  const [hooks, planned] = await Promise.all([plannedHooks(ctx, hookNames), plannedChecks(ctx.repo.root, { on: "commit" })]);
  const summary = `${files.length} file${files.length === 1 ? "" : "s"}\n${statText(files)}`;

  if (ctx.dryRun) {
    const text = [
      `would commit on ${branch ?? "detached HEAD"}${amend ? " (amending the last commit)" : ""}: ${summary}`,
      plannedChecksText(planned),
      hooksText(hooks, "would run"),
    ]
      .filter(Boolean)
      .join("\n");
    return { message, branch, amend: !!amend, ...fileList(files), hooks, checks: planned, text };
  }

  const checks = await enforceChecks(ctx, "commit", "commit");
  // A check may rewrite a hook: what runs must be what this call found (and what an approved preview showed).
  const running = await plannedHooks(ctx, hookNames);
  if (JSON.stringify(running) !== JSON.stringify(hooks)) {
    throw new ToolError(
      "PREVIEW_STALE",
      `A hook changed while the checks ran (${changedHooks(hooks, running).join(", ")}); nothing was committed. Preview the commit again and approve what it shows.`,
      { hooks: running },
    );
  }
  // Not a ctx.commit step: hooks and checks can run for minutes and must stay cancellable. A cancelled `git commit`
  // gets SIGTERM, removes its index.lock and writes no commit (git moves HEAD atomically, last).
  const sha = await commit(ctx, message, rels, !!amend, running);
  const text = [`committed ${sha.slice(0, 7)} on ${branch ?? "detached HEAD"}: ${summary}`, checksText(checks), hooksText(running, "ran")]
    .filter(Boolean)
    .join("\n");
  return { commit: sha, branch, amend: !!amend, ...fileList(files), hooks: running, checks, text };
}

function changedHooks(before: PlannedHook[], after: PlannedHook[]): string[] {
  const names = new Set([...before, ...after].map((h) => h.hook));
  const key = (hs: PlannedHook[], n: string) => JSON.stringify(hs.find((h) => h.hook === n) ?? null);
  return [...names].filter((n) => key(before, n) !== key(after, n));
}

/** What the commit would contain, computed without touching the index: with paths, in a throwaway index file. */
async function filesToCommit(ctx: GitStep, head: string | null, rels: string[] | undefined, amend: boolean): Promise<FileStat[]> {
  const base = amend ? (await git(ctx, ["rev-parse", "--verify", "--quiet", `${head}^1`], { ok: [0, 1] })).stdout.trim() || EMPTY_TREE : (head ?? EMPTY_TREE);
  if (!rels) return numstat(ctx, ["--cached", base]);
  await requireKnownPaths(ctx, rels);
  return withTempIndex(ctx, { tree: head }, async (onHead) => {
    await stageChanges(onHead, await pendingChanges(onHead, rels));
    return numstat(onHead, ["--cached", base]);
  });
}

function hookFailed(hook: string, output: string): ToolError {
  return new ToolError("HOOK_FAILED", `The ${hook} hook refused the commit; nothing was committed. Fix what it reports, then commit again.\n${output}`, {
    hook,
    output,
  });
}

async function commit(ctx: GitStep, message: string, rels: string[] | undefined, amend: boolean, hooks: PlannedHook[]): Promise<string> {
  // `commit --only` refuses paths git does not know yet: intent-to-add makes new files known without staging content.
  const untracked = rels
    ? (await git(ctx, ["ls-files", "-z", "--others", "--exclude-standard", "--", ...rels.map(pathspec)])).stdout.split("\0").filter(Boolean).map(pathspec)
    : [];
  if (untracked.length) await git(ctx, ["add", "--intent-to-add", "--", ...untracked]);
  const args = ["commit", "--quiet", "--no-edit", "-m", message, ...(amend ? ["--amend"] : []), ...(rels ? ["--only", "--", ...rels.map(pathspec)] : [])];
  // Undoes the intent-to-add even when the commit was cancelled, hence the steady context.
  const undo = async () => {
    if (untracked.length) await git(steady(ctx), ["rm", "--cached", "--quiet", "--", ...untracked], { ok: "any" });
  };
  const r = await git(ctx, args, { ok: "any", timeoutMs: COMMIT_TIMEOUT_MS }).catch(async (e) => {
    await undo();
    throw e;
  });
  if (r.code !== 0) {
    await undo();
    const output = `${r.stdout}${r.stderr}`.trim().slice(-4000);
    // git's own refusals (a partial commit during a merge, unmerged files) are not a hook's doing.
    if (/unmerged files|fix conflicts/i.test(r.stderr)) {
      throw new ToolError("CONFLICT", `The commit is blocked by unresolved conflicts: ${output} Resolve them, git_add the files, then commit.`, { output });
    }
    if (/^fatal: /m.test(r.stderr)) throw new ToolError("GIT_FAILED", `git commit failed (exit ${r.code}): ${output}`, { exit_code: r.code, output });
    const refusing = hooks.map((h) => h.hook).filter((h) => ["pre-commit", "prepare-commit-msg", "commit-msg"].includes(h));
    if (refusing.length) throw hookFailed(refusing.join(" or "), output);
    throw new ToolError("GIT_FAILED", `git commit failed (exit ${r.code}): ${output}`, { exit_code: r.code, output });
  }
  return (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
}
