import { listOfPiece } from "../core/changelist-marks.js";
import { tagOf } from "../core/hash.js";
import { allPieces } from "../core/line-pairs.js";
import { requireLines } from "../core/line-status.js";
import { renderLine } from "../core/text.js";
import { askedLinesParam, filePathParam } from "../git/line-params.js";
import { fileWithMarks } from "../git/line-service.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, lineToolState } from "./git-step.js";

export const gitChangelistOfTool = defineTool({
  id: "git_changelist_of",
  description:
    "Says which changelist each line of one file belongs to: for the lines asked (default: every changed line, and every pure deletion), the list its change is in, null for an unchanged line.",
  params: {
    path: filePathParam(),
    lines: askedLinesParam("Worktree lines (1-based); default: every changed line."),
  },
  mutating: false,
  state: lineToolState,
  async run({ path, lines }, call) {
    const ctx = gitStep(call);
    const { file, marks } = await fileWithMarks(ctx, path);
    const w = file.worktree.seq;
    const hw = file.versions.headToWorktree;
    if (lines) requireLines(lines, w.lines.length);
    const asked =
      lines ??
      allPieces(hw)
        .filter((p) => p.newStart < p.newEnd)
        .map((p) => p.newStart + 1);
    const out = [...new Set(asked)].sort((a, b) => a - b).map((l) => ({ line: l, tag: tagOf(w.lines[l - 1]), changelist: marks.lines.get(l - 1) ?? null }));
    const deletions = lines
      ? []
      : allPieces(hw)
          .filter((p) => p.newStart === p.newEnd)
          .map((p) => ({
            after: p.newStart,
            head_lines: p.oldLines.map((o) => o + 1),
            changelist: listOfPiece(marks, p) ?? null,
          }));
    const text = [
      `file ${file.rel} · hash ${file.hash ?? "(deleted)"} · ${out.length} line${out.length === 1 ? "" : "s"}${deletions.length ? `, ${deletions.length} deletion${deletions.length === 1 ? "" : "s"}` : ""}`,
      ...out.map((x) => `${renderLine(x.line, x.tag, w.lines[x.line - 1])} (${x.changelist === null ? "unchanged" : `changelist ${x.changelist}`})`),
      ...deletions.map((d) => `deleted after line ${d.after} (HEAD ${d.head_lines.join(", ")}) (changelist ${d.changelist})`),
    ].join("\n");
    return { path: file.rel, hash: file.hash, lines: out, deletions, text };
  },
});
