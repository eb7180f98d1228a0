import { z } from "zod";
import { resolveBlock } from "../core/merge/keep-table.js";
import { serialize } from "../core/text.js";
import { ToolError } from "../errors.js";
import { readRaw } from "../fs/read-text.js";
import { KIND_TEXT, locate, renderLanded, rewriteWorktree } from "../git/conflicts-model.js";
import { type FileState, readConflicts } from "../git/conflicts-read.js";
import { rewriteOptions } from "../git/conflicts-settle.js";
import { pathParam, pathspec, relPaths } from "../git/params.js";
import { type GitStep, worktreeStep } from "../git/step.js";
import { git } from "../git/run.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

const DESCRIPTION = `Resolves one conflict block (numbered as git_conflicts lists them for the file's hash) in the worktree: its marker region becomes take ("ours", "theirs", "base", "both" = ours then theirs, "auto" = the proposal git_conflicts shows), or keep, an ordered table of the lines to keep: "ours:N", "theirs:N", "base:N" (N as numbered within that side; "theirs:N:TAG" also checks the tag) and {"text": "..."} for a new line.
Written through the file write path with the file's hash (HASH_MISMATCH if it changed: list again, since numbers change with every resolution). Without block, take "ours" | "theirs" | "delete" settles a whole file and stages it: for conflicts with no marker region (modified on one side and deleted on the other, binary files), or to take one side of a whole text file. Preview: the region before and after.`;

const keepEntry = z.union([z.string(), z.strictObject({ text: z.string() })]);

export const gitConflictResolveTool = defineTool({
  id: "git_conflict_resolve",
  description: DESCRIPTION,
  params: {
    path: pathParam().describe("The conflicted file."),
    hash: z
      .string()
      .regex(/^[0-9a-fA-F]{16}$/, "must be a 16-hex-digit file hash")
      .nullable()
      .describe("The file's hash from git_conflicts (null when the file is not in the worktree)."),
    block: z.number().int().min(1).optional().describe("The block number from git_conflicts; omit it to settle the whole file with take."),
    take: z
      .enum(["ours", "theirs", "base", "both", "auto", "delete"])
      .optional()
      .describe('With block: "ours", "theirs", "base", "both" or "auto". Without: "ours", "theirs" or "delete" (the whole file).'),
    keep: z.array(keepEntry).optional().describe('With block: the lines to keep, in order: "ours:N", "theirs:N:TAG", "base:N" or {"text": "a new line"}.'),
  },
  mutating: true,
  hints: { destructive: false },
  state: gitToolState,
  async run(params, call) {
    const ctx = gitStep(call);
    const [rel] = await relPaths(ctx, [params.path]);
    // Not located here: the write locates the blocks on the file as it is under its lock.
    const [state] = await readConflicts(ctx, { only: [rel], cached: true, locate: false });
    if (!state) throw new ToolError("NOT_FOUND", `${rel} is not conflicted (no unmerged index entry); git_conflicts lists the conflicted files.`);
    if (params.block === undefined) return resolveWhole(ctx, state, params.hash, params.take, params.keep);
    return resolveOne(ctx, state, params.hash, params.block, params.take, params.keep);
  },
});

type Take = "ours" | "theirs" | "base" | "both" | "auto" | "delete";

