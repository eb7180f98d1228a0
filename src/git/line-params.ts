/** Params the line-level tools share (SPEC 8), described once so every tool says the same about them. */
import { z } from "zod";
import { pathParam } from "./params.js";

export const hashParam = () =>
  z.string().regex(/^[0-9a-fA-F]{16}$/, "must be a 16-hex-digit file hash").nullable()
    .describe("The worktree file's hash (git_line_status or file_read give it) that the line numbers belong to; null for a file deleted from the worktree. A stale hash is HASH_MISMATCH and nothing changes.");

export const linesParam = () =>
  z.array(z.number().int().positive()).min(1)
    .describe("Worktree line numbers (1-based) whose changes to take; a changed line takes the HEAD lines it replaced with it. A pure deletion has no line: select it by its range.");

export const rangesParam = () =>
  z.array(z.number().int().positive()).min(1)
    .describe("Whole change ranges by id, as git_line_status numbers them for this hash.");

export const filePathParam = () => pathParam().describe("The file, relative to the workspace root.");

export const changelistParam = () => z.string().min(1).describe("A changelist name (git_changelists lists them).");
