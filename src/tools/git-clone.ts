import { readFile, readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { pathParam, urlParam } from "../git/params.js";
import { worktreeStep } from "../git/step.js";
import { git } from "../git/run.js";
import { CLONE_PROTOCOLS, classifyUrl } from "../git/url.js";
import { ToolError, isNodeError } from "../errors.js";
import type { PathResolver } from "../paths.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

/** A clone may be large; ten minutes, then it is killed (and its partial folder removed by git). */
export const CLONE_TIMEOUT_MS = 600_000;
/** The preview's ls-remote: long enough for a slow remote, short enough that a dead one does not hold the call. */
const LS_REMOTE_TIMEOUT_MS = 60_000;

export const gitCloneTool = defineTool({
  id: "git_clone",
  description:
    "Clones a repository into a new folder inside the workspace, over https, ssh or git, or from a repository inside the workspace (a path or file:// URL outside it is refused). Preview: the remote's default branch and branches (ls-remote), nothing written.",
  params: {
    url: urlParam().describe("Repository URL (https://, ssh://, git://, host:path) or a path inside the workspace."),
    path: pathParam().describe("Folder inside the workspace to clone into; must not exist or be empty."),
  },
  mutating: true,
  hints: { destructive: false, open_world: true },
  timeoutMs: CLONE_TIMEOUT_MS + 10_000,
  state: gitToolState,
  async run({ url, path: into }, call) {
    const ctx = gitStep(call);
    const source = await sourceOf(call.ws.paths, url);
    const dest = await ctx.repo.paths.resolve(into, { allowGitDir: false });
    if (
      dest.exists &&
      (await readdir(dest.real).then(
        (e) => e.length > 0,
        () => true,
      ))
    ) {
      throw new ToolError("ALREADY_EXISTS", `${dest.rel} exists and is not an empty folder; choose a new path.`);
    }
    const r = await git(ctx, ["ls-remote", "--symref", "--end-of-options", source], { timeoutMs: LS_REMOTE_TIMEOUT_MS, config: CLONE_PROTOCOLS });
    const lines = r.stdout.split("\n").filter(Boolean);
    const head = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(r.stdout)?.[1] ?? null;
    const branches = lines.flatMap((l) => /\trefs\/heads\/(.+)$/.exec(l)?.[1] ?? []);
    const tags = lines.filter((l) => /\trefs\/tags\/[^^]+$/.test(l)).length;
    const summary = `default branch ${head ?? "(none: empty repository)"}; ${branches.length} branch${branches.length === 1 ? "" : "es"}${branches.length ? ` (${branches.slice(0, 20).join(", ")}${branches.length > 20 ? ", …" : ""})` : ""}; ${tags} tag${tags === 1 ? "" : "s"}`;
    if (ctx.dryRun) return { url, path: dest.rel, default_branch: head, branches, tags, text: `would clone ${url} into ${dest.rel}: ${summary}` };
    return worktreeStep(ctx, async (ctx) => {
      // `--` ends the options: clone has no --end-of-options.
      await git(ctx, ["clone", "--quiet", "--no-recurse-submodules", "--", source, dest.real], { timeoutMs: CLONE_TIMEOUT_MS, config: CLONE_PROTOCOLS });
      return { url, path: dest.rel, default_branch: head, branches, tags, text: `cloned ${url} into ${dest.rel}: ${summary}` };
    });
  },
});

/**
 * What git is given to clone from. A network URL as it is; a local repository (a path or file:// URL) only if it lies
 * inside the workspace, and with its git directory, common directory and object alternates inside too: any of them
 * outside would let a clone copy in a repository the caller may not read.
 */
async function sourceOf(paths: PathResolver, url: string): Promise<string> {
  const address = classifyUrl(url);
  if (address.kind === "helper") {
    throw new ToolError(
      "INVALID_PARAMS",
      `url: "${address.helper}::" runs a git remote helper (fd:: and ext:: read descriptors or run commands); clone over https, ssh or git, or from a path inside the workspace.`,
    );
  }
  if (address.kind === "unsupported") {
    throw new ToolError(
      "INVALID_PARAMS",
      `url: ${address.scheme}:// is not allowed; clone over https://, ssh://, git:// (or host:path), or from a path inside the workspace (file:///absolute/path).`,
    );
  }
  if (address.kind === "network") return url;
  const src = await paths.resolve(address.path, { allowGitDir: true });
  if (!src.exists) throw new ToolError("NOT_FOUND", `url: there is no repository at ${src.rel || "."}; give a URL or a path inside the workspace.`);
  for (const dir of await repositoryDirs(src.real)) {
    const real = await realpath(dir);
    if (!paths.isInside(real))
      throw new ToolError(
        "PATH_OUTSIDE_ROOT",
        `url: ${url} is a repository whose git data lives outside the workspace root (${real}); clone from a repository inside the root.`,
      );
    for (const alt of await alternates(real)) {
      if (!paths.isInside(alt))
        throw new ToolError(
          "PATH_OUTSIDE_ROOT",
          `url: ${url} borrows objects from outside the workspace root (${alt}); clone from a repository inside the root.`,
        );
    }
  }
  return src.real;
}

/** The git directory of a local repository (a worktree's `.git`, a gitdir file's target, or the bare folder itself) and its common directory. */
async function repositoryDirs(src: string): Promise<string[]> {
  if (!(await stat(src)).isDirectory()) return []; // a bundle file: git reads only it
  let gitDir = src;
  const dotGit = path.join(src, ".git");
  const s = await stat(dotGit).catch(() => null);
  if (s?.isDirectory()) gitDir = dotGit;
  else if (s?.isFile()) {
    const m = /^gitdir: (.+)$/m.exec(await readFile(dotGit, "utf8"));
    if (m) gitDir = path.resolve(src, m[1].trim());
  }
  const dirs = [gitDir];
  const common = await readFile(path.join(gitDir, "commondir"), "utf8").catch(() => null);
  if (common?.trim()) dirs.push(path.resolve(gitDir, common.trim()));
  return dirs;
}

/** The object directories a repository borrows from (objects/info/alternates), resolved. */
async function alternates(gitDir: string): Promise<string[]> {
  const objects = path.join(gitDir, "objects");
  let text: string;
  try {
    text = await readFile(path.join(objects, "info", "alternates"), "utf8");
  } catch (e) {
    if (isNodeError(e, "ENOENT") || isNodeError(e, "ENOTDIR")) return [];
    throw e;
  }
  const out: string[] = [];
  for (const line of text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))) {
    const abs = path.resolve(objects, line.replace(/^"(.*)"$/, "$1"));
    out.push(await realpath(abs).catch(() => abs));
  }
  return out;
}
