import { z } from "zod";
import { pathParam, pathspec, refParam } from "../git/params.js";
import { commitLine, logCommits } from "../git/log.js";
import { headInfo } from "../git/refs.js";
import { ToolError } from "../errors.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

/** Commits a call may ask for: more would flood a model's context; page with ref instead. */
export const MAX_LOG_LIMIT = 500;

export const gitLogTool = defineTool({
  id: "git_log",
  description: "Lists commits, newest first: short hash, date, author and subject.",
  params: {
    ref: refParam().optional().describe("Start from this commit or branch (default HEAD); a range like main..feature works too."),
    path: pathParam().optional().describe("Only commits that touch this file or folder."),
    limit: z.number().int().min(1).max(MAX_LOG_LIMIT).optional().describe("How many commits (default 20)."),
  },
  mutating: false,
  state: gitToolState,
  async run({ ref, path, limit }, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    const n = limit ?? 20;
    const spec = path ? ["--", pathspec((await ctx.repo.paths.resolve(path, { allowGitDir: false })).rel)] : [];
    // One git process in the usual case: a bad ref or an unborn branch is diagnosed only after log fails.
    const commits = await logCommits(ctx, [`-n${n + 1}`, "--end-of-options", ref ?? "HEAD", ...spec]).catch(async (e) => {
      if (!(e instanceof ToolError) || e.code !== "GIT_FAILED") throw e;
      if (!ref && !(await headInfo(ctx)).head) return null;
      if (/unknown revision|bad revision|invalid revision|ambiguous argument/i.test(e.message)) {
        throw new ToolError("NOT_FOUND", `ref: no commit or range "${ref}"; call git_branch or git_log to see what exists.`);
      }
      throw e;
    });
    if (!commits) return { commits: [], more: false, text: "no commits yet" };
    const more = commits.length > n;
    const shown = commits.slice(0, n);
    const text = shown.length
      ? `${shown.map(commitLine).join("\n")}${more ? `\n… more commits; raise limit or start from ref ${shown[shown.length - 1].short}^` : ""}`
      : "no commits";
    return { commits: shown, more, text };
  },
});
