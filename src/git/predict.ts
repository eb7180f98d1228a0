import { type UnmergedPath, parseUnmerged } from "./conflicts-stages.js";
import { type OneCommit, logCommits } from "./log.js";
import { git, type GitCtx } from "./run.js";

/** Identity for the throwaway commits of a preview (commit-tree), so a preview works where no user.name is set. */
export const PREVIEW_IDENTITY = {
  GIT_AUTHOR_NAME: "tool-layer preview",
  GIT_AUTHOR_EMAIL: "preview@tool-layer.invalid",
  GIT_COMMITTER_NAME: "tool-layer preview",
  GIT_COMMITTER_EMAIL: "preview@tool-layer.invalid",
};

export interface MergePrediction {
  /** The tree the merge would produce (with conflict markers where it conflicts). */
  tree: string;
  conflicts: string[];
  /** The index stages of every conflicted path, as the real merge would leave them (for auto-resolution's prediction). */
  entries: UnmergedPath[];
}

/** A real three-way merge computed in the object store only: `merge-tree --write-tree` touches no ref, index or file. */
export async function predictMerge(ctx: GitCtx, ours: string, theirs: string): Promise<MergePrediction> {
  const r = await git(ctx, ["merge-tree", "--write-tree", "-z", "--no-messages", "--end-of-options", ours, theirs], { ok: [0, 1] });
  const nul = r.stdout.indexOf("\0");
  const entries = r.code === 1 ? parseUnmerged(r.stdout.slice(nul + 1)) : [];
  return { tree: r.stdout.slice(0, nul < 0 ? undefined : nul).trim(), conflicts: entries.map((e) => e.path), entries };
}

export interface ReplayStep extends OneCommit {
  conflicts: string[];
  /** false past MAX_SIMULATED_STEPS: listed, not predicted. */
  simulated: boolean;
}

/** Replay steps predicted per preview: each costs three git processes, and a preview should answer in seconds. */
export const MAX_SIMULATED_STEPS = 200;

/**
 * The commits `git rebase onto` would replay and the conflicts each would hit. git 2.39's merge-tree has no
 * --merge-base, so each step is a merge of C with a throwaway commit (the replayed tree so far, parented on C's parent):
 * their merge base is C's parent, exactly the base a cherry-pick uses. Only unreferenced objects are written.
 */
export function simulateRebase(ctx: GitCtx, onto: string, head: string): Promise<ReplayStep[]> {
  return replayCommits(ctx, onto, head, async (ours, c) => {
    const merged = await predictMerge(ctx, ours, c.sha);
    return { step: { ...c, conflicts: merged.conflicts, simulated: true }, tree: merged.tree };
  });
}

/**
 * The replay itself, each step's merge left to `merge` (given the throwaway commit and the replayed commit): it answers
 * the step and the tree the next one replays onto.
 */
export async function replayCommits<S extends ReplayStep>(
  ctx: GitCtx,
  onto: string,
  head: string,
  merge: (ours: string, commit: OneCommit) => Promise<{ step: S; tree: string }>,
): Promise<(ReplayStep | S)[]> {
  // --cherry-pick drops commits whose patch is already upstream, as rebase does; merges are dropped too.
  const commits = await logCommits(ctx, ["--reverse", "--no-merges", "--right-only", "--cherry-pick", "--end-of-options", `${onto}...${head}`]);
  let tipTree = (await git(ctx, ["rev-parse", "--verify", `${onto}^{tree}`])).stdout.trim();
  const steps: (ReplayStep | S)[] = [];
  for (const c of commits) {
    if (steps.length >= MAX_SIMULATED_STEPS) {
      steps.push({ ...c, conflicts: [], simulated: false });
      continue;
    }
    const parent = await git(ctx, ["rev-parse", "--verify", "--quiet", `${c.sha}^1`], { ok: [0, 1, 128] });
    if (parent.code !== 0) {
      steps.push({ ...c, conflicts: [], simulated: true }); // a root commit: nothing to merge against, git replays it as is
      continue;
    }
    const synthetic = await git(ctx, ["commit-tree", tipTree, "-p", parent.stdout.trim(), "-m", "tool-layer rebase preview"], { env: PREVIEW_IDENTITY });
    const { step, tree } = await merge(synthetic.stdout.trim(), c);
    steps.push(step);
    tipTree = tree;
  }
  return steps;
}
