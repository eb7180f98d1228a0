import { z } from "zod";
import { backupText, saveRef } from "../git/backup.js";
import { OPERATION_HOOKS, type PlannedHook, hooksText, plannedHooks } from "../git/hooks.js";
import { settledText, stoppedError } from "../git/conflicts-continue.js";
import { type AutoMode, autoModeOf } from "../git/conflicts-model.js";
import { busyError, busyWith, preState } from "../git/conflicts-operation.js";
import { predictStashAuto, predictionText } from "../git/conflicts-predict.js";
import { afterStop } from "../git/conflicts-start.js";
import { trackedChanges } from "../git/integrate.js";
import { refParam } from "../git/params.js";
import { type GitStep, worktreeStep } from "../git/step.js";
import { headInfo, resolveCommit } from "../git/refs.js";
import { git } from "../git/run.js";
import { list } from "../git/text.js";
import { ToolError } from "../errors.js";
import { autoResolveParam } from "./conflict-params.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitStashTool = defineTool({
  id: "git_stash",
  description:
    "Shelves uncommitted changes (push), brings them back (pop drops the stash once it applied, apply always keeps it), lists or drops stashes; a dropped stash is saved to a backup ref first. apply also takes a backup ref of tool-layer. When apply or pop conflicts, auto-resolution settles every block that is safe to resolve (auto_resolve) and it completes when nothing is left; else it stops (CONFLICT) with what is left, block by block, for git_conflict_resolve and git_conflict_finalize (git_merge {abort:true} abandons it). Preview: the files involved and which blocks auto-resolution would settle.",
  params: {
    action: z.enum(["push", "pop", "apply", "list", "drop"]).describe("What to do."),
    message: z.string().min(1).optional().describe("push: a description for the stash."),
    include_untracked: z.boolean().optional().describe("push: stash untracked files too."),
    stash: refParam().optional().describe("pop/apply/drop: which stash (default stash@{0}); apply also takes any stash-like commit, e.g. a backup ref."),
    auto_resolve: autoResolveParam("pop/apply: where it conflicts"),
  },
  mutating: true,
  state: gitToolState,
  async run(params, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    switch (params.action) {
      case "list":
        return listStashes(ctx);
      case "push":
        return push(ctx, params.message, !!params.include_untracked);
      default:
        return restoreOrDrop(ctx, params.action, params.stash ?? "stash@{0}", autoModeOf(params.auto_resolve));
    }
  },
});

async function listStashes(ctx: GitStep) {
  const r = await git(ctx, ["stash", "list", "--format=%gd%x00%H%x00%gs"]);
  const stashes = r.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [name, commit, subject] = l.split("\0");
      return { name, commit, subject };
    });
  return { stashes, text: stashes.length ? stashes.map((s) => `${s.name} ${s.commit.slice(0, 7)} ${s.subject}`).join("\n") : "no stashes" };
}

async function push(ctx: GitStep, message: string | undefined, untracked: boolean) {
  const dirty = await trackedChanges(ctx);
  const extra = untracked ? (await git(ctx, ["ls-files", "-z", "--others", "--exclude-standard"])).stdout.split("\0").filter(Boolean) : [];
  const files = [...dirty, ...extra];
  if (!files.length)
    throw new ToolError(
      "NO_CHANGE",
      `There are no ${untracked ? "" : "tracked "}changes to stash${untracked ? "" : " (untracked files need include_untracked)"}.`,
    );
  const hooks = await plannedHooks(ctx, OPERATION_HOOKS.stash);
  if (ctx.dryRun) return { action: "push", files, hooks, text: withHooks(list("would stash", files), hooks, "would run") };
  return worktreeStep(ctx, async (ctx) => {
    await git(ctx, ["stash", "push", "--quiet", ...(untracked ? ["--include-untracked"] : []), ...(message ? ["-m", message] : [])]);
    const commit = (await git(ctx, ["rev-parse", "refs/stash"])).stdout.trim();
    return {
      action: "push",
      stash: "stash@{0}",
      commit,
      files,
      hooks,
      text: withHooks(`${list("stashed", files)}\nas stash@{0} (${commit.slice(0, 7)}); the worktree is clean of them now`, hooks, "ran"),
    };
  });
}

