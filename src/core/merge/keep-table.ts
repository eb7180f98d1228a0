import { ToolError } from "../../errors.js";
import { splitContent } from "../edits.js";
import { tagOf } from "../hash.js";
import { type Eol, renderLine } from "../text.js";
import { autoResolve } from "./auto-resolve.js";
import type { ConflictBlock, LineEnd, Lines, Side } from "./three-way.js";

/**
 * What git_conflict_resolve puts in place of a block's marker region (SPEC 9): a whole side (`take`), or a table of the
 * lines to keep, in order: `"ours:N"`, `"theirs:N"`, `"base:N"` (N within that side of the block, as git_conflicts
 * numbers them), `"side:N:TAG"` to check the line's tag as well, or `{text}` for a new line.
 */

export type SideName = "ours" | "theirs" | "base";
export type Take = SideName | "both" | "auto";
export type KeepEntry = string | { text: string };

/** How the replacement lines end (SPEC 5: new lines take the file's line ending). */
export interface ReplaceContext {
  /** The worktree file's line ending (dominantEol of its lines). */
  eol: Eol;
  /** The region ends the file: then the last line ends as its version did (without a newline if it had none). */
  atEnd: boolean;
  /** "keep" (default): a side's line keeps its terminator. "file": it takes `eol` (index and worktree differ in line endings). */
  lineEols?: "keep" | "file";
  /** Names the block in messages ("block 3"). */
  label?: string;
}

/** A block's side as git_conflicts shows it: `N|TAG content`, N counted within the side. */
export function renderSide(side: Pick<Side, "lines">): string[] {
  return side.lines.map((line, i) => renderLine(i + 1, tagOf(line), line));
}

/** A kept line: its content and terminator, or a new line (null terminator: the file's). */
type Kept = { line: string; eol: LineEnd | null };

function finish(kept: Kept[], ctx: ReplaceContext): Lines & { lines: string[]; eols: LineEnd[] } {
  const lines = kept.map((k) => k.line);
  const eols = kept.map((k, i): LineEnd => {
    const last = i === kept.length - 1;
    if (k.eol === null) return ctx.eol;
    if (k.eol === "") return last && ctx.atEnd ? "" : ctx.eol;
    return ctx.lineEols === "file" ? ctx.eol : k.eol;
  });
  return { lines, eols };
}

const sideLines = (side: Lines): Kept[] => side.lines.map((line, i) => ({ line, eol: side.eols[i] }));

/** The lines `take` puts in place of the block; "auto" is the daemon's proposal (CONFLICT when it has none). */
export function resolveTake(block: ConflictBlock, take: Take, ctx: ReplaceContext): Lines & { lines: string[]; eols: LineEnd[] } {
  const name = ctx.label ?? "this block";
  switch (take) {
    case "ours":
    case "theirs":
    case "base":
      return finish(sideLines(block[take]), ctx);
    case "both":
      return finish([...sideLines(block.ours), ...sideLines(block.theirs)], ctx);
    case "auto": {
      const auto = autoResolve(block);
      if (!auto) {
        throw new ToolError(
          "CONFLICT",
          `${name} has no automatic resolution (both sides changed the same words); take "ours", "theirs" or "both", or compose it with a keep table.`,
        );
      }
      return finish(sideLines(auto), ctx);
    }
    default:
      throw new ToolError("INVALID_PARAMS", `take: ${JSON.stringify(take)} is not one of "ours", "theirs", "base", "both", "auto".`);
  }
}

