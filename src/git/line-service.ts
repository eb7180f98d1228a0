/**
 * The line-level git service of one workspace (SPEC 8): the versions cache every line tool reads through and the
 * changelist tracker on the bus, both on the root's GitRepo (`repo.lines`, `repo.changelists`), which the daemon
 * starts once the workspace is live, so the tracker follows every change from then on.
 */
import type { FileMarks } from "../core/changelist-marks.js";
import type { LineFile } from "./line-versions.js";
import type { RepoCtx } from "./repo.js";

/** A file's three versions read now, with its changelist marks carried to them: what the read-only line tools answer from. */
export async function fileWithMarks(ctx: RepoCtx, path: string): Promise<{ file: LineFile; marks: FileMarks }> {
  const file = await ctx.repo.lines.load(ctx, path);
  return { file, marks: await ctx.repo.changelists.marksFor(file) };
}
