/** Commits, branches and remotes by name: what the git tools resolve before they act. */
import { ToolError } from "../errors.js";
import { type GitCtx, git } from "./run.js";

/** The empty tree, to diff against when there is no commit yet. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

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

export async function requireBranch(ctx: GitCtx): Promise<HeadInfo & { branch: string }> {
  const info = await headInfo(ctx);
  if (!info.branch) throw new ToolError("INVALID_PARAMS", "HEAD is detached; name the branch, or git_checkout one first.");
  return info as HeadInfo & { branch: string };
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
