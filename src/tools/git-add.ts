import { pathsParam, relPaths } from "../git/params.js";
import { commitStep } from "../git/step.js";
import { pendingChanges, refuseIgnored, requireKnownPaths, stageChanges } from "../git/stage.js";
import { list } from "../git/text.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitAddTool = defineTool({
  id: "git_add",
  description:
    "Stages changes for the next commit: the given paths, or everything (new, modified and deleted files, like `git add -A`). Preview: the files that would be staged; approved, exactly those are staged.",
  params: {
    paths: pathsParam().optional().describe("Files or folders to stage; omit to stage every change in the worktree."),
  },
  mutating: true,
  hints: { destructive: false, idempotent: true },
  state: gitToolState,
  async run({ paths }, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    const rels = paths ? await relPaths(ctx, paths) : undefined;
    if (rels) await requireKnownPaths(ctx, rels);
    const changes = await pendingChanges(ctx, rels);
    if (rels) await refuseIgnored(ctx, rels, changes);
    if (!ctx.dryRun) await commitStep(ctx, (ctx) => stageChanges(ctx, changes));
    const verb = ctx.dryRun ? "would stage" : "staged";
    const text = changes.length
      ? [
          list(
            `${verb} (add)`,
            changes.filter((c) => c.action === "add").map((c) => c.path),
          ),
          list(
            `${verb} (remove)`,
            changes.filter((c) => c.action === "remove").map((c) => c.path),
          ),
        ]
          .filter(Boolean)
          .join("\n")
      : "nothing to stage: the index already matches the worktree for these paths";
    return { staged: changes, text };
  },
});
