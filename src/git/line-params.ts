/** Params the line-level tools share (SPEC 8), described once so every tool says the same about them. */
import { z } from "zod";
import { pathParam } from "./params.js";

const HASH =
  "The worktree file's hash (git_line_status or file_read give it) that the line numbers belong to; null for a file deleted from the worktree. A stale hash is HASH_MISMATCH and nothing changes.";
const LINES =
  "Worktree line numbers (1-based) whose changes to take; a changed line takes the HEAD lines it replaced with it. A pure deletion has no line: select it by its range.";
const RANGES = "Whole change ranges by id, as git_line_status numbers them for this hash.";

const hash = () =>
  z
    .string()
    .regex(/^[0-9a-fA-F]{16}$/, "must be a 16-hex-digit file hash")
    .nullable();
const numbers = () => z.array(z.number().int().positive()).min(1);

// zod keeps a description on the outermost schema: `.optional()` comes before `.describe()`.
export const hashParam = () => hash().describe(HASH);
/** A hash of a file that must exist in the worktree (git_rollback_lines writes it). */
export const existingHashParam = (what: string) => hash().unwrap().describe(what);
export const optionalHashParam = () => hash().optional().describe(HASH);
export const optionalLinesParam = () => numbers().optional().describe(LINES);
export const optionalRangesParam = () => numbers().optional().describe(RANGES);
export const filePathParam = () => pathParam().describe("The file, relative to the workspace root.");
export const changelistParam = (what = "A changelist name (git_changelists lists them).") => z.string().min(1).describe(what);
export const optionalChangelistParam = (what: string) => z.string().min(1).optional().describe(what);
/** The lines a read-only tool answers about (git_line_status, git_changelist_of). */
export const askedLinesParam = (what: string) => numbers().optional().describe(what);
/** The params of git_stage_lines and git_unstage_lines, which select alike. */
export const indexSelectionParams = (path: string, changelist: string) => ({
  path: pathParam().optional().describe(path),
  hash: optionalHashParam(),
  lines: optionalLinesParam(),
  ranges: optionalRangesParam(),
  changelist: optionalChangelistParam(changelist),
});
