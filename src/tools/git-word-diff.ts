import { z } from "zod";
import { rangeJson } from "../core/line-diff.js";
import { rangeEntries, wordDiffText } from "../git/line-text.js";
import { pathParam, refParam } from "../git/params.js";
import { resolveCommit } from "../git/refs.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, lineToolState } from "./git-step.js";

export const gitWordDiffTool = defineTool({
  id: "git_word_diff",
  description:
    "Shows every changed line of one file with its word-level diff, as N|TAG lines: `kept [-old-]{+new+} kept`, an added line as {+line+}, a deleted one as -N|TAG [-line-] with its old number. The worktree against the index by default (like git diff), the index against HEAD with staged, the worktree against a commit with ref (with staged too: the index against it). Changed lines are paired by similarity, not position, so a rewritten or moved line is shown against the line it came from. An untracked file is all added.",
  params: {
    path: pathParam().describe("The file, relative to the workspace root."),
    staged: z.boolean().optional().describe("Compare the index (what a commit would take) with HEAD (or with ref) instead of the worktree with the index."),
    ref: refParam()
      .optional()
      .describe("Compare with this commit, branch or tag instead of HEAD: the worktree against it, or with staged the index against it."),
  },
  mutating: false,
  state: lineToolState,
  async run({ path, staged, ref }, call) {
    const ctx = gitStep(call);
    const base = ref ? await resolveCommit(ctx, ref) : undefined;
    const file = await ctx.repo.lines.load(ctx, path, { base });
    const v = file.versions;
    const from = base ? base.slice(0, 12) : staged ? "HEAD" : "index";
    const to = staged ? "index" : "worktree";
    const diff = staged ? v.headToIndex : base ? v.headToWorktree : v.indexToWorktree;
    const oldName = base ? "commit" : staged ? "HEAD" : "index";
    const ranges = rangeEntries(diff);
    const changes = ranges.flatMap((r) => r.entries);
    const count = changes.length;
    const head = `file ${file.rel} · hash ${file.hash ?? "(deleted)"} · ${from} -> ${to} · ${count ? `${count} changed line${count === 1 ? "" : "s"} in ${ranges.length} range${ranges.length === 1 ? "" : "s"}` : "no changes"}${staged ? " · numbered by the index" : ""}`;
    return {
      path: file.rel,
      hash: file.hash,
      from,
      to,
      changes,
      ranges: ranges.map((r) => rangeJson(r.range, "old")),
      text: wordDiffText(head, ranges, oldName),
    };
  },
});
