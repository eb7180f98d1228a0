import { z } from "zod";
import { pathParam, pathspec, refParam } from "../git/params.js";
import { numstat, statText } from "../git/log.js";
import { resolveCommit, tryResolve } from "../git/refs.js";
import { withTempIndex } from "../git/temp-index.js";
import { NO_SUBMODULE_WORKTREES, git, type GitCtx } from "../git/run.js";
import { PATCH_READ_BYTES, capDiff, fileList } from "../git/text.js";
import { ToolError } from "../errors.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitDiffTool = defineTool({
  id: "git_diff",
  description:
    "Shows changes as a unified diff: the worktree against the index by default, the index against HEAD with staged, or against a ref. Untracked files are not included; git_status lists them.",
  params: {
    path: pathParam().optional().describe("Only this file or folder."),
    staged: z.boolean().optional().describe("Diff the index (what a commit would take) instead of the worktree."),
    ref: refParam().optional().describe("Compare against this commit, branch or tag (with staged: the index against it; else the worktree against it)."),
  },
  mutating: false,
  state: gitToolState,
  async run({ path, staged, ref }, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    const args: string[] = [];
    if (staged) args.push("--cached");
    const base = ref ? await resolveCommit(ctx, ref) : null;
    if (base) args.push(base);
    const spec: string[] = ["--"];
    if (path) {
      const target = await ctx.repo.paths.resolve(path, { allowGitDir: false });
      if (!target.exists) await requireKnown(ctx, target.rel, base, ref);
      spec.push(pathspec(target.rel));
    }
    const [files, diff] = await withTempIndex(ctx, "copy", (onCopy) =>
      Promise.all([
        numstat(onCopy, [...args, ...spec]),
        git(onCopy, ["diff", "--no-ext-diff", "--no-renames", NO_SUBMODULE_WORKTREES, ...args, ...spec], { maxBytes: PATCH_READ_BYTES }),
      ]),
    );
    const capped = capDiff(diff.stdout, "pass path to see one file, or read the stat above", diff.truncated);
    const head = files.length ? `${files.length} file${files.length > 1 ? "s" : ""} changed\n${statText(files)}\n` : "no changes\n";
    return { ...fileList(files), diff: capped.text, truncated: capped.truncated, text: `${head}${capped.text}`.trimEnd() };
  },
});

/** A path missing from the disk is still diffable if the index, HEAD or the ref has it (a deletion); else NOT_FOUND. */
async function requireKnown(ctx: GitCtx, rel: string, base: string | null, ref: string | undefined): Promise<void> {
  const spec = pathspec(rel);
  if ((await git(ctx, ["ls-files", "-z", "--", spec])).stdout) return;
  for (const tree of [base, await tryResolve(ctx, "HEAD")]) {
    if (tree && (await git(ctx, ["ls-tree", "-z", "--name-only", tree, "--", spec])).stdout) return;
  }
  throw new ToolError("NOT_FOUND", `${rel} is not in the worktree, the index, HEAD${ref ? ` or ${ref}` : ""}; check the path with git_status.`);
}
