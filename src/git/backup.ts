import { git, type GitCtx } from "./run.js";

/** Where backups live: outside refs/heads and refs/tags so no branch list or push ever shows them, but gc keeps them. */
export const BACKUP_PREFIX = "refs/tool-layer/backup/";

export interface Backup {
  ref: string;
  commit: string;
  /** `worktree`: a stash-like commit of uncommitted changes (its first parent is HEAD); `commit`: a commit as it was. */
  kind: "worktree" | "commit";
  /** How to bring it back, for the model. */
  restore: string;
}

function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, "").replace(/\.(\d+)Z$/, "$1Z");
}

/** Saves `commit` under a new backup ref named after the operation. */
export async function saveRef(ctx: GitCtx, op: string, commit: string, kind: Backup["kind"]): Promise<Backup> {
  let ref = `${BACKUP_PREFIX}${stamp()}-${op}`;
  for (let n = 2; ; n++) {
    // The empty old value makes update-ref fail if the ref exists: two backups in one millisecond never overwrite each other.
    const r = await git(ctx, ["update-ref", "-m", `tool-layer backup before ${op}`, ref, commit, ""], { ok: [0, 128] });
    if (r.code === 0) break;
    ref = `${BACKUP_PREFIX}${stamp()}-${op}-${n}`;
    if (n > 20) throw new Error(`cannot create a backup ref: ${r.stderr.trim()}`);
  }
  const restore = kind === "worktree"
    ? `git_stash {action:"apply", stash:"${ref}"} brings the changes back; git_reset {ref:"${ref}^1", mode:"hard"} the commit they were on`
    : `git_reset {ref:"${ref}", mode:"hard"} or git_checkout {ref:"${ref}"}`;
  return { ref, commit, kind, restore };
}

/** Uncommitted tracked changes as a stash commit (not on the stash list); null when there are none. */
export async function stashCreate(ctx: GitCtx): Promise<string | null> {
  const r = await git(ctx, ["stash", "create", "tool-layer backup"], { ok: [0, 1] });
  const sha = r.stdout.trim();
  return r.code === 0 && sha ? sha : null;
}

/** Backs up uncommitted work if there is any, else `head`; null when there is nothing at all (unborn, clean). */
export async function backupWork(ctx: GitCtx, op: string, head: string | null): Promise<Backup | null> {
  const stash = await stashCreate(ctx);
  if (stash) return saveRef(ctx, op, stash, "worktree");
  if (head) return saveRef(ctx, op, head, "commit");
  return null;
}
