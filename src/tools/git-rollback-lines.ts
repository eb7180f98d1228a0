import { remapMarks } from "../core/changelist-marks.js";
import { diffLines } from "../core/line-diff.js";
import { rangeStates } from "../core/line-status.js";
import { rollbackLines } from "../core/stage-lines.js";
import { patchOf, withBom } from "../core/render.js";
import { type Eol, dominantEol, eolStyle, serialize } from "../core/text.js";
import { ToolError } from "../errors.js";
import { existingHashParam, filePathParam, optionalLinesParam, optionalRangesParam } from "../git/line-params.js";
import { checkHash } from "../git/line-stage.js";
import { type LineFile, checkoutEol } from "../git/line-versions.js";
import type { GitCtx } from "../git/run.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, lineToolState } from "./git-step.js";

export const gitRollbackLinesTool = defineTool({
  id: "git_rollback_lines",
  description:
    "Reverts chosen worktree lines to HEAD's (JetBrains' Rollback): the selected changes are undone in the file itself, everything else is kept. Select with hash + lines or ranges from git_line_status; no selection reverts every change of the file. Written like file_write (atomic, attributed to your session, HASH_MISMATCH if the file changed); the index is not touched. Preview: the diff of the file.",
  params: {
    path: filePathParam(),
    hash: existingHashParam("The worktree file's hash (from git_line_status or file_read) the line numbers belong to."),
    lines: optionalLinesParam(),
    ranges: optionalRangesParam(),
  },
  mutating: true,
  state: lineToolState,
  async run({ path, hash, lines, ranges }, call) {
    const ctx = gitStep(call);
    const svc = ctx.repo;
    const file = await svc.lines.load(ctx, path);
    if (file.hash === null)
      throw new ToolError(
        "NOT_FOUND",
        `${file.rel} is deleted in the worktree; bring it back whole with git_checkout (or file_write it), then roll back lines.`,
      );
    checkHash(file, hash);
    const sel = lines || ranges ? { lines, ranges } : undefined;
    const built = rollbackLines(file.versions, sel, { eol: await headLinesEol(ctx, file) });
    if (!built.selected)
      throw new ToolError("NO_CHANGE", `The selection holds no changed line of ${file.rel}; git_line_status shows the changed lines and ranges.`);
    const next = { lines: built.lines, eols: built.eols };
    // The worktree's BOM stays (SPEC 4); a file rolled back to no line at all is HEAD's bytes: a lone BOM if HEAD is one.
    const bom = next.lines.length ? file.worktree.bom : built.complete && file.head.bom;
    const bytes = serialize({ bom, ...next });
    const marks = await svc.changelists.marksFor(file);
    const written = await ctx.files.write(ctx, { target: file.target, expected: file.hash, produce: () => ({ bytes }) });
    const after = file.versions.withWorktree(next);
    const cr = file.versions.worktreeCr;
    const edit = diffLines(file.worktree.seq, next, { cr, ids: file.versions.ids });
    const marksAfter = remapMarks(marks, edit, after.headToWorktree, svc.changelists.active);
    const left = rangeStates(after, marksAfter);
    // The patch shows every byte written, a CR and the BOM too: the same diff unless CRs are ignored or there is a BOM.
    const exact = cr === "exact" && !file.worktree.bom && !bom;
    const diff = patchOf(
      file.rel,
      exact ? edit : diffLines(withBom(file.worktree.seq, file.worktree.bom), withBom(next, bom), { ids: file.versions.ids }),
    ).diff;
    const verb = ctx.dryRun ? "would roll back" : "rolled back";
    const emptied =
      !next.lines.length && file.head.sha === null ? "\nthe file is now empty (it is not in HEAD): delete it with file_delete if it should go" : "";
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

/**
 * The terminator HEAD's lines take in the worktree: the worktree's own where git converts line endings (HEAD's lines
 * are in git's form); in a file with no terminator to follow, the one `git checkout` would write; else their own.
 */
async function headLinesEol(ctx: GitCtx, file: LineFile): Promise<Eol | undefined> {
  const w = file.worktree.seq;
  if (eolStyle(w.eols) === "none") return (await checkoutEol(ctx, file.rel, file.head.seq)) ?? undefined;
  return file.converts ? dominantEol(w.eols) : undefined;
}
