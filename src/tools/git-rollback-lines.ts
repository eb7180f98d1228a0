import { remapMarks } from "../core/changelist-marks.js";
import { diffLines } from "../core/line-diff.js";
import { lineStatus } from "../core/line-status.js";
import { rollbackLines } from "../core/stage-lines.js";
import { patchOf, withBom } from "../core/render.js";
import { dominantEol, serialize } from "../core/text.js";
import { ToolError } from "../errors.js";
import { existingHashParam, filePathParam, optionalLinesParam, optionalRangesParam } from "../git/line-params.js";
import { lineGit, lineGitState } from "../git/line-service.js";
import { checkHash } from "../git/line-stage.js";
import { defineTool } from "./tool.js";

export const gitRollbackLinesTool = defineTool({
  id: "git_rollback_lines",
  description: "Reverts chosen worktree lines to HEAD's (JetBrains' Rollback): the selected changes are undone in the file itself, everything else is kept. Select with hash + lines or ranges from git_line_status; no selection reverts every change of the file. Written like file_write (atomic, attributed to your session, HASH_MISMATCH if the file changed); the index is not touched. Preview: the diff of the file.",
  params: {
    path: filePathParam(),
    hash: existingHashParam("The worktree file's hash (from git_line_status or file_read) the line numbers belong to."),
    lines: optionalLinesParam(),
    ranges: optionalRangesParam(),
  },
  mutating: true,
  state: lineGitState,
  async run({ path, hash, lines, ranges }, ctx) {
    const svc = lineGit(ctx.ws);
    const file = await svc.files.load(ctx, path);
    if (file.hash === null) throw new ToolError("NOT_FOUND", `${file.rel} is deleted in the worktree; bring it back whole with git_checkout (or file_write it), then roll back lines.`);
    checkHash(file, hash);
    const sel = lines || ranges ? { lines, ranges } : undefined;
    // HEAD's lines are in git's form: where git converts line endings they take the worktree's.
    const built = rollbackLines(file.versions, sel, { eol: file.converts ? dominantEol(file.worktree.seq.eols) : undefined });
    if (!built.selected) throw new ToolError("NO_CHANGE", `The selection holds no changed line of ${file.rel}; git_line_status shows the changed lines and ranges.`);
    const next = { lines: built.lines, eols: built.eols };
    const bom = file.worktree.bom && next.lines.length > 0;
    const bytes = serialize({ bom, ...next });
    const marks = await svc.changelists.marksFor(file);
    const written = await ctx.ws.files.write(ctx, { target: file.target, expected: file.hash, produce: () => ({ bytes }) });
    const after = file.versions.withWorktree(next);
    const cr = file.versions.worktreeCr;
    const edit = diffLines(file.worktree.seq, next, { cr, ids: file.versions.ids });
    const marksAfter = remapMarks(marks, edit, after.headToWorktree, svc.changelists.active);
    const { ranges: left } = lineStatus(after, { marks: marksAfter, lines: [] });
    // The patch shows every byte written, a CR and the BOM too: the same diff unless CRs are ignored or there is a BOM.
    const exact = cr === "exact" && !file.worktree.bom && !bom;
    const diff = patchOf(file.rel, exact ? edit : diffLines(withBom(file.worktree.seq, file.worktree.bom), withBom(next, bom), { ids: file.versions.ids })).diff;
    const verb = ctx.dryRun ? "would roll back" : "rolled back";
    const emptied = !next.lines.length && file.head.sha === null ? "\nthe file is now empty (it is not in HEAD): delete it with file_delete if it should go" : "";
    return {
      path: file.rel,
      hash: written.hash,
      previous_hash: file.hash,
      rolled_back: built.selected,
      diff,
      ranges: left,
      text: `file ${file.rel} · hash ${written.hash} (was ${file.hash}) · ${verb} ${built.selected} change${built.selected === 1 ? "" : "s"} to HEAD · ${left.length} range${left.length === 1 ? "" : "s"} left${emptied}\n${diff}`.trimEnd(),
    };
  },
});
