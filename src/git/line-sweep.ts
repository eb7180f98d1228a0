/**
 * Which files a changelist call is about: every file that differs from HEAD (for the active list, which holds every
 * change of a file the tracker does not follow), or only the files with an entry naming the list, each read fresh with
 * its marks carried to what is on disk.
 */
import type { FileMarks } from "../core/changelist-marks.js";
import { ToolError } from "../errors.js";
import { hasList } from "./changelists.js";
import { type LineFile, changedPaths } from "./line-versions.js";
import type { RepoCtx } from "./repo.js";

/** A file's current marks, as a sweep over many files gives them. */
export interface MarkedFile {
  file: LineFile;
  marks: FileMarks;
}

/** What a sweep over many files found: their marks, and the files it could not read as lines (binary, unmerged...). */
export interface Sweep {
  files: MarkedFile[];
  skipped: { path: string; code: string }[];
}

/**
 * The changed files (with their current marks) a list, or every list, has: for the active list every changed file
 * may hold some, for another only the files with an entry naming it. `path` limits it to one file.
 */
export async function sweep(ctx: RepoCtx, opts: { list?: string; path?: string } = {}): Promise<Sweep> {
  const { lines: files, changelists: lists } = ctx.repo;
  await lists.ready();
  let candidates: string[];
  if (opts.path !== undefined) candidates = [(await ctx.repo.paths.resolve(opts.path, { allowGitDir: false })).rel];
  else if (opts.list !== undefined && opts.list !== lists.active) candidates = lists.entriesWith(opts.list);
  else candidates = [...new Set([...(await changedPaths(ctx)), ...lists.tracked()])].sort();
  const out: Sweep = { files: [], skipped: [] };
  for (const rel of candidates) {
    let file: LineFile;
    try {
      file = await files.load(ctx, rel, { mustExist: opts.path !== undefined });
    } catch (e) {
      if (!(e instanceof ToolError) || opts.path !== undefined) throw e;
      if (e.code !== "NOT_FOUND") out.skipped.push({ path: rel, code: e.code });
      continue;
    }
    const marks = await lists.marksFor(file);
    if (!file.versions.headToWorktree.ranges.length) continue;
    if (opts.list !== undefined && !hasList(marks, opts.list)) continue;
    out.files.push({ file, marks });
  }
  return out;
}
