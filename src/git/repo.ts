import { copyFile, mkdtemp, rm, stat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ToolError } from "../errors.js";
import type { Env } from "../platform/child-env.js";
import type { Workspace } from "../workspace.js";
import { OPERATION_MARKERS } from "./operation-markers.js";
import { type GitCtx, NO_SUBMODULE_WORKTREES, git, steady } from "./run.js";
import { plural } from "../core/text.js";

/**
 * What a git operation needs of the call it runs in (a ToolContext has all of it): the dispatcher's commit step and
 * worktree hold. Said here structurally, so the git library does not depend on the tools' module.
 */
export interface StepCtx extends GitCtx {
  ws: Workspace;
  signal: AbortSignal;
  commit<T>(step: () => Promise<T>): Promise<T>;
  exclusive<T>(work: () => Promise<T>): Promise<T>;
}

export type Ctx = Pick<StepCtx, "ws" | "signal">;

/** ctx.commit with a context whose signal never aborts: a cancel or timeout must not kill git halfway through a change. */
export function commitStep<C extends StepCtx, T>(ctx: C, step: (ctx: C) => Promise<T>): Promise<T> {
  return ctx.commit(() => step(steady(ctx)));
}

/**
 * A commitStep that rewrites the worktree (checkout, reset, merge, stash...): it runs with the worktree to itself, so no
 * file write interleaves with git's update, and the files it changes are attributed to the call's session (SPEC 7).
 */
export function worktreeStep<C extends StepCtx, T>(ctx: C, step: (ctx: C) => Promise<T>): Promise<T> {
  return ctx.exclusive(() => commitStep(ctx, step));
}

/** Identity for the throwaway commits of a preview (commit-tree), so a preview works where no user.name is set. */
export const PREVIEW_IDENTITY = {
  GIT_AUTHOR_NAME: "tool-layer preview",
  GIT_AUTHOR_EMAIL: "preview@tool-layer.invalid",
  GIT_COMMITTER_NAME: "tool-layer preview",
  GIT_COMMITTER_EMAIL: "preview@tool-layer.invalid",
};

/** The empty tree, to diff against when there is no commit yet. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** Fails with NOT_A_REPOSITORY unless the root is in a work tree; returns the absolute git dir. */
export async function requireRepo(ctx: GitCtx): Promise<string> {
  const r = await git(ctx, ["rev-parse", "--absolute-git-dir"]);
  return r.stdout.trim();
}

const gitDirs = new Map<string, string>();

/**
 * The git dir, remembered per root so a hot path (git_status) spends no extra process on it; re-checked when it
 * has gone (the repository was deleted or re-created elsewhere).
 */
export async function cachedGitDir(ctx: GitCtx): Promise<string> {
  const known = gitDirs.get(ctx.ws.root);
  if (known && (await stat(known).then((s) => s.isDirectory(), () => false))) return known;
  const dir = await requireRepo(ctx);
  gitDirs.set(ctx.ws.root, dir);
  return dir;
}

/**
 * Copies the index to `to` with the original's modification time (a little earlier, never later): git judges an entry
 * "racily clean" by comparing its mtime with the index file's, and a copy with a fresh mtime would make a file edited
 * in the same second as the last index write look unchanged. false when there is no index yet (it reads as empty).
 */
export async function copyIndex(gitDir: string, to: string): Promise<boolean> {
  const from = path.join(gitDir, "index");
  try {
    const st = await stat(from);
    await copyFile(from, to);
    // One millisecond earlier: utimes rounds, and an earlier index only makes git re-read more files, never fewer.
    await utimes(to, st.atime, new Date(st.mtimeMs - 1));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw e;
  }
}

/**
 * Runs `work` with GIT_INDEX_FILE naming a private copy of the index. `git diff` against the worktree rewrites the
 * index when it finds files whose stat changed but whose content did not (a refresh under index.lock), and
 * `--no-optional-locks` does not stop it (git 2.39); a read-only call must neither write the index nor take its lock.
 */
