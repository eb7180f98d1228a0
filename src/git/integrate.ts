import { ToolError } from "../errors.js";
import { type InTheWay, filesInTheWay } from "./in-the-way.js";
import { type MergePrediction, type ReplayStep, predictMerge, simulateRebase } from "./predict.js";
import { type OneCommit, commitLine, logCommits } from "./log.js";
import { NO_SUBMODULE_WORKTREES, git, type GitCtx } from "./run.js";
import { dirtyPaths, parseStatus } from "./status.js";

/** Commits listed per side in a preview; the counts are always exact. */
const MAX_COMMITS_SHOWN = 50;

export interface Integration {
  incoming: OneCommit[];
  outgoing: OneCommit[];
  incoming_count: number;
  outgoing_count: number;
  up_to_date: boolean;
  fast_forward: boolean;
  /** Files a merge would leave conflicted. */
  conflicts: string[];
  /** For a rebase: each commit that would be replayed, with the files it would conflict in. */
  replay?: ReplayStep[];
}

async function count(ctx: GitCtx, range: string[]): Promise<number> {
  return Number((await git(ctx, ["rev-list", "--count", ...range])).stdout.trim());
}

/** What analyze found: the integration as previews show it, and the merge it predicted, for the rest of the preview. */
export interface Analysis {
  integration: Integration;
  /** The merge's prediction (merge-tree's tree and stages) for a merge that is neither up to date nor a fast-forward. */
  merged: MergePrediction | null;
}

/**
 * What bringing `theirs` into `head` would do, computed in the object store only (no ref, index or file changes).
 * `replay` predicts a rebase's steps (the conflict tools' version also settles what auto-resolution would).
 */
export async function analyze(
  ctx: GitCtx,
  head: string,
  theirs: string,
  rebase: boolean,
  replay: (ctx: GitCtx, onto: string, head: string) => Promise<ReplayStep[]> = simulateRebase,
): Promise<Analysis> {
  const [incoming, outgoing, inCount, outCount] = await Promise.all([
    logCommits(ctx, [`-n${MAX_COMMITS_SHOWN}`, theirs, `^${head}`]),
    logCommits(ctx, [`-n${MAX_COMMITS_SHOWN}`, head, `^${theirs}`]),
    count(ctx, [theirs, `^${head}`]),
    count(ctx, [head, `^${theirs}`]),
  ]);
  const integration: Integration = {
    incoming,
    outgoing,
    incoming_count: inCount,
    outgoing_count: outCount,
    up_to_date: inCount === 0,
    fast_forward: outCount === 0 && inCount > 0,
    conflicts: [],
  };
  if (integration.up_to_date || integration.fast_forward) return { integration, merged: null };
  if (rebase) {
    integration.replay = await replay(ctx, theirs, head);
    integration.conflicts = [...new Set(integration.replay.flatMap((s) => s.conflicts))];
    return { integration, merged: null };
  }
  const merged = await predictMerge(ctx, head, theirs);
  integration.conflicts = merged.conflicts;
  return { integration, merged };
}

/** What an integration would do (a preview) or did (`done`: the approved call, which finished without conflicts). */
export function integrationText(a: Integration, what: string, rebase: boolean, done = false): string {
  if (a.up_to_date) return `already up to date with ${what}`;
  const commits = (n: number, kind = "") => `${n} ${kind}commit${n === 1 ? "" : "s"}`;
  const lines = [`${commits(a.incoming_count, "incoming ")} from ${what}, ${commits(a.outgoing_count, "local ")} not there`];
  lines.push(...a.incoming.map((c) => `  + ${commitLine(c)}`));
  if (a.fast_forward) lines.push(done ? "fast-forwarded: no merge commit was needed" : "fast-forward: no merge commit needed");
  else if (rebase && a.replay) {
    lines.push(`${done ? "replayed" : "rebase would replay"} ${commits(a.replay.length)}:`);
    lines.push(...a.replay.map((s) => `  ${commitLine(s)}${s.conflicts.length && !done ? `  CONFLICT in ${s.conflicts.join(", ")}` : ""}`));
  } else if (done) lines.push("merged without conflicts");
  else lines.push(a.conflicts.length ? `merge would CONFLICT in: ${a.conflicts.join(", ")}` : "merge would be clean");
  return lines.join("\n");
}

/** Tracked files with uncommitted changes (untracked files do not count: git keeps them through these operations). */
export async function trackedChanges(ctx: GitCtx): Promise<string[]> {
  const r = await git(ctx, ["status", "--porcelain=v2", "-z", "--untracked-files=no", NO_SUBMODULE_WORKTREES]);
  return dirtyPaths(parseStatus(r.stdout));
}

export async function requireNoTrackedChanges(ctx: GitCtx, what: string): Promise<void> {
  const dirty = await trackedChanges(ctx);
  if (dirty.length) {
    throw new ToolError(
      "CONFLICT",
      `Cannot ${what} with uncommitted changes (${dirty.slice(0, 10).join(", ")}${dirty.length > 10 ? ", …" : ""}); commit them (git_commit) or stash them (git_stash push) first.`,
      { files: dirty },
    );
  }
}

/** CONFLICT before anything is touched when bringing `theirs` in would overwrite uncommitted changes (git would refuse). */
export async function requireNotOverwriting(ctx: GitCtx, head: string, theirs: string, what: string): Promise<void> {
  const dirty = await trackedChanges(ctx);
  if (!dirty.length) return;
  const touched = new Set((await git(ctx, ["diff", "--name-only", "-z", head, theirs])).stdout.split("\0").filter(Boolean));
  const blocked = dirty.filter((p) => touched.has(p));
  if (blocked.length) {
    throw new ToolError(
      "CONFLICT",
      `The ${what} would overwrite uncommitted changes in ${blocked.join(", ")}; commit them (git_commit) or stash them (git_stash push) first.`,
      { files: blocked },
    );
  }
}

/**
 * Untracked and ignored files that bringing `theirs` in would replace: what the merge result (or, for a fast-forward or
 * a rebase, `theirs`, which a rebase checks out first) adds where the disk already has a file git does not track.
 */
export async function integrationInTheWay(ctx: GitCtx, head: string, theirs: string, { integration, merged }: Analysis): Promise<InTheWay> {
  if (integration.up_to_date) return { ignored: [], untracked: [] };
  return filesInTheWay(ctx, head, merged?.tree ?? theirs);
}
