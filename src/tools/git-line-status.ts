import { lineStatus } from "../core/line-status.js";
import { askedLinesParam } from "../git/line-params.js";
import { fileWithMarks } from "../git/line-service.js";
import { stagedSummary, statusText } from "../git/line-text.js";
import { pathParam } from "../git/params.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, lineToolState } from "./git-step.js";

export const gitLineStatusTool = defineTool({
  id: "git_line_status",
  description:
    "Shows, line by line, what a JetBrains gutter shows for one file: each change range against HEAD (added, modified, deleted; numbered 1..k), whether it is staged (all, none, partial), its changelist, and for each changed worktree line its N|TAG, its word diff against HEAD and whether the index has it. These worktree line numbers, range ids and the file hash are what git_stage_lines, git_unstage_lines, git_rollback_lines and git_changelist_mark select with.",
  params: {
    path: pathParam().describe("The file, relative to the workspace root."),
    lines: askedLinesParam("Only these worktree lines (1-based), and the deletions next to them; default: every changed line."),
  },
  mutating: false,
  state: lineToolState,
  async run({ path, lines }, call) {
    const ctx = gitStep(call);
    const { file, marks } = await fileWithMarks(ctx, path);
    const status = lineStatus(file.versions, { lines, marks });
    const hw = file.versions.headToWorktree;
    const n = hw.ranges.length;
    const lists = [
      ...new Set(
        status.ranges.flatMap((r) =>
          r.changelist !== null ? [r.changelist] : ((r.changelist_parts as { changelist: string }[]) ?? []).map((p) => p.changelist),
        ),
      ),
    ];
    const head = `file ${file.rel} · hash ${file.hash ?? "(deleted)"} · ${n ? `${n} range${n === 1 ? "" : "s"} vs HEAD (${stagedSummary(status.ranges)}) · changelists: ${lists.join(", ")}` : "no changes vs HEAD"}`;
    return {
      path: file.rel,
      hash: file.hash,
      total_lines: file.worktree.seq.lines.length,
      ...status,
      text: statusText(head, hw, status, lines),
    };
  },
});
