import { indexSelectionParams } from "../git/line-params.js";
import { runIndexTool } from "../git/line-stage.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, lineToolState } from "./git-step.js";

export const gitUnstageLinesTool = defineTool({
  id: "git_unstage_lines",
  description:
    "Unstages chosen lines: in the file's index entry, the lines the selection names go back to HEAD's (written as a blob and an index entry). Select with path + hash + lines or ranges (worktree numbers from git_line_status); path alone unstages the whole file (as git reset -- path), nothing at all unstages everything, changelist unstages every change of that list. Never touches the worktree. Preview: the unified diff the index would gain. Result: unstaged (that diff), files, and the new ranges status.",
  params: indexSelectionParams(
    "The file; omit it (with no selection) to unstage everything, or to unstage a whole changelist.",
    "Unstage every change of this changelist (in path only, if given).",
  ),
  mutating: true,
  hints: { destructive: false },
  state: lineToolState,
  run: (params, call) => runIndexTool("unstage", params, gitStep(call)),
});