const ENTRY = /^(ours|theirs|base):([0-9]+)(?:[:|#]([0-9a-f]{4}))?$/i;

function where(side: readonly string[], tag: string, name: SideName): string[] {
  const at: string[] = [];
  side.forEach((line, i) => {
    if (tagOf(line) === tag) at.push(`${name}:${i + 1}:${tag}`);
  });
  return at;
}

function keptLine(block: ConflictBlock, entry: unknown, field: string, name: string): Kept[] {
  if (typeof entry === "object" && entry !== null && !Array.isArray(entry)) {
    const keys = Object.keys(entry);
    const text = (entry as { text?: unknown }).text;
    if (keys.length !== 1 || keys[0] !== "text" || typeof text !== "string") {
      throw new ToolError("INVALID_PARAMS", `${field}: a new line is {"text": "..."} with nothing else; got ${JSON.stringify(entry)}.`);
    }
    return splitContent(text).map((line) => ({ line, eol: null }));
  }
  if (typeof entry !== "string") {
    throw new ToolError(
      "INVALID_PARAMS",
      `${field}: ${JSON.stringify(entry)} is not a keep entry; use "ours:N", "theirs:N", "base:N", "ours:N:TAG" or {"text": "..."}.`,
    );
  }
  const m = ENTRY.exec(entry.trim());
  if (!m) {
    throw new ToolError(
      "INVALID_PARAMS",
      `${field}: ${JSON.stringify(entry)} is not a keep entry; use "ours:N", "theirs:N", "base:N" (N as git_conflicts numbers that side), ` +
        `"theirs:N:TAG" to check the tag, or {"text": "..."} for a new line.`,
    );
  }
  const sideName = m[1].toLowerCase() as SideName;
  const n = Number(m[2]);
  const side = block[sideName];
  if (n < 1) throw new ToolError("INVALID_PARAMS", `${field}: ${JSON.stringify(entry)}: lines are numbered from 1.`);
  if (n > side.lines.length) {
    const has = side.lines.length ? `lines ${sideName}:1-${sideName}:${side.lines.length}` : "no lines";
    throw new ToolError(
      "NOT_FOUND",
      `${field}: ${JSON.stringify(entry)}: ${name}'s ${sideName} side has ${has}. List the conflicts again and use the numbers shown there.`,
      {
        field,
        entry,
        side: sideName,
        side_lines: side.lines.length,
      },
    );
  }
  const line = side.lines[n - 1];
  if (m[3]) {
    const tag = m[3].toUpperCase();
    const actual = tagOf(line);
    if (actual !== tag) {
      const now = where(side.lines, tag, sideName);
      const there = now.length ? `tag ${tag} is at ${now.join(", ")}` : `no ${sideName} line has tag ${tag}`;
      throw new ToolError(
        "TAG_MISMATCH",
        `${field}: ${entry} does not match: ${sideName} line ${n} has tag ${actual}, and ${there}. List the conflicts again and use the current tags.`,
        {
          field,
          entry,
          actual_tag: actual,
          now_at: now,
        },
      );
    }
  }
  return [{ line, eol: side.eols[n - 1] }];
}

/** The lines a keep table puts in place of the block, in the table's order. */
export function resolveKeep(block: ConflictBlock, keep: readonly KeepEntry[], ctx: ReplaceContext): Lines & { lines: string[]; eols: LineEnd[] } {
  if (!Array.isArray(keep)) throw new ToolError("INVALID_PARAMS", `keep: must be a list of entries such as "ours:1", "theirs:2:8C3A" or {"text": "..."}.`);
  const name = ctx.label ?? "this block";
  const kept = keep.flatMap((entry, i) => keptLine(block, entry, `keep[${i}]`, name));
  return finish(kept, ctx);
}

/** git_conflict_resolve's choice for one block: exactly one of `take` and `keep`. */
export function resolveBlock(
  block: ConflictBlock,
  choice: { take?: Take; keep?: readonly KeepEntry[] },
  ctx: ReplaceContext,
): Lines & { lines: string[]; eols: LineEnd[] } {
  if ((choice.take === undefined) === (choice.keep === undefined)) {
    throw new ToolError("INVALID_PARAMS", `give exactly one of take ("ours", "theirs", "base", "both", "auto") and keep (a table of lines).`);
  }
  return choice.take !== undefined ? resolveTake(block, choice.take, ctx) : resolveKeep(block, choice.keep!, ctx);
}
