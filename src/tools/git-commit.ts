import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { checksText, enforceChecks } from "../git/checks.js";
import { type HookResult, hookPath, runHook } from "../git/hooks.js";
import { pathspec, pathsParam, unspec } from "../git/params.js";
import { EMPTY_TREE, type FileStat, headInfo, numstat, operationInProgress, cachedGitDir, gitState, statText } from "../git/repo.js";
import { git, steady } from "../git/run.js";
import { ToolError } from "../errors.js";
import { fileList } from "../git/text.js";
import { commitChangelist } from "../git/commit-changelist.js";
import { relPaths } from "./git-add.js";
import { defineTool, type ToolContext, type ToolResult } from "./tool.js";

/** Checks and hooks may run a test suite: a commit gets ten minutes before it is stopped. */
export const COMMIT_TIMEOUT_MS = 600_000;

export const gitCommitTool = defineTool({
  id: "git_commit",
  description: "Commits the index, or with paths exactly those files (new ones included) and nothing else that is staged. Runs the repository's pre-commit and commit-msg hooks and the commit checks of .tool-layer.json; a failure blocks the commit and its output comes back. Preview: the files and diff stat, and the hook and check results.",
  params: {
    message: z.string().min(1).describe("The commit message."),
    paths: pathsParam().optional().describe("Commit only these files or folders, as they are in the worktree; other staged changes stay staged."),
    amend: z.boolean().optional().describe("Replace the last commit (its changes plus these) instead of adding one."),
    changelist: z.string().min(1).optional().describe("Commit exactly this changelist's changes (HEAD plus them); every other list's changes stay in the worktree, and in the index where staged."),
  },
  mutating: true,
  timeoutMs: COMMIT_TIMEOUT_MS,
  state: gitState,
  async run({ message, paths, amend, changelist }, ctx): Promise<ToolResult> {
    if (changelist !== undefined) return commitChangelist(ctx, { changelist, paths }, (c) => gitCommitTool.run({ message, amend }, c));
    const gitDir = await cachedGitDir(ctx);
    const { head, branch } = await headInfo(ctx);
    if (amend && !head) throw new ToolError("INVALID_PARAMS", "amend: there is no commit to amend yet; commit without amend.");
    const rels = paths ? await relPaths(ctx, paths) : undefined;
    const files = await filesToCommit(ctx, head, rels, !!amend);
    const merging = (await operationInProgress(gitDir)) === "merge";
    if (!files.length && !amend && !merging) {
      throw new ToolError("NO_CHANGE", rels ? `Nothing to commit in ${rels.join(", ")}: they match HEAD.` : "Nothing to commit: the index matches HEAD; stage changes with git_add, or pass paths.");
    }
    const checks = await enforceChecks(ctx, "commit", "commit");
    const summary = `${files.length} file${files.length === 1 ? "" : "s"}\n${statText(files)}`;

    if (ctx.dryRun) {
      const hooks = await previewHooks(ctx, message);
      const text = [`would commit on ${branch ?? "detached HEAD"}${amend ? " (amending the last commit)" : ""}: ${summary}`, hooksText(hooks), checksText(checks)].filter(Boolean).join("\n");
      return { message, branch, amend: !!amend, ...fileList(files), hooks, checks, text };
    }

    // Not a ctx.commit step: hooks and checks can run for minutes and must stay cancellable. A cancelled `git commit`
    // gets SIGTERM, removes its index.lock and writes no commit (git moves HEAD atomically, last).
    const sha = await commit(ctx, message, rels, !!amend);
    const text = [`committed ${sha.slice(0, 7)} on ${branch ?? "detached HEAD"}: ${summary}`, checksText(checks)].filter(Boolean).join("\n");
    return { commit: sha, branch, amend: !!amend, ...fileList(files), checks, text };
  },
});

/** What the commit would contain, computed without touching the index: with paths, in a throwaway index file. */
async function filesToCommit(ctx: ToolContext, head: string | null, rels: string[] | undefined, amend: boolean): Promise<FileStat[]> {
  const base = amend ? ((await git(ctx, ["rev-parse", "--verify", "--quiet", `${head}^1`], { ok: [0, 1] })).stdout.trim() || EMPTY_TREE) : (head ?? EMPTY_TREE);
  if (!rels) return numstat(ctx, ["--cached", base]);
  const dir = await mkdtemp(path.join(tmpdir(), "tool-layer-index-"));
  try {
    const env = { GIT_INDEX_FILE: path.join(dir, "index") };
    await git(ctx, head ? ["read-tree", head] : ["read-tree", "--empty"], { env });
    const added = await git(ctx, ["add", "-A", "--", ...rels.map(pathspec)], { env, ok: "any" });
    const m = /pathspec '(.*)' did not match any files/.exec(added.stderr);
    if (m) throw new ToolError("NOT_FOUND", `${unspec(m[1])} matches no file, changed or tracked; check the path with git_status.`);
    if (added.code !== 0) throw new ToolError("GIT_FAILED", `git add failed: ${added.stderr.trim()}`);
    return await numstat(ctx, ["--cached", base], env);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function previewHooks(ctx: ToolContext, message: string): Promise<HookResult[]> {
  const results: HookResult[] = [];
  const pre = await runHook(ctx, "pre-commit");
  if (pre) results.push(pre);
  if (pre && !pre.ok) throw hookFailed(pre.hook, pre.output, results);
  const dir = await mkdtemp(path.join(tmpdir(), "tool-layer-msg-"));
  try {
    const file = path.join(dir, "COMMIT_EDITMSG");
    await writeFile(file, `${message}\n`);
    const msg = await runHook(ctx, "commit-msg", [file]);
    if (msg) results.push(msg);
    if (msg && !msg.ok) throw hookFailed(msg.hook, msg.output, results);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return results;
}

function hooksText(hooks: HookResult[]): string {
  return hooks.map((h) => `hook ${h.hook}: passed`).join("\n");
}

function hookFailed(hook: string, output: string, hooks?: HookResult[]): ToolError {
  return new ToolError("HOOK_FAILED", `The ${hook} hook refused the commit; nothing was committed. Fix what it reports, then commit again.\n${output}`, { hook, output, ...(hooks ? { hooks } : {}) });
}

async function commit(ctx: ToolContext, message: string, rels: string[] | undefined, amend: boolean): Promise<string> {
  // `commit --only` refuses paths git does not know yet: intent-to-add makes new files known without staging content.
  const untracked = rels ? (await git(ctx, ["ls-files", "-z", "--others", "--exclude-standard", "--", ...rels.map(pathspec)])).stdout.split("\0").filter(Boolean).map(pathspec) : [];
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
    const hooks = [(await hookPath(ctx, "pre-commit")) && "pre-commit", (await hookPath(ctx, "commit-msg")) && "commit-msg"].filter(Boolean) as string[];
    if (hooks.length) throw hookFailed(hooks.join(" or "), output);
    throw new ToolError("GIT_FAILED", `git commit failed (exit ${r.code}): ${output}`, { exit_code: r.code, output });
  }
  return (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
}

