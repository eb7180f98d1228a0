import { currentOperation, operationName, sideLabels } from "../git/conflicts-operation.js";
import { fileView, fileViewText, readConflicts } from "../git/conflicts-read.js";
import { pathParam, relPaths } from "../git/params.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitConflictsTool = defineTool({
  id: "git_conflicts",
  description:
    "Lists the conflicts of the operation in progress (merge, rebase, cherry-pick, revert, stash apply): every conflicted file with its hash and its blocks, numbered 1..k in file order, each with the marker region's worktree lines and its ours, base and theirs sides as `N|TAG content` lines numbered within the side, and `auto`, the resolution git_conflict_resolve {take:\"auto\"} would apply (a WORD MERGE is flagged: check it), or null. ours_label and theirs_label say what each side is (in a rebase ours is the branch being rebuilt, theirs the commit being replayed). Blocks come from the index stages, not from the markers, so content that looks like a marker is safe; blocks already resolved in the worktree are not listed. Files without blocks (modify/delete, binary) are listed with their kind: settle them whole. Block numbers are valid for the file's hash.",
  params: {
    path: pathParam().optional().describe("Only this conflicted file."),
  },
  mutating: false,
  state: gitToolState,
  async run({ path }, call) {
    const ctx = gitStep(call);
    const only = path ? await relPaths(ctx, [path]) : undefined;
    const [cur, states] = await Promise.all([currentOperation(ctx), readConflicts(ctx, { only, cached: true })]);
    const files = states.map(fileView);
    const labels = cur ? await sideLabels(ctx, cur) : null;
    const operation = cur ? cur.op : null;
    const header = cur
      ? `${operationName(cur)} in progress\nours = ${labels!.ours_label}\ntheirs = ${labels!.theirs_label}`
      : "no merge, rebase, cherry-pick, revert or stash apply is in progress";
    const blocks = files.reduce((n, f) => n + f.blocks.length, 0);
    const done =
      cur && !files.some((f) => f.blocks.length || f.kind !== "text" || f.unmatched_regions || f.stray_markers)
        ? files.length
          ? "every conflict is resolved in the worktree: git_conflict_finalize stages the files and goes on"
          : "no conflicted file is left: git_conflict_finalize goes on"
        : "";
    const summary =
      only && !files.length
        ? `${only[0]} is not conflicted`
        : `${files.length} conflicted file${files.length === 1 ? "" : "s"}, ${blocks} block${blocks === 1 ? "" : "s"} left`;
    const text = [header, summary, ...files.map((f) => fileViewText(f)), done].filter(Boolean).join("\n");
    return { operation, ...(labels ? { ours_label: labels.ours_label, theirs_label: labels.theirs_label } : {}), files, text };
  },
});
