import { pathParam, refParam } from "../git/params.js";
import { logCommits, numstat, statText } from "../git/log.js";
import { resolveCommit } from "../git/refs.js";
import { git } from "../git/run.js";
import { PATCH_READ_BYTES, capDiff, fileList } from "../git/text.js";
import { ToolError } from "../errors.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitShowTool = defineTool({
  id: "git_show",
  description: "Shows a commit (message, files and patch), or with path a file's content as it was at that commit.",
  params: {
    ref: refParam().describe("Commit, branch or tag."),
    path: pathParam().optional().describe("A file: its content at ref instead of the commit."),
  },
  mutating: false,
  state: gitToolState,
  async run({ ref, path }, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    const sha = await resolveCommit(ctx, ref);
    if (path) {
      const rel = (await ctx.repo.paths.resolve(path, { allowGitDir: false })).rel;
      const r = await git(ctx, ["cat-file", "blob", `${sha}:./${rel}`], { ok: [0, 128], maxBytes: PATCH_READ_BYTES });
      if (r.code !== 0) throw new ToolError("NOT_FOUND", `${rel} does not exist at ${ref}; git_show the commit to see its files.`);
      if (r.stdout.slice(0, 8192).includes("\0")) throw new ToolError("BINARY_FILE", `${rel} at ${ref} is binary; it cannot be shown as text.`);
      const capped = capDiff(r.stdout, "read the file in the worktree with file_read for paging", r.truncated);
      return { ref, commit: sha, path: rel, content: capped.text, truncated: capped.truncated, text: capped.text };
    }
    const [[commit], body, files, patch] = await Promise.all([
      logCommits(ctx, ["-n1", sha]),
      git(ctx, ["log", "-n1", "--format=%B", sha]),
      numstat(ctx, ["--end-of-options", sha], "show"),
      git(ctx, ["show", "--format=", "--no-ext-diff", "--no-renames", "--end-of-options", sha], { maxBytes: PATCH_READ_BYTES }),
    ]);
    const capped = capDiff(patch.stdout, "pass path to see one file as it was, or git_diff with ref and path", patch.truncated);
    const text =
      `commit ${sha}\nAuthor: ${commit.author} <${commit.email}>\nDate: ${commit.date}\n\n${body.stdout.trim()}\n\n${statText(files)}\n${capped.text}`.trimEnd();
    return { ref, ...commit, message: body.stdout.trim(), ...fileList(files), diff: capped.text, truncated: capped.truncated, text };
  },
});
