import { rangeStates } from "../core/line-status.js";
import { changelistParam, filePathParam, hashParam, optionalLinesParam, optionalRangesParam } from "../git/line-params.js";
import { checkHash } from "../git/line-stage.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, lineToolState } from "./git-step.js";

export const gitChangelistMarkTool = defineTool({
  id: "git_changelist_mark",
  description:
    "Moves chosen changes of one file to a changelist (made if new), so the worktree can later be committed as several commits (git_commit with changelist). Select with hash + lines or ranges from git_line_status (a range is split where the selection ends); no selection moves every change of the file. Changelists follow the file as it changes and persist in .git/tool-layer/; this is bookkeeping, not a change to the repository. Selecting no changed line is NO_CHANGE.",
  params: {
    path: filePathParam(),
    hash: hashParam(),
    lines: optionalLinesParam(),
    ranges: optionalRangesParam(),
    changelist: changelistParam("The changelist to move the changes to; created if it does not exist."),
  },
  // Bookkeeping, so no approval gate; but it changes the lists persisted in .git/tool-layer/, so it is not read-only.
  mutating: false,
  hints: { read_only: false, destructive: false, idempotent: true },
  state: lineToolState,
  async run({ path, hash, lines, ranges, changelist }, call) {
    const ctx = gitStep(call);
    const svc = ctx.repo;
    const file = await svc.lines.load(ctx, path);
    checkHash(file, hash);
    const hw = file.versions.headToWorktree;
    const sel = lines || ranges ? { lines, ranges } : { ranges: hw.ranges.map((r) => r.id) };
    const r = await svc.changelists.mark(file, sel, changelist);
    const states = rangeStates(file.versions, r.marks);
    const ranges2 = states.map((x) => `${x.range} ${x.changelist ?? "split"}`).join(", ");
    return {
      path: file.rel,
      hash: file.hash,
      changelist,
      created: r.created,
      marked: r.marked,
      ranges: states,
      text: `marked ${r.marked} change${r.marked === 1 ? "" : "s"} of ${file.rel} as changelist ${changelist}${r.created ? " (new list)" : ""} · ranges: ${ranges2}`,
    };
  },
});
