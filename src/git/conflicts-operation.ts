import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../errors.js";
import type { Backup } from "./backup.js";
import type { AutoMode } from "./conflicts-model.js";
import { unmergedPaths } from "./conflicts-stages.js";
import { operationInProgress } from "./operation-markers.js";
import { EMPTY_TREE, headInfo } from "./refs.js";
import type { RepoCtx } from "./repo.js";
import { type GitCtx, git } from "./run.js";
import { snapshotWorktree } from "./backup.js";

/**
 * The operation a conflict belongs to (SPEC 9): git's own (merge, rebase, cherry-pick, revert: its state files say so)
 * or a stash apply, which git leaves no trace of. For the operations the daemon starts it keeps a record in the git
 * directory: the exact state before the operation began (so an abandon restores it), the auto-resolution mode (so a
 * later stop of the same rebase is settled the same way), and what a stash pop still has to do.
 */

export type ConflictOp = "merge" | "rebase" | "cherry-pick" | "revert" | "stash";

/** The state before an operation began: HEAD, and the worktree and index as trees (the worktree's with the files it replaced). */
export interface PreState {
  head: string | null;
  branch: string | null;
  /** The stash-like snapshot commit holding them (a backup ref keeps it), or null when both were HEAD's tree. */
  snapshot: string | null;
  tree: string;
  index_tree: string;
}

export interface OperationRecord {
  op: ConflictOp;
  /** "merge of topic", "rebase onto main", "pop of stash@{0}". */
  what: string;
  before: PreState;
  backup: Backup | null;
  auto: AutoMode;
  /** The ref the caller named for the other side (merge, pull): the label of `theirs`. */
  theirs?: string;
  stash?: { commit: string; name: string; action: "apply" | "pop"; untracked: string[] };
}

/** The record lives beside the changelists (SPEC 8): in the git directory, never in the worktree. */
const RECORD_FILE = "tool-layer/operation.json";

export async function readRecord(gitDir: string): Promise<OperationRecord | null> {
  try {
    return JSON.parse(await readFile(path.join(gitDir, RECORD_FILE), "utf8")) as OperationRecord;
  } catch {
    return null;
  }
}

export async function writeRecord(ctx: RepoCtx, record: OperationRecord): Promise<void> {
  const file = path.join(await ctx.repo.gitDir(), RECORD_FILE);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(`${file}.tmp`, JSON.stringify(record, null, 1));
  await rename(`${file}.tmp`, file);
}

export async function clearRecord(ctx: RepoCtx): Promise<void> {
  await rm(path.join(await ctx.repo.gitDir(), RECORD_FILE), { force: true });
}

/**
 * The state before an operation: a snapshot of the worktree (with `extra`, untracked or ignored files it may replace)
 * and the index, built in a temporary index; nothing is written but unreferenced objects.
 */
export async function preState(ctx: RepoCtx, head: string | null, branch: string | null, extra: string[] = []): Promise<PreState> {
  const snapshot = await snapshotWorktree(ctx, head, extra);
  if (!snapshot) {
    const tree = head ? (await git(ctx, ["rev-parse", `${head}^{tree}`])).stdout.trim() : EMPTY_TREE;
    return { head, branch, snapshot: null, tree, index_tree: tree };
  }
  const r = await git(ctx, ["rev-parse", `${snapshot}^{tree}`, `${snapshot}^2^{tree}`]);
  const [tree, index_tree] = r.stdout.trim().split("\n");
  return { head, branch, snapshot, tree, index_tree };
}

export interface InProgress {
  op: ConflictOp;
  /** The daemon's record, when it started this operation; null for one started outside. */
  record: OperationRecord | null;
  head: string | null;
  branch: string | null;
  gitDir: string;
}

/** The operation in progress, or null; unmerged entries with no operation are a stash apply (or `checkout -m`) from outside. */
export async function currentOperation(ctx: RepoCtx): Promise<InProgress | null> {
  const gitDir = await ctx.repo.gitDir();
  const [gitOp, record, { head, branch }] = await Promise.all([operationInProgress(gitDir), readRecord(gitDir), headInfo(ctx)]);
  if (gitOp && CONFLICT_OPS.has(gitOp)) {
    const op = gitOp as ConflictOp;
    const mine = record?.op === op && (op === "rebase" || record.before.head === head) ? record : null;
    return { op, record: mine, head, branch, gitDir };
  }
  const unmerged = (await unmergedPaths(ctx)).length > 0;
  // git keeps no state for a stash apply: it is in progress while its conflicts are, or while what it staged is (a
  // resolution staged by hand, not yet finished); a reset or a commit since has ended it.
  if (record?.op === "stash" && record.before.head === head) {
    const staged = !unmerged && (await git(ctx, ["diff", "--cached", "--quiet", record.before.index_tree, "--"], { ok: [0, 1] })).code === 1;
    if (unmerged || staged) return { op: "stash", record, head, branch, gitDir };
  }
  if (unmerged) return { op: "stash", record: null, head, branch, gitDir };
  return null;
}

const CONFLICT_OPS = new Set<string>(["merge", "rebase", "cherry-pick", "revert"]);

/**
 * What a new merge, pull, rebase or stash apply must not start on top of, in words: an operation with conflicts, or
 * another git operation (a bisect), or null.
 */
