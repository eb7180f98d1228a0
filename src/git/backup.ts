import { lstat } from "node:fs/promises";
import path from "node:path";
import { expandUntracked } from "./in-the-way.js";
import type { RepoCtx } from "./repo.js";
import { NO_SUBMODULE_WORKTREES, git, type GitCtx } from "./run.js";
import { withTempIndex } from "./temp-index.js";

/** Where backups live: outside refs/heads and refs/tags so no branch list or push ever shows them, but gc keeps them. */
export const BACKUP_PREFIX = "refs/tool-layer/backup/";

/** The one shape of a backup, whichever tool made it (SPEC 9: every abandon keeps a backup of what it discards). */
export interface Backup {
  ref: string;
  commit: string;
  /**
   * `worktree`: a stash-like commit of the worktree as it was (tracked changes, conflicted files as they stood, and any
   * untracked or ignored file the operation replaced); its first parent is HEAD, its second the index. `commit`: a
   * commit as it was (an old branch tip, a remote's old tip).
   */
  kind: "worktree" | "commit";
  /** How to bring it back, as tool calls. */
  restore: string;
}

/** The author of backup commits: a backup must work where no user.name is set, and says who made it. */
const BACKUP_IDENTITY = {
  GIT_AUTHOR_NAME: "tool-layer",
  GIT_AUTHOR_EMAIL: "backup@tool-layer.invalid",
  GIT_COMMITTER_NAME: "tool-layer",
  GIT_COMMITTER_EMAIL: "backup@tool-layer.invalid",
};

/** A backup's name carries the time of the real run only: previews never name one, so they stay deterministic. */
function stamp(): string {
  return new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.(\d+)Z$/, "$1Z");
}

/** How to bring a backup back, as tool calls; `onHead`: a worktree backup made on a commit (stash-like). */
export function restoreText(ref: string, kind: Backup["kind"], onHead = true): string {
  if (kind === "commit") return `git_reset {ref:"${ref}", mode:"hard"} (or git_checkout {ref:"${ref}"}) brings that commit back`;
  const show = `git_show {ref:"${ref}", path:"FILE"} shows one file as it was`;
  if (!onHead) return `${show}; git_checkout {ref:"${ref}"} checks the whole of it out`;
  return `git_stash {action:"apply", stash:"${ref}"} brings the changes back; ${show}; git_reset {ref:"${ref}^1", mode:"hard"} returns to the commit they were on`;
}

/** Saves `commit` under a new backup ref named after the operation; `restore` says how to bring it back (default by kind). */
export async function saveRef(
  ctx: GitCtx,
  op: string,
  commit: string,
  kind: Backup["kind"],
  restore: (ref: string) => string = (ref) => restoreText(ref, kind),
): Promise<Backup> {
  let ref = `${BACKUP_PREFIX}${stamp()}-${op}`;
  for (let n = 2; ; n++) {
    // The empty old value makes update-ref fail if the ref exists: two backups in one millisecond never overwrite each other.
    const r = await git(ctx, ["update-ref", "-m", `tool-layer backup before ${op}`, ref, commit, ""], { ok: [0, 128] });
    if (r.code === 0) break;
    ref = `${BACKUP_PREFIX}${stamp()}-${op}-${n}`;
    if (n > 20) throw new Error(`cannot create a backup ref: ${r.stderr.trim()}`);
  }
  return { ref, commit, kind, restore: restore(ref) };
}

/**
 * The worktree as a stash-like commit, built in a temporary index so that it works in every state: during a merge
 * with conflicts (where `git stash create` fails), with nothing staged, or with untracked files at risk (`extra`, which
 * may be ignored, and folders ending in `/`). null when nothing differs from HEAD. Submodules' worktrees are not read
 * (only where their HEAD is), and the real index is never written.
 */
export async function snapshotWorktree(ctx: RepoCtx, head: string | null, extra: string[] = []): Promise<string | null> {
  return withTempIndex(ctx, "copy", async (onCopy, { copied }) => {
    if (!copied) await git(onCopy, head ? ["read-tree", head] : ["read-tree", "--empty"]);
    const headTree = head ? (await git(ctx, ["rev-parse", `${head}^{tree}`])).stdout.trim() : null;
    // The index as a tree; while paths are unmerged there is none, and HEAD's tree stands for it.
    const written = await git(onCopy, ["write-tree"], { ok: [0, 128] });
    const indexTree =
      written.code === 0
        ? written.stdout.trim()
        : (headTree ?? (await withTempIndex(ctx, "empty", async (empty) => (await git(empty, ["write-tree"])).stdout.trim())));

    const changed = (await git(onCopy, ["diff", "--name-only", "-z", "--no-renames", NO_SUBMODULE_WORKTREES])).stdout.split("\0").filter(Boolean);
    const present: string[] = [];
    for (const p of await expandUntracked(ctx, extra))
      if (
        await lstat(path.join(ctx.repo.root, p)).then(
          () => true,
          () => false,
        )
      )
        present.push(p);
    const paths = [...new Set([...changed, ...present])];
    // update-index, not add: it stages exactly these paths (ignored ones too) and looks into no submodule.
    if (paths.length) await git(onCopy, ["update-index", "--add", "--remove", "-z", "--stdin"], { input: paths.map((p) => `${p}\0`).join("") });
    const tree = (await git(onCopy, ["write-tree"])).stdout.trim();
    if (tree === headTree && indexTree === headTree) return null;

    const parents = head ? ["-p", head] : [];
    const index = (await git(ctx, ["commit-tree", indexTree, ...parents, "-m", "tool-layer backup: the index"], { env: BACKUP_IDENTITY })).stdout.trim();
    const w = await git(ctx, ["commit-tree", tree, ...parents, "-p", index, "-m", "tool-layer backup: the worktree"], { env: BACKUP_IDENTITY });
    return w.stdout.trim();
  });
}

/**
 * Backs up the worktree (with `extra`: untracked or ignored files the operation will replace) if anything differs from
 * HEAD, else HEAD itself; null when there is nothing at all (no commit, nothing in the worktree).
 */
export async function backupWork(ctx: RepoCtx, op: string, head: string | null, extra: string[] = []): Promise<Backup | null> {
  const snap = await snapshotWorktree(ctx, head, extra);
  if (snap) return saveRef(ctx, op, snap, "worktree", (ref) => restoreText(ref, "worktree", !!head));
  if (head) return saveRef(ctx, op, head, "commit");
  return null;
}

export function backupText(b: Backup): string {
  return `backup ${b.ref} (${b.kind === "worktree" ? "the worktree as it was" : `commit ${b.commit.slice(0, 7)}`}); restore: ${b.restore}`;
}
