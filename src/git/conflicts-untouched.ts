import { chmod, lstat, readFile, readlink, rm, symlink } from "node:fs/promises";
import path from "node:path";
import { atomicWriteConfined, permissionBits } from "../fs/atomic-write.js";
import type { InProgress } from "./conflicts-operation.js";
import { unmergedPaths } from "./conflicts-stages.js";
import { EMPTY_TREE } from "./refs.js";
import type { RepoCtx } from "./repo.js";
import { NO_SUBMODULE_WORKTREES, type GitCtx, git } from "./run.js";

/**
 * What an abandon must leave alone (SPEC 9: a file the operation did not touch keeps its content): the files edited in
 * the worktree that the operation never touched. git's own aborts do not spare them all (`rebase --abort` resets
 * hard) and restoring the earlier worktree would undo an edit made while the operation was stopped, so the abandon
 * reads them first and puts them back after.
 */

const names = (out: string) => out.split("\0").filter(Boolean);

/** The commit and index tree the operation started from: the daemon's record, else what git's own state says. */
async function startedFrom(cur: InProgress): Promise<{ head: string | null; index: string }> {
  const before = cur.record?.before;
  if (before) return { head: before.head, index: before.index_tree };
  if (cur.op === "rebase") {
    const orig = await readFile(path.join(cur.gitDir, "rebase-merge/orig-head"), "utf8").catch(() =>
      readFile(path.join(cur.gitDir, "rebase-apply/orig-head"), "utf8").catch(() => ""),
    );
    if (orig.trim()) return { head: orig.trim(), index: `${orig.trim()}^{tree}` };
  }
  return { head: cur.head, index: cur.head ? "HEAD" : EMPTY_TREE };
}

/**
 * Files with worktree edits (against the index) whose index entry is still the one the operation started from, that
 * are not conflicted, and that the commits it made (a rebase's) did not change: the operation never touched them.
 */
export async function untouchedEdits(ctx: GitCtx, cur: InProgress): Promise<string[]> {
  const from = await startedFrom(cur);
  const [edited, staged, unmerged, moved] = await Promise.all([
    git(ctx, ["diff", "--name-only", "-z", "--no-renames", NO_SUBMODULE_WORKTREES]),
    git(ctx, ["diff", "--cached", "--name-only", "-z", "--no-renames", from.index, "--"]),
    unmergedPaths(ctx),
    from.head && cur.head && from.head !== cur.head ? git(ctx, ["diff", "--name-only", "-z", "--no-renames", from.head, cur.head, "--"]) : null,
  ]);
  const touched = new Set([...names(staged.stdout), ...unmerged.map((u) => u.path), ...names(moved?.stdout ?? ""), ...(cur.record?.stash?.untracked ?? [])]);
  return [...new Set(names(edited.stdout))].filter((p) => !touched.has(p)).sort();
}

/** A worktree entry as it was: a file's bytes and mode, a symlink's target, or nothing. */
type Entry = { kind: "file"; bytes: Buffer; mode: number } | { kind: "link"; target: string } | { kind: "absent" };

async function readEntry(abs: string): Promise<Entry | null> {
  const st = await lstat(abs).catch(() => null);
  if (!st) return { kind: "absent" };
  if (st.isSymbolicLink()) return { kind: "link", target: await readlink(abs) };
  if (st.isFile()) return { kind: "file", bytes: await readFile(abs), mode: permissionBits(st.mode) };
  return null; // a folder (a submodule): git's aborts leave its worktree alone
}

const sameEntry = (a: Entry, b: Entry | null) =>
  !!b &&
  a.kind === b.kind &&
  (a.kind !== "file" || (b.kind === "file" && a.mode === b.mode && a.bytes.equals(b.bytes))) &&
  (a.kind !== "link" || (b.kind === "link" && a.target === b.target));

/** Reads `paths` now; the returned function puts back each one the abandon changed (atomically for files). */
export async function keepEntries(ctx: RepoCtx, paths: readonly string[]): Promise<() => Promise<void>> {
  const kept: { rel: string; entry: Entry }[] = [];
  for (const rel of paths) {
    const entry = await readEntry(path.join(ctx.repo.root, rel));
    if (entry) kept.push({ rel, entry });
  }
  return async () => {
    for (const { rel, entry } of kept) {
      const abs = path.join(ctx.repo.root, rel);
      const now = await readEntry(abs);
      if (sameEntry(entry, now)) continue;
      if (entry.kind !== "file" || now?.kind === "link") await rm(abs, { force: true });
      if (entry.kind === "link") await symlink(entry.target, abs);
      if (entry.kind !== "file") continue;
      // Resolved after any link is gone, so the write lands on the path itself; a new file gets its folders and mode.
      const target = await ctx.repo.paths.resolve(rel);
      const exists = now?.kind === "file";
      await atomicWriteConfined(target.root, target.real, entry.bytes, exists ? entry.mode : undefined, target.rel);
      if (!exists) await chmod(target.real, entry.mode);
    }
  };
}