export async function busyWith(ctx: RepoCtx): Promise<{ op: string; name: string } | null> {
  const cur = await currentOperation(ctx);
  if (cur) return { op: cur.op, name: operationName(cur) };
  const gitOp = await operationInProgress(await ctx.repo.gitDir());
  return gitOp ? { op: gitOp, name: gitOp } : null;
}

/** The CONFLICT a new operation answers while another is in progress, saying how to finish or abandon that one. */
export function busyError(busy: { op: string; name: string }): ToolError {
  const abandon = busy.op === "rebase" ? `git_rebase {action:"abort"}` : busy.op === "bisect" ? "git bisect reset" : "git_merge {abort:true}";
  const finish = busy.op === "bisect" ? "" : "finish it (git_conflict_finalize) or ";
  return new ToolError("CONFLICT", `A ${busy.name} is in progress; ${finish}abandon it (${abandon}) first.`, { in_progress: busy.op });
}

/** How the operation is named in answers. */
export function operationName(cur: Pick<InProgress, "op" | "record">): string {
  if (cur.record) return cur.record.what;
  return cur.op === "stash" ? "stash apply (or checkout -m) started outside tool-layer" : `${cur.op} started outside tool-layer`;
}

interface Described {
  sha: string;
  text: string;
  /** The first branch (else remote branch, else tag) pointing at it. */
  name: string | null;
}

/** `commit abc1234 (subject)` and a ref name for each commit, in one git call. */
async function describe(ctx: GitCtx, revs: string[]): Promise<Map<string, Described>> {
  const out = new Map<string, Described>();
  const found = [...new Set(revs.filter(Boolean))];
  if (!found.length) return out;
  const r = await git(ctx, ["log", "--no-walk=unsorted", "--decorate=full", "--format=%H%x00%h%x00%s%x00%D", "--end-of-options", ...found], { ok: [0, 128] });
  for (const line of r.stdout.split("\n").filter(Boolean)) {
    const [sha, short, subject, refs] = line.split("\0");
    const names = (refs ?? "").split(", ").map((n) => n.replace(/^HEAD -> /, "").replace(/^tag: /, ""));
    const pick = (prefix: string) => names.find((n) => n.startsWith(prefix))?.slice(prefix.length) ?? null;
    const name = pick("refs/heads/") ?? pick("refs/remotes/") ?? pick("refs/tags/");
    out.set(sha, { sha, text: `commit ${short} (${subject})`, name });
  }
  return out;
}

async function pseudoRef(gitDir: string, name: string): Promise<string | null> {
  return readFile(path.join(gitDir, name), "utf8").then(
    (s) => s.trim().split("\n")[0] || null,
    () => null,
  );
}

export interface SideLabels {
  ours_label: string;
  theirs_label: string;
  /** The commit being replayed (rebase, cherry-pick) or reverted, or merged in. */
  theirs_commit: string | null;
}

/** What `ours` and `theirs` stand for in this operation, spelled out so no model has to remember git's convention. */
export async function sideLabels(ctx: GitCtx, cur: InProgress): Promise<SideLabels> {
  const { gitDir, op } = cur;
  const headRef =
    op === "merge" ? "MERGE_HEAD" : op === "rebase" ? "REBASE_HEAD" : op === "cherry-pick" ? "CHERRY_PICK_HEAD" : op === "revert" ? "REVERT_HEAD" : null;
  const theirsSha = headRef ? await pseudoRef(gitDir, headRef) : (cur.record?.stash?.commit ?? null);
  const d = await describe(ctx, [cur.head ?? "", theirsSha ?? ""]);
  const headText = cur.head ? (d.get(cur.head)?.text ?? cur.head.slice(0, 7)) : "no commit";
  const theirsText = theirsSha ? (d.get(theirsSha)?.text ?? theirsSha.slice(0, 7)) : "unknown";
  const ours = `${cur.branch ?? "detached HEAD"} (HEAD: ${headText})`;
  switch (op) {
    case "merge": {
      const name = cur.record?.theirs ?? (theirsSha ? (d.get(theirsSha)?.name ?? null) : null);
      return { ours_label: ours, theirs_label: name ? `${name} (${theirsText})` : theirsText, theirs_commit: theirsSha };
    }
    case "rebase": {
      const headName = (await pseudoRef(gitDir, "rebase-merge/head-name")) ?? (await pseudoRef(gitDir, "rebase-apply/head-name"));
      const onto = (await pseudoRef(gitDir, "rebase-merge/onto")) ?? (await pseudoRef(gitDir, "rebase-apply/onto"));
      const branch = headName?.replace(/^refs\/heads\//, "") ?? "the branch";
      return {
        ours_label: `${branch} as rebuilt so far: ${onto ? onto.slice(0, 7) : "the new base"} plus the commits replayed (HEAD: ${headText})`,
        theirs_label: `${theirsText}, the commit being replayed`,
        theirs_commit: theirsSha,
      };
    }
    case "cherry-pick":
      return { ours_label: ours, theirs_label: `${theirsText}, the commit being cherry-picked`, theirs_commit: theirsSha };
    case "revert":
      return { ours_label: ours, theirs_label: `the revert of ${theirsText} (its parent's version)`, theirs_commit: theirsSha };
    default: {
      const s = cur.record?.stash;
      return { ours_label: ours, theirs_label: s ? `the stash ${s.name} (${theirsText})` : "the stash being applied", theirs_commit: theirsSha };
    }
  }
}
