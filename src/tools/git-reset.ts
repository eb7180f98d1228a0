import { z } from "zod";
import { backupWork, saveRef } from "../git/backup.js";
import { pathspec, pathsParam, refParam } from "../git/params.js";
import { worktreeStep, commitLine, headInfo, logCommits, numstat, cachedGitDir, resolveCommit, gitState, statText } from "../git/repo.js";
import { git } from "../git/run.js";
import { ToolError } from "../errors.js";
import { relPaths } from "./git-add.js";
import { defineTool } from "./tool.js";

export const gitResetTool = defineTool({
  id: "git_reset",
  description: "Moves the current branch to ref: soft keeps index and files, mixed (the usual) also resets the index, hard also discards uncommitted changes. With paths, only unstages those paths (mixed). Whatever could be lost is saved to a backup ref first. Preview: the commits leaving the branch and the changes that would be discarded.",
  params: {
    ref: refParam().describe("Commit to move to, e.g. HEAD~1, a branch or a backup ref."),
    mode: z.enum(["soft", "mixed", "hard"]).describe("soft: move the branch only; mixed: and the index; hard: and the files."),
    paths: pathsParam().optional().describe("Only reset these paths in the index to their state at ref (mode must be mixed)."),
  },
  mutating: true,
  state: gitState,
  async run({ ref, mode, paths }, ctx) {
    await cachedGitDir(ctx);
    const { head, branch } = await headInfo(ctx);
    const target = await resolveCommit(ctx, ref);
    if (paths) {
      if (mode !== "mixed") throw new ToolError("INVALID_PARAMS", `mode: with paths only "mixed" is possible (it unstages them); to restore files use git_checkout or git_stash.`);
      const rels = await relPaths(ctx, paths);
      const files = await numstat(ctx, ["--cached", target, "--", ...rels.map(pathspec)]);
      const text = files.length ? `${ctx.dryRun ? "would unstage" : "unstaged"} (index set to ${ref}, files untouched):\n${statText(files)}` : `the index already matches ${ref} for these paths`;
      if (ctx.dryRun || !files.length) return { ref, mode, paths: rels, files, text };
      await worktreeStep(ctx, (ctx) => git(ctx, ["reset", "--quiet", target, "--", ...rels.map(pathspec)]));
      return { ref, mode, paths: rels, files, text };
    }
    if (!head) throw new ToolError("INVALID_PARAMS", "There is no commit yet to reset from.");
    const [leaving, discarded] = await Promise.all([
      logCommits(ctx, ["-n100", head, `^${target}`]),
      mode === "hard" ? numstat(ctx, [head]) : Promise.resolve([]),
    ]);
    const lines = [
      `${ctx.dryRun ? "would move" : "moved"} ${branch ?? "HEAD"} from ${head.slice(0, 7)} to ${ref} (${target.slice(0, 7)}), ${mode}`,
      leaving.length ? `commits leaving the branch:\n${leaving.map((c) => `  ${commitLine(c)}`).join("\n")}` : "",
      discarded.length ? `uncommitted changes discarded:\n${statText(discarded)}` : "",
      mode === "mixed" ? "staged changes become unstaged; files stay as they are" : mode === "soft" ? "index and files stay as they are" : "",
    ].filter(Boolean);
    const needsBackup = mode === "hard" || leaving.length > 0;
    if (ctx.dryRun) {
      if (needsBackup) lines.push("what is lost will be saved to a backup ref first");
      return { ref, mode, commit: target, previous: head, leaving, discarded, text: lines.join("\n") };
    }
    return worktreeStep(ctx, async (ctx) => {
      const backup = mode === "hard" ? await backupWork(ctx, "reset-hard", head) : leaving.length ? await saveRef(ctx, `reset-${mode}`, head, "commit") : null;
      await git(ctx, ["reset", `--${mode}`, "--quiet", target, "--"]);
      if (backup) lines.push(`saved as ${backup.ref} (${backup.kind === "worktree" ? "uncommitted changes and HEAD" : "the old tip"}); restore: ${backup.restore}`);
      return { ref, mode, commit: target, previous: head, leaving, discarded, backup, text: lines.join("\n") };
    });
  },
});