export async function withPrivateIndex<T>(ctx: GitCtx, work: (env: Env) => Promise<T>): Promise<T> {
  const gitDir = await cachedGitDir(ctx);
  const dir = await mkdtemp(path.join(tmpdir(), "tool-layer-index-"));
  try {
    const file = path.join(dir, "index");
    await copyIndex(gitDir, file);
    return await work({ GIT_INDEX_FILE: file });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The commit a ref names, or NOT_FOUND. */
export async function resolveCommit(ctx: GitCtx, ref: string, field = "ref"): Promise<string> {
  const r = await git(ctx, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`], { ok: [0, 1, 128] });
  const sha = r.stdout.trim();
  if (r.code !== 0 || !sha) throw new ToolError("NOT_FOUND", `${field}: no commit named "${ref}"; call git_branch or git_log to see what exists.`);
  return sha;
}

export async function tryResolve(ctx: GitCtx, ref: string): Promise<string | null> {
  const r = await git(ctx, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`], { ok: [0, 1, 128] });
  return r.code === 0 ? r.stdout.trim() : null;
}

export interface HeadInfo {
  /** null on a branch with no commit yet. */
  head: string | null;
  /** null when detached. */
  branch: string | null;
}

/**
 * HEAD and its branch, in one git process where HEAD has a commit (nearly every git tool asks, git_conflicts on every
 * listing). The branch is its ref without `refs/heads/`: `symbolic-ref --short` would say `heads/main` when a tag is
 * named `main` too.
 */
export async function headInfo(ctx: GitCtx): Promise<HeadInfo> {
  const r = await git(ctx, ["rev-parse", "HEAD", "--symbolic-full-name", "HEAD", "--"], { ok: [0, 1, 128] });
  const [head, ref] = r.code === 0 ? r.stdout.split("\n") : [];
  if (head) return { head, branch: branchOf(ref) };
  // No commit yet: HEAD still names the branch the first commit will create.
  const b = await git(ctx, ["symbolic-ref", "--quiet", "HEAD"], { ok: [0, 1] });
  return { head: null, branch: b.code === 0 ? branchOf(b.stdout.trim()) : null };
}

const branchOf = (ref: string | undefined): string | null => (ref?.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : null);

/** INVALID_PARAMS unless `name` is a valid branch name (`git check-ref-format --branch`): no `^`, `:`, `..`, `~`, spaces. */
export async function requireBranchName(ctx: GitCtx, name: string, field: string): Promise<void> {
  const r = await git(ctx, ["check-ref-format", "--branch", name], { ok: "any" });
  if (r.code !== 0) throw new ToolError("INVALID_PARAMS", `${field}: "${name}" is not a valid branch name.`);
}

export async function configGet(ctx: GitCtx, key: string): Promise<string | null> {
  const r = await git(ctx, ["config", "--get", key], { ok: [0, 1] });
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The remote and remote branch a local branch tracks, if any. */
export async function upstreamOf(ctx: GitCtx, branch: string): Promise<{ remote: string; branch: string } | null> {
  const [remote, merge] = await Promise.all([configGet(ctx, `branch.${branch}.remote`), configGet(ctx, `branch.${branch}.merge`)]);
  if (!remote || !merge || remote === ".") return null;
  return { remote, branch: merge.replace(/^refs\/heads\//, "") };
}

/** The remote to use when none is given: the branch's upstream, else `origin`, else the only one. */
export async function defaultRemote(ctx: GitCtx, branch: string | null): Promise<string> {
  if (branch) {
    const up = await upstreamOf(ctx, branch);
    if (up) return up.remote;
  }
  const remotes = (await git(ctx, ["remote"])).stdout.split("\n").filter(Boolean);
  if (remotes.includes("origin")) return "origin";
  if (remotes.length === 1) return remotes[0];
  if (!remotes.length) throw new ToolError("NOT_FOUND", "This repository has no remote; add one with `git remote add`, or clone with git_clone.");
  throw new ToolError("INVALID_PARAMS", `remote: there are several remotes (${remotes.join(", ")}) and no upstream; name one.`);
}

export async function requireRemote(ctx: GitCtx, remote: string): Promise<void> {
  const remotes = (await git(ctx, ["remote"])).stdout.split("\n").filter(Boolean);
  if (!remotes.includes(remote)) {
    throw new ToolError("NOT_FOUND", `remote: there is no remote "${remote}"${remotes.length ? ` (remotes: ${remotes.join(", ")})` : ""}.`);
  }
}

export async function requireBranch(ctx: GitCtx): Promise<HeadInfo & { branch: string }> {
  const info = await headInfo(ctx);
  if (!info.branch) throw new ToolError("INVALID_PARAMS", "HEAD is detached; name the branch, or git_checkout one first.");
  return info as HeadInfo & { branch: string };
}

/** A repository operation in progress that a new one should not start on top of. */
export async function operationInProgress(gitDir: string): Promise<string | null> {
  for (const [file, op] of OPERATION_MARKERS) {
    if (await stat(path.join(gitDir, file)).then(() => true, () => false)) return op;
  }
  return null;
}

export interface OneCommit {
  sha: string;
  short: string;
  author: string;
  email: string;
  date: string;
  subject: string;
}

const LOG_FORMAT = "--format=%H%x00%h%x00%an%x00%ae%x00%aI%x00%s%x1e";

/** Commits as structured data; `args` are extra rev-list arguments (ranges, -n, `-- path`). */
export async function logCommits(ctx: GitCtx, args: string[]): Promise<OneCommit[]> {
  const r = await git(ctx, ["log", LOG_FORMAT, ...args]);
  return r.stdout
    .split("\x1e")
    .map((s) => s.replace(/^\n/, ""))
    .filter(Boolean)
    .map((rec) => {
      const [sha, short, author, email, date, subject] = rec.split("\0");
      return { sha, short, author, email, date, subject };
    });
}

export function commitLine(c: OneCommit): string {
  return `${c.short} ${c.date.slice(0, 10)} ${c.author}: ${c.subject}`;
}

/** `git diff --stat`-like summary lines and numbers, from `--numstat -z`. */
export interface FileStat {
  path: string;
  added: number | null;
  deleted: number | null;
}

export async function numstat(ctx: GitCtx, args: string[], env?: Env, command: "diff" | "show" = "diff"): Promise<FileStat[]> {
  const extra = command === "show" ? ["--format="] : [NO_SUBMODULE_WORKTREES];
  const r = await git(ctx, [command, "--numstat", "-z", "--no-renames", ...extra, ...args], { env });
  const parts = r.stdout.split("\0").map((p) => p.replace(/^\n+/, "")).filter(Boolean);
  return parts.map((p) => {
    const [a, d, ...rest] = p.split("\t");
    return { path: rest.join("\t"), added: a === "-" ? null : Number(a), deleted: d === "-" ? null : Number(d) };
  });
}

export function statText(files: FileStat[], max = MAX_LISTED): string {
  const lines = files.slice(0, max).map((f) => `  ${f.path} ${f.added === null ? "(binary)" : `+${f.added} -${f.deleted}`}`);
  if (files.length > max) lines.push(`  … and ${plural(files.length - max, "more file", "more files")}`);
  return lines.join("\n");
}

/** Files listed in a `text` before the rest is summarised as a count: enough to judge, short enough for a model. */
export const MAX_LISTED = 100;

let versionCache: Promise<string | null> | undefined;

/** What every git tool reports in `info`: git's version and whether the root is a repository. */
export async function gitState(ws: Workspace): Promise<Record<string, unknown>> {
  versionCache ??= ws.processes.run({ cmd: "git", args: ["--version"], cwd: ws.root, group: false }, { timeoutMs: 10_000 }).then(
    (r) => (r.code === 0 ? r.stdout.trim().replace(/^git version /, "") : null),
    () => null,
  );
  const version = await versionCache;
  if (!version) return { available: false, git: false, reason: "git is not installed or not on PATH" };
  const r = await git({ ws }, ["rev-parse", "--is-inside-work-tree"], { ok: "any", timeoutMs: 10_000 }).catch(() => null);
  const repository = r?.code === 0 && r.stdout.trim() === "true";
  return { available: true, git: true, version, repository, processes: ws.processes.state() };
}