async function resolveOne(
  ctx: GitStep,
  s: FileState,
  hash: string | null,
  block: number,
  take: Take | undefined,
  keep: z.output<typeof keepEntry>[] | undefined,
) {
  if (s.kind !== "text" || !s.sm || !s.target) {
    throw new ToolError(
      "INVALID_PARAMS",
      `block: ${s.path} has no blocks (${KIND_TEXT[s.kind]}); settle it whole: git_conflict_resolve {path, hash, take: "ours"|"theirs"|"delete"} without block.`,
    );
  }
  if (take === "delete")
    throw new ToolError(
      "INVALID_PARAMS",
      `take: "delete" settles a whole file; omit block, or take "ours", "theirs", "base", "both" or "auto" for block ${block}.`,
    );
  if (hash === null) throw new ToolError("INVALID_PARAMS", `hash: ${s.path} is in the worktree; pass its hash from git_conflicts.`);
  const { sm } = s;
  let shown: { before: string[]; after: string[]; beforeLines: [number, number]; afterLines: [number, number] | null; left: number; all: boolean } | null =
    null;
  const { current, hash: newHash } = await ctx.files.write(ctx, {
    target: s.target,
    expected: hash,
    needsExisting: true,
    produce: (current) => {
      const doc = current!.doc;
      const loc = locate(sm, doc.lines, s.attrs.markerSize);
      const at = loc.located[block - 1];
      if (!at) {
        const k = loc.located.length;
        throw new ToolError(
          "NOT_FOUND",
          `block: ${s.path} has ${k ? `blocks 1-${k}` : "no block left"} at hash ${current!.hash}; there is no block ${block}. List them again with git_conflicts.`,
          { blocks: k },
        );
      }
      const opts = rewriteOptions(sm, loc, doc, { ours: "ours", theirs: "theirs" });
      const lines = resolveBlock(
        sm.merge.blocks[at.block],
        { take: take as Exclude<Take, "delete"> | undefined, keep },
        {
          eol: opts.eol,
          atEnd: at.end === doc.lines.length - 1,
          lineEols: opts.lineEols,
          label: `block ${block}`,
        },
      );
      const out = rewriteWorktree(sm, doc, loc, new Map([[at.block, lines]]), opts);
      const run = out.rewritten.find((r) => r.start === at.start)!;
      // The other blocks stay, each in a region of its own (a group git joined is split by the rewrite).
      const left = loc.located.length - 1;
      shown = {
        before: renderLanded(doc.lines, at.start, at.end + 1),
        after: renderLanded(out.lines, run.newStart, run.newEnd),
        beforeLines: [at.start + 1, at.end + 1],
        afterLines: run.newEnd > run.newStart ? [run.newStart + 1, run.newEnd] : null,
        left,
        all: out.rewritten.length > 1,
      };
      return { bytes: serialize({ bom: doc.bom, lines: out.lines, eols: out.eols }) };
    },
  });
  const r = shown!;
  const how = take !== undefined ? `take "${take}"` : `a keep table of ${keep!.length} entr${keep!.length === 1 ? "y" : "ies"}`;
  const verb = ctx.dryRun ? "would resolve" : "resolved";
  const text = [
    `file ${s.path} · hash ${newHash} (was ${current!.hash}) · block ${block} ${verb} with ${how} · ${r.left} block${r.left === 1 ? "" : "s"} left${r.left ? " (numbered anew: list again)" : ": git_conflict_finalize stages the file"}`,
    `before (lines ${r.beforeLines[0]}-${r.beforeLines[1]}):`,
    ...r.before.map((l) => `  ${l}`),
    r.afterLines ? `after (lines ${r.afterLines[0]}-${r.afterLines[1]}):` : `after: no lines (the region is removed)`,
    ...r.after.map((l) => `  ${l}`),
    r.all
      ? `the other blocks' markers ${ctx.dryRun ? "would be" : "were"} rewritten with the daemon's marker size too (the file had git's, and its content has marker-like lines)`
      : "",
  ]
    .filter(Boolean)
    .join("\n");
  return { path: s.path, hash: newHash, previous_hash: current!.hash, block, before: r.before, after: r.after, lines: r.afterLines, blocks_left: r.left, text };
}

/** Settles a whole file: one side's version (or none) into the worktree and the index, which clears its unmerged entries. */
async function resolveWhole(ctx: GitStep, s: FileState, hash: string | null, take: Take | undefined, keep: unknown) {
  if (keep !== undefined || take === undefined || !["ours", "theirs", "delete"].includes(take)) {
    throw new ToolError(
      "INVALID_PARAMS",
      `take: without block, take "ours", "theirs" or "delete" settles the whole file${s.kind === "text" ? `; to resolve one block of ${s.path}, pass block (git_conflicts numbers them)` : ""}.`,
    );
  }
  const side = take === "ours" ? s.entry.ours : take === "theirs" ? s.entry.theirs : undefined;
  const removes = take === "delete" || !side;
  const checkHash = async () => {
    const now = s.target
      ? await readRaw(s.target, ctx.repo.maxFileBytes).then(
          (f) => f.hash,
          () => null,
        )
      : null;
    if ((hash?.toLowerCase() ?? null) !== now) {
      throw new ToolError(
        "HASH_MISMATCH",
        `${s.path} changed since its hash ${hash ?? "null"} (now ${now ?? "not in the worktree"}); list the conflicts again with git_conflicts.`,
        { current_hash: now },
      );
    }
  };
  await checkHash();
  const what = removes
    ? `delete ${s.path}${take !== "delete" ? ` (${take} has no version of it)` : ""} and stage the deletion`
    : `take ${take}'s version of ${s.path} and stage it`;
  const shown = { path: s.path, take, deleted: removes, staged: true };
  if (ctx.dryRun) return { ...shown, hash, text: `would ${what}` };
  return worktreeStep(ctx, async (ctx) => {
    await checkHash();
    if (removes) await git(ctx, ["rm", "--quiet", "--force", "--ignore-unmatch", "--", pathspec(s.path)]);
    else {
      // A stage-0 entry replaces the unmerged ones; checkout-index writes it as git would (filters, mode).
      await git(ctx, ["update-index", "-z", "--index-info"], { input: `${side!.mode} ${side!.oid}\t${s.path}\0` });
      // checkout-index takes file names, not pathspecs.
      if (side!.mode !== "160000") await git(ctx, ["checkout-index", "--force", "--", s.path]);
    }
    const now =
      s.target && !removes
        ? await readRaw(s.target, ctx.repo.maxFileBytes).then(
            (f) => f.hash,
            () => null,
          )
        : null;
    return {
      ...shown,
      hash: now,
      previous_hash: hash,
      text: `${what
        .replace(/^take/, "took")
        .replace(/^delete/, "deleted")
        .replace("and stage", "and staged")}${now ? ` (hash ${now})` : ""}`,
    };
  });
}
