import { readdir } from "node:fs/promises";
import { pathParam, urlParam } from "../git/params.js";
import { worktreeStep, gitState } from "../git/repo.js";
import { git } from "../git/run.js";
import { ToolError } from "../errors.js";
import { defineTool } from "./tool.js";

/** A clone may be large; ten minutes, then it is killed (and its partial folder removed by git). */
export const CLONE_TIMEOUT_MS = 600_000;

export const gitCloneTool = defineTool({
  id: "git_clone",
  description: "Clones a repository into a new folder inside the workspace. Preview: the remote's default branch and branches (ls-remote), nothing written.",
  params: {
    url: urlParam().describe("Repository URL or path."),
    path: pathParam().describe("Folder inside the workspace to clone into; must not exist or be empty."),
  },
  mutating: true,
  timeoutMs: CLONE_TIMEOUT_MS + 10_000,
  state: gitState,
  async run({ url, path }, ctx) {
    const dest = await ctx.ws.paths.resolve(path, { allowGitDir: false });
    if (dest.exists && (await readdir(dest.real).then((e) => e.length > 0, () => true))) {
      throw new ToolError("ALREADY_EXISTS", `${dest.rel} exists and is not an empty folder; choose a new path.`);
    }
    const r = await git(ctx, ["ls-remote", "--symref", "--end-of-options", url], { timeoutMs: 60_000 });
    const lines = r.stdout.split("\n").filter(Boolean);
    const head = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(r.stdout)?.[1] ?? null;
    const branches = lines.flatMap((l) => /\trefs\/heads\/(.+)$/.exec(l)?.[1] ?? []);
    const tags = lines.filter((l) => /\trefs\/tags\/[^^]+$/.test(l)).length;
    const summary = `default branch ${head ?? "(none: empty repository)"}; ${branches.length} branch${branches.length === 1 ? "" : "es"}${branches.length ? ` (${branches.slice(0, 20).join(", ")}${branches.length > 20 ? ", …" : ""})` : ""}; ${tags} tag${tags === 1 ? "" : "s"}`;
    if (ctx.dryRun) return { url, path: dest.rel, default_branch: head, branches, tags, text: `would clone ${url} into ${dest.rel}: ${summary}` };
    return worktreeStep(ctx, async (ctx) => {
      // `--` ends the options: clone has no --end-of-options.
      await git(ctx, ["clone", "--quiet", "--", url, dest.real], { timeoutMs: CLONE_TIMEOUT_MS });
      return { url, path: dest.rel, default_branch: head, branches, tags, text: `cloned ${url} into ${dest.rel}: ${summary}` };
    });
  },
});