async function restoreOrDrop(ctx: GitStep, action: "pop" | "apply" | "drop", stash: string, mode: AutoMode) {
  const commit = await resolveCommit(ctx, stash, "stash");
  const show = await git(ctx, ["stash", "show", "--name-only", "-z", "--include-untracked", commit], { ok: "any" });
  if (show.code !== 0) throw new ToolError("INVALID_PARAMS", `stash: ${stash} is not a stash (${show.stderr.trim()}); git_stash list shows them.`);
  const files = show.stdout.split("\0").filter(Boolean);
  // apply moves no ref; pop and drop update refs/stash.
  const hooks = action === "apply" ? [] : await plannedHooks(ctx, OPERATION_HOOKS.stash);
  if (action === "drop") {
    if (ctx.dryRun)
      return {
        action,
        stash,
        commit,
        files,
        hooks,
        text: withHooks(`would drop ${stash} (${commit.slice(0, 7)}), saving it to a backup ref first; ${list("it holds", files)}`, hooks, "would run"),
      };
    return worktreeStep(ctx, async (ctx) => {
      const backup = await saveRef(ctx, "stash-drop", commit, "worktree");
      await git(ctx, ["stash", "drop", "--quiet", stash]);
      return { action, stash, commit, files, hooks, backup, text: withHooks(`dropped ${stash}\n${backupText(backup)}`, hooks, "ran") };
    });
  }
  const busy = await busyWith(ctx);
  if (busy) throw busyError(busy);
  const dirty = await trackedChanges(ctx);
  const overlap = dirty.filter((p) => files.includes(p));
  if (overlap.length)
    throw new ToolError("CONFLICT", `${stash} changes files you have uncommitted changes in (${overlap.join(", ")}); commit or stash those first.`, {
      files: overlap,
    });
  const prediction = await predictStashAuto(ctx, commit, mode);
  const predicted = prediction ? predictionText(prediction, `then the ${action} would complete as a clean one does`) : "";
  if (ctx.dryRun) {
    const text = [`would ${action} ${stash}: ${list("files", files)}${action === "pop" ? "\nthen drop it from the stash list" : ""}`, predicted]
      .filter(Boolean)
      .join("\n");
    return { action, stash, commit, files, auto_resolution: prediction, hooks, text: withHooks(text, hooks, "would run") };
  }
  return worktreeStep(ctx, async (ctx) => {
    const { head, branch } = await headInfo(ctx);
    const untracked = (await git(ctx, ["ls-tree", "-r", "-z", "--name-only", `${commit}^3`, "--"], { ok: [0, 128] })).stdout.split("\0").filter(Boolean);
    const before = await preState(ctx, head, branch, untracked);
    const r = await git(ctx, ["stash", action, "--quiet", stash], { ok: "any" });
    let note = "";
    let autoResolved: unknown[] = [];
    if (r.code !== 0) {
      const what = `${action} of ${stash}`;
      const stop = await afterStop(ctx, { op: "stash", what, before, backup: null, auto: mode, stash: { commit, name: stash, action, untracked } });
      if (!stop) throw new ToolError("GIT_FAILED", `git stash ${action} failed (exit ${r.code}): ${(r.stderr || r.stdout).trim()}`);
      if (!stop.outcome.done) throw stoppedError(stop.outcome, what, stop.backup);
      autoResolved = stop.outcome.settled;
      note = [
        `git stopped on conflicts; auto-resolution settled every block, so the ${action} completed as a clean one does`,
        settledText(stop.outcome.settled),
        ...stop.outcome.steps,
      ].join("\n");
    }
    const text = [`${action === "pop" ? "popped" : "applied"} ${stash}: ${list("files", files)}`, note].filter(Boolean).join("\n");
    return {
      action,
      stash,
      commit,
      files,
      auto_resolution: prediction,
      hooks,
      ...(autoResolved.length ? { auto_resolved: autoResolved } : {}),
      text: withHooks(text, hooks, "ran"),
    };
  });
}

function withHooks(text: string, hooks: PlannedHook[], verb: string): string {
  return hooks.length ? `${text}\n${hooksText(hooks, verb)}` : text;
}
