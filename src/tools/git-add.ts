import { pathspec, pathsParam, unspec } from "../git/params.js";
import { commitStep, cachedGitDir, gitState } from "../git/repo.js";
import { git } from "../git/run.js";
import { list } from "../git/text.js";
import { ToolError } from "../errors.js";
import type { ToolContext } from "./tool.js";
import { defineTool } from "./tool.js";

export const gitAddTool = defineTool({
  id: "git_add",
  description: "Stages changes for the next commit: the given paths, or everything (new, modified and deleted files, like `git add -A`). Preview: the files that would be staged.",
  params: {
    paths: pathsParam().optional().describe("Files or folders to stage; omit to stage every change in the worktree."),
  },
  mutating: true,
  state: gitState,
  async run({ paths }, ctx) {
    await cachedGitDir(ctx);
    const spec = ["--", ...(paths ? (await relPaths(ctx, paths)).map(pathspec) : [])];
    // --verbose (and --dry-run) print one "add 'x'" / "remove 'x'" line per file: the same list for preview and result.
    const args = ["add", "-A", "--verbose", ...(ctx.dryRun ? ["--dry-run"] : []), ...spec];
    const r = ctx.dryRun ? await addOrNotFound(ctx, args) : await commitStep(ctx, (ctx) => addOrNotFound(ctx, args));
    const changes = r.stdout.split("\n").flatMap((l) => {
      const m = /^(add|remove) '(.*)'$/.exec(l);
      return m ? [{ action: m[1] as "add" | "remove", path: m[2] }] : [];
    });
    const verb = ctx.dryRun ? "would stage" : "staged";
    const text = changes.length
      ? [list(`${verb} (add)`, changes.filter((c) => c.action === "add").map((c) => c.path)), list(`${verb} (remove)`, changes.filter((c) => c.action === "remove").map((c) => c.path))].filter(Boolean).join("\n")
      : "nothing to stage: the index already matches the worktree for these paths";
    return { staged: changes, text };
  },
});

export async function relPaths(ctx: Pick<ToolContext, "ws">, paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) out.push((await ctx.ws.paths.resolve(p, { allowGitDir: false })).rel || ".");
  return out;
}

async function addOrNotFound(ctx: ToolContext, args: string[]) {
  const r = await git(ctx, args, { ok: "any" });
  if (r.code === 0) return r;
  const m = /pathspec '(.*)' did not match any files/.exec(r.stderr);
  if (m) throw new ToolError("NOT_FOUND", `${unspec(m[1])} matches no file, changed or tracked; check the path with git_status.`);
  throw new ToolError("GIT_FAILED", `git add failed (exit ${r.code}): ${r.stderr.trim()}`, { exit_code: r.code, output: r.stderr.trim() });
}
