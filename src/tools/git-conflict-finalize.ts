import { z } from "zod";
import { ToolError } from "../errors.js";
import { finalizeOperation } from "../git/conflicts-finalize.js";
import { autoModeOf } from "../git/conflicts-model.js";
import { currentOperation } from "../git/conflicts-operation.js";
import { autoResolveParam } from "./conflict-params.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitConflictFinalizeTool = defineTool({
  id: "git_conflict_finalize",
  description:
    "Finishes the operation whose conflicts are resolved: refuses (CONFLICT, naming each file and line) while a conflicted file still has a marker region or an index entry is still unmerged; else stages the resolved files and goes on: a merge is committed (with message, or git's), a rebase, cherry-pick or revert continues (and may stop again at the next conflicting commit: then auto-resolution runs and the answer lists what is left, block by block), a stash apply is done (a pop drops the stash, saved to a backup ref first). Preview: what would be staged, the step that would run and its hooks.",
  params: {
    message: z.string().min(1).optional().describe("A merge only: the merge commit's message instead of git's."),
    auto_resolve: autoResolveParam("Where the operation stops again (a rebase's next commit); default: as the operation was started"),
  },
  mutating: true,
  // It only goes forward: what it commits or replays stays in history, and an abandon still restores the start.
  hints: { destructive: false },
  timeoutMs: 900_000,
  state: gitToolState,
  async run({ message, auto_resolve }, call) {
    const ctx = gitStep(call);
    const cur = await currentOperation(ctx);
    if (!cur)
      throw new ToolError(
        "NO_CHANGE",
        "Nothing to finalize: no merge, rebase, cherry-pick, revert or stash apply is in progress (git_status shows the state).",
      );
    return finalizeOperation(ctx, cur, { message, mode: auto_resolve === undefined ? undefined : autoModeOf(auto_resolve) });
  },
});
