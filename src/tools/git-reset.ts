import { z } from "zod";
import { backupText, backupWork, saveRef } from "../git/backup.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "../git/hooks.js";
import { type InTheWay, filesInTheWay, inTheWayText } from "../git/in-the-way.js";
import { pathspec, pathsParam, refParam, relPaths } from "../git/params.js";
import { withTempIndex } from "../git/temp-index.js";
import { worktreeStep } from "../git/step.js";
import { commitLine, logCommits, numstat, statText } from "../git/log.js";
import { headInfo, resolveCommit } from "../git/refs.js";
import { git } from "../git/run.js";
import { ToolError } from "../errors.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitResetTool = defineTool({
  id: "git_reset",
  description:
    "Moves the current branch to ref: soft keeps index and files, mixed (the usual) also resets the index, hard also discards uncommitted changes. With paths, only unstages those paths (mixed). Whatever could be lost is saved to a backup ref first: commits, uncommitted changes (conflicted files too), and untracked or ignored files that ref's files would replace. Preview: the commits leaving the branch, the changes that would be discarded and the untracked files that would be overwritten.",
  params: {
    ref: refParam().describe("Commit to move to, e.g. HEAD~1, a branch or a backup ref."),
    mode: z.enum(["soft", "mixed", "hard"]).describe("soft: move the branch only; mixed: and the index; hard: and the files."),
    paths: pathsParam().optional().describe("Only reset these paths in the index to their state at ref (mode must be mixed)."),
  },
  mutating: true,
  hints: { destructive: true, idempotent: false },
  state: gitToolState,
  async run({ ref, mode, paths }, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    const { head, branch } = await headInfo(ctx);
    const target = await resolveCommit(ctx, ref);
    if (paths) {
      if (mode !== "mixed")
        throw new ToolError("INVALID_PARAMS", `mode: with paths only "mixed" is possible (it unstages them); to restore files use git_checkout or git_stash.`);
      const rels = await relPaths(ctx, paths);
      const files = await numstat(ctx, ["--cached", target, "--", ...rels.map(pathspec)]);
      const text = files.length
        ? `${ctx.dryRun ? "would unstage" : "unstaged"} (index set to ${ref}, files untouched):\n${statText(files)}`
        : `the index already matches ${ref} for these paths`;
      if (ctx.dryRun || !files.length) return { ref, mode, paths: rels, files, text };
      await worktreeStep(ctx, (ctx) => git(ctx, ["reset", "--quiet", target, "--", ...rels.map(pathspec)]));
      return { ref, mode, paths: rels, files, text };
    }
    if (!head) throw new ToolError("INVALID_PARAMS", "There is no commit yet to reset from.");
    const none: InTheWay = { ignored: [], untracked: [] };
    const [leaving, discarded, way, hooks] = await Promise.all([
      logCommits(ctx, ["-n100", head, `^${target}`]),
      mode === "hard" ? withTempIndex(ctx, "copy", (onCopy) => numstat(onCopy, [head])) : Promise.resolve([]),
      mode === "hard" ? filesInTheWay(ctx, head, target) : Promise.resolve(none),
      plannedHooks(ctx, OPERATION_HOOKS.reset),
    ]);
    // reset --hard replaces untracked and ignored files alike.
    const overwritten = [...way.untracked, ...way.ignored].sort();
    const reset = mode === "hard" ? "the index and the files" : mode === "mixed" ? "the index" : "nothing (soft)";
    const move = (done: boolean) =>
      target === head
        ? `${branch ?? "HEAD"} ${done ? "stays" : "would stay"} at ${head.slice(0, 7)} (${ref} is the commit it is on); ${done ? "reset" : "would reset"} ${reset} to it`
        : `${done ? "moved" : "would move"} ${branch ?? "HEAD"} from ${head.slice(0, 7)} to ${ref} (${target.slice(0, 7)}), ${mode}`;
    const lines = (done: boolean) =>
      [
        move(done),
        leaving.length ? `commits leaving the branch:\n${leaving.map((c) => `  ${commitLine(c)}`).join("\n")}` : "",
        discarded.length ? `uncommitted changes ${done ? "" : "that would be "}discarded:\n${statText(discarded)}` : "",
        inTheWayText(way, done ? "were" : "would be"),
        mode === "mixed" ? "staged changes become unstaged; files stay as they are" : mode === "soft" ? "index and files stay as they are" : "",
        hooksText(hooks, done ? "ran" : "would run"),
      ].filter(Boolean);
    const shown = { ref, mode, previous: head, leaving, discarded, overwritten, hooks };
    if (ctx.dryRun) {
      const text = [...lines(false), mode === "hard" || leaving.length ? "what is lost will be saved to a backup ref first" : ""].filter(Boolean).join("\n");
      return { ...shown, commit: target, text };
    }
    return worktreeStep(ctx, async (ctx) => {
      const backup =
        mode === "hard" ? await backupWork(ctx, "reset-hard", head, overwritten) : leaving.length ? await saveRef(ctx, `reset-${mode}`, head, "commit") : null;
      await git(ctx, ["reset", `--${mode}`, "--quiet", target, "--"]);
      const text = [...lines(true), backup ? backupText(backup) : ""].filter(Boolean).join("\n");
      return { ...shown, commit: target, backup, text };
    });
  },
});
