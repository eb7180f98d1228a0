import { z } from "zod";
import { pathParam, pathspec, refParam } from "../git/params.js";
import { numstat, cachedGitDir, resolveCommit, gitState, statText } from "../git/repo.js";
import { git } from "../git/run.js";
import { PATCH_READ_BYTES, capDiff, fileList } from "../git/text.js";
import { defineTool } from "./tool.js";

export const gitDiffTool = defineTool({
  id: "git_diff",
  description: "Shows changes as a unified diff: the worktree against the index by default, the index against HEAD with staged, or against a ref. Untracked files are not included; git_status lists them.",
  params: {
    path: pathParam().optional().describe("Only this file or folder."),
    staged: z.boolean().optional().describe("Diff the index (what a commit would take) instead of the worktree."),
    ref: refParam().optional().describe("Compare against this commit, branch or tag (with staged: the index against it; else the worktree against it)."),
  },
  mutating: false,
  state: gitState,
  async run({ path, staged, ref }, ctx) {
    await cachedGitDir(ctx);
    const args: string[] = [];
    if (staged) args.push("--cached");
    if (ref) args.push(await resolveCommit(ctx, ref));
    const spec: string[] = ["--"];
    if (path) spec.push(pathspec((await ctx.ws.paths.resolve(path, { allowGitDir: false })).rel));
    const [files, diff] = await Promise.all([
      numstat(ctx, [...args, ...spec]),
      git(ctx, ["diff", "--no-ext-diff", "--no-renames", ...args, ...spec], { maxBytes: PATCH_READ_BYTES }),
    ]);
    const capped = capDiff(diff.stdout, "pass path to see one file, or read the stat above", diff.truncated);
    const head = files.length ? `${files.length} file${files.length > 1 ? "s" : ""} changed\n${statText(files)}\n` : "no changes\n";
    return { ...fileList(files), diff: capped.text, truncated: capped.truncated, text: `${head}${capped.text}`.trimEnd() };
  },
});
