import { listOfPiece } from "../core/changelist-marks.js";
import { tagOf } from "../core/hash.js";
import { allPieces } from "../core/line-pairs.js";
import { renderLine } from "../core/text.js";
import { ToolError } from "../errors.js";
import { sweep } from "../git/line-sweep.js";
import { changelistParam } from "../git/line-params.js";
import { pathParam } from "../git/params.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, lineToolState } from "./git-step.js";

export const gitChangelistLinesTool = defineTool({
  id: "git_changelist_lines",
  description:
    "Shows the changes of one changelist: per file, the worktree lines (N|TAG content) its changes are on, and its pure deletions (the HEAD lines, -N|TAG, and the line they sat after).",
  params: {
    changelist: changelistParam(),
    path: pathParam().optional().describe("Only this file."),
  },
  mutating: false,
  state: lineToolState,
  async run({ changelist, path }, call) {
    const ctx = gitStep(call);
    const svc = ctx.repo;
    await svc.changelists.ready();
    if (!svc.changelists.has(changelist))
      throw new ToolError("NOT_FOUND", `changelist: there is no changelist "${changelist}" (lists: ${svc.changelists.names().join(", ")}).`);
    const found = await sweep(ctx, { list: changelist, path });
    const files = [];
    const text: string[] = [];
    for (const { file, marks } of found.files) {
      const w = file.worktree.seq;
      const h = file.head.seq;
      const lines: number[] = [];
      const deletions: { after: number; deleted: { head_line: number; tag: string; content: string }[] }[] = [];
      for (const p of allPieces(file.versions.headToWorktree)) {
        if ((listOfPiece(marks, p) ?? svc.changelists.active) !== changelist) continue;
        if (p.newStart < p.newEnd) lines.push(p.newStart + 1);
        else deletions.push({ after: p.newStart, deleted: p.oldLines.map((o) => ({ head_line: o + 1, tag: tagOf(h.lines[o]), content: h.lines[o] })) });
      }
      files.push({ path: file.rel, hash: file.hash, lines, deletions });
      text.push(
        `file ${file.rel} · hash ${file.hash ?? "(deleted)"} · changelist ${changelist}: ${lines.length} line${lines.length === 1 ? "" : "s"}${deletions.length ? `, ${deletions.length} deletion${deletions.length === 1 ? "" : "s"}` : ""}`,
      );
      const rows: [number, string][] = lines.map((l) => [l, renderLine(l, tagOf(w.lines[l - 1]), w.lines[l - 1])]);
      for (const d of deletions)
        for (const x of d.deleted) rows.push([d.after + 0.5, `-${x.head_line}|${x.tag} [-${x.content}-] (deleted after line ${d.after})`]);
      for (const [, row] of rows.sort((a, b) => a[0] - b[0])) text.push(row);
    }
    if (!files.length) text.push(`changelist ${changelist} has no changes${path ? ` in ${path}` : ""}`);
    return { changelist, active: changelist === svc.changelists.active, files, text: text.join("\n") };
  },
});
