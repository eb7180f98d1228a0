import { indexSelectionParams } from "../git/line-params.js";
import { runIndexTool } from "../git/line-stage.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, lineToolState } from "./git-step.js";

export const gitStageLinesTool = defineTool({
  id: "git_stage_lines",
  description:
    "Stages chosen lines of the worktree: the file's index entry becomes its current index content with exactly the selected worktree changes applied (written as a blob and an index entry, never as a patch, so whitespace settings cannot alter it). Select with path + hash + lines or ranges (from git_line_status); path alone stages the whole file (as git add), nothing at all stages everything (as git add -A), changelist stages every change of that list. Never touches the worktree. Preview: the unified diff the index would gain. Result: staged (that diff), files, and the new ranges status.",
  params: indexSelectionParams(
    "The file; omit it (with no selection) to stage every change, or to stage a whole changelist.",
    "Stage every change of this changelist (in path only, if given).",
  ),
  mutating: true,
  hints: { destructive: false },
  state: lineToolState,
  run: (params, call) => runIndexTool("stage", params, gitStep(call)),
});
