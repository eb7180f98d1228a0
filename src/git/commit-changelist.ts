/**
 * `git_commit {changelist}` (SPEC 8): commits exactly one changelist's changes. The commit's tree is HEAD's plus those
 * changes, built in a temporary index (GIT_INDEX_FILE), and the commit itself is git_commit's own path run against
 * that index, so its checks, hooks, preview and errors are those of any commit. Afterwards nothing looks reverted:
 * each committed file's entry in the real index becomes the new HEAD plus whatever else was staged before (the old
 * index with the list's changes staged), and every other list's changes stay in the worktree, and in the index where
 * they were staged.
 */
import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { selectionOf } from "../core/changelist-marks.js";
import { mergeLines } from "../core/merge/three-way.js";
import { hasBom } from "../core/text.js";
import type { LineSeq } from "../core/line-diff.js";
import { type Selection, stageLines } from "../core/stage-lines.js";
import { ToolError } from "../errors.js";
import { blobText } from "./conflicts-model.js";
import { readBlobs } from "./conflicts-stages.js";
import { sweep } from "./line-sweep.js";
import { type IndexWrite, gitRaw, indexEntries, writeBlob, writeIndex } from "./objects.js";
import { addedForm, blobBytes, modesOf } from "./line-stage.js";
import type { LineFile } from "./line-versions.js";
import { operationInProgress } from "./operation-markers.js";
import { EMPTY_TREE, headInfo } from "./refs.js";
import { backupText, saveRef } from "./backup.js";
import { type GitCtx, git, steady } from "./run.js";
import { type GitStep, commitStep } from "./step.js";
import { withTempIndex } from "./temp-index.js";
import { PATCH_READ_BYTES, capDiff } from "./text.js";

type Result = Record<string, unknown>;

const seqText = (s: LineSeq) => s.lines.map((l, i) => l + s.eols[i]).join("");

/** One file of the commit: what the commit takes (null: the file goes) and what the real index holds afterwards. */
interface Part {
  rel: string;
  gitPath: string;
  file: LineFile | null;
  /** The commit takes the worktree's file whole (`git add`, in the temporary index). */
  whole: boolean;
  committed: LineSeq | null;
  committedMode: string | null;
  bom: boolean;
  /** The real index's entry afterwards: its lines (null: no entry), or undefined: the index entry is left as it is. */
  indexAfter?: LineSeq | null;
  /** For a file that is not lines: its index blob before the commit (the entry afterwards is the commit's). */
  indexBefore?: string | null;
}

/** `commit` is git_commit's own run, given a context whose git commands use the temporary index. */
export async function commitChangelist(
  ctx: GitStep,
  params: { changelist: string; paths?: string[] },
  commit: (ctx: GitStep) => Promise<Result>,
): Promise<Result> {
  if (params.paths) throw new ToolError("INVALID_PARAMS", "paths, changelist: commit either some paths or one changelist, not both.");
  const list = params.changelist;
  const lists = ctx.repo.changelists;
  await lists.ready();
  if (!lists.has(list)) throw new ToolError("NOT_FOUND", `changelist: there is no changelist "${list}" (lists: ${lists.names().join(", ")}).`);
  const op = await operationInProgress(await ctx.repo.gitDir());
  if (op)
    throw new ToolError(
      "CONFLICT",
      `A ${op} is in progress; finish or abort it before committing a changelist (a changelist commit leaves the rest of the worktree out, which a ${op} cannot).`,
    );
  const { head } = await headInfo(ctx);
  const found = await sweep(ctx, { list });
  const parts = planParts(found.files.map((f) => ({ file: f.file, sel: selectionOf(f.marks, f.file.versions.headToWorktree, list) })));
  // A change that is not lines (a binary file) is one whole-file change of the active list.
  if (list === lists.active) {
    const { prefix } = await ctx.repo.location();
    const before = await indexEntries(
      ctx,
      found.skipped.map((s) => prefix + s.path),
    );
    for (const s of found.skipped) {
      const gitPath = prefix + s.path;
      const indexBefore = before.get(gitPath)?.find((e) => e.stage === 0)?.sha ?? null;
      parts.push({ rel: s.path, gitPath, file: null, whole: true, committed: null, committedMode: null, bom: false, indexBefore });
    }
  }
  if (!parts.length) throw new ToolError("NO_CHANGE", `Changelist ${list} has no changes to commit; git_changelists shows what each list holds.`);

  return withTempIndex(ctx, { tree: head }, async (onList) => {
    await buildIndex(ctx, onList, parts);
    // The approver sees the lines that go in, not just how many (as git_stage_lines shows them).
    const patch = await git(onList, ["diff", "--cached", "--no-ext-diff", "--no-textconv", "--no-renames", head ?? EMPTY_TREE, "--"], {
      maxBytes: PATCH_READ_BYTES,
    });
    const capped = capDiff(patch.stdout, "git_changelist_lines shows the list file by file", patch.truncated);
    const shown = { changelist: list, diff: capped.text, ...(capped.truncated ? { diff_truncated: true } : {}) };
    const withPatch = (text: unknown) => `changelist ${list}: ${String(text)}\n${capped.text}`.trimEnd();
    const built = ctx.dryRun ? null : (await git(onList, ["write-tree"])).stdout.trim();
    const result = await commit(onList);
    if (ctx.dryRun || typeof result.commit !== "string") return { ...result, ...shown, text: withPatch(result.text) };
    await refuseHookChanges(ctx, head, result.commit, built!);
    const kept = await ctx.exclusive(() => commitStep(ctx, (c) => updateRealIndex(c, steady(onList), parts)));
    const note = kept.length ? `\nthe index entries of ${kept.join(", ")} changed during the commit and were left as they are` : "";
    return { ...result, ...shown, ...(kept.length ? { index_kept: kept } : {}), text: withPatch(`${result.text}${note}`) };
  });
}

/**
 * A hook that stages files (a formatter's `git add`) stages them into the commit's temporary index, and git commits
 * them: then the commit is not the list's changes. It is undone (the branch back where it was, the commit kept in a
 * backup ref; the real index and the worktree were never touched) and the call fails, naming the files.
 */
async function refuseHookChanges(ctx: GitStep, head: string | null, commit: string, built: string): Promise<void> {
  const tree = (await git(ctx, ["rev-parse", `${commit}^{tree}`])).stdout.trim();
  if (tree === built) return;
  const changed = (await git(ctx, ["diff-tree", "-r", "-z", "--name-only", "--no-renames", built, tree])).stdout.split("\0").filter(Boolean);
  const backup = await saveRef(ctx, "changelist-commit", commit, "commit");
  await git(
    steady(ctx),
    head ? ["update-ref", "-m", "tool-layer: undo a changelist commit a hook changed", "HEAD", head, commit] : ["update-ref", "-d", "HEAD", commit],
  );
  throw new ToolError(
    "HOOK_FAILED",
    `A hook changed what the commit holds (it staged ${changed.join(", ")}), so it was not the changelist's changes; the commit was undone: HEAD is back ${head ? `at ${head.slice(0, 7)}` : "on the unborn branch"}, the index and the worktree are as they were (${backupText(backup)}). Make the hook leave the index alone, or put those files in the list.`,
    { changed, backup },
  );
}

/** For each file, HEAD with the list's changes (the commit) and the real index with them staged (afterwards). */
function planParts(files: { file: LineFile; sel: Selection }[]): Part[] {
  const parts: Part[] = [];
  for (const { file, sel } of files) {
    const v = file.versions;
    const eol = file.converts ? ("\n" as const) : undefined;
    // The list's changes applied to HEAD: HEAD -> worktree is the index -> worktree of a file staged as HEAD.
    const onHead = stageLines(v.withIndex(v.head), sel, { eol });
    if (!onHead.selected) continue;
    const staged = stageLines(v, sel, { eol });
    const whole = onHead.complete;
    const worktreeForm = addedForm(file);
    const committed = whole ? (file.hash === null ? null : worktreeForm) : { lines: onHead.lines, eols: onHead.eols };
    const indexAfter = !staged.selected ? undefined : staged.complete ? (file.hash === null ? null : worktreeForm) : { lines: staged.lines, eols: staged.eols };
    parts.push({
      rel: file.rel,
      gitPath: file.gitPath,
      file,
      whole,
      committed,
      committedMode: null,
      bom: whole ? file.worktree.bom : file.head.bom,
      indexAfter,
    });
  }
  return parts;
}

/**
 * Writes the commit's files into the temporary index `onList` (no hook runs for it; a dry run runs no filter either);
 * modes and blobs are read and made as for the real index.
 */
async function buildIndex(ctx: GitStep, onList: GitCtx, parts: Part[]): Promise<void> {
  const modes = await modesOf(
    ctx,
    parts.map((p) => p.gitPath),
  );
  const writes: IndexWrite[] = [];
  const adds: Part[] = [];
  for (const p of parts) {
    const worktreeMode = p.file?.worktreeMode ?? null;
    p.committedMode = p.whole ? worktreeMode : (modes.head.get(p.gitPath) ?? worktreeMode ?? "100644");
    if (p.whole && !ctx.dryRun) {
      adds.push(p); // exactly what `git add` makes of the file: mode, filters, deletion
      continue;
    }
    if (!p.file) {
      // A preview of a file that is not lines (binary): its bytes as they are, with no filter.
      const raw = await readFile(path.join(ctx.repo.root, p.rel)).catch(() => null);
      const mode = raw ? ((statSync(path.join(ctx.repo.root, p.rel)).mode & 0o111) !== 0 ? "100755" : "100644") : null;
      writes.push({ gitPath: p.gitPath, entry: raw && mode ? { mode, sha: await writeBlob(ctx, p.gitPath, raw, { write: true, filters: false }) } : null });
      continue;
    }
    if (p.committed === null) {
      writes.push({ gitPath: p.gitPath, entry: null });
      continue;
    }
    const sha = await writeBlob(ctx, p.gitPath, blobBytes(p.bom, p.committed), { write: true, filters: !ctx.dryRun && !p.file.rawBlobs });
    writes.push({ gitPath: p.gitPath, entry: { mode: p.committedMode!, sha } });
  }
  await writeIndex(onList, writes, { hooks: false });
  if (adds.length) {
    const specs = adds.map((p) => `:(top,literal)${p.gitPath}\0`).join("");
    await gitRaw(onList, ["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], { input: specs, config: ["-c", "core.hooksPath=/dev/null"] });
  }
}

/**
 * After the commit: each committed file's real index entry becomes the old index with the list's changes staged, which
 * is the commit's own entry when nothing else was staged. An entry someone changed meanwhile is left alone and named.
 */
async function updateRealIndex(ctx: GitStep, onList: GitCtx, parts: Part[]): Promise<string[]> {
  const paths = parts.map((p) => p.gitPath);
  const [now, committed] = await Promise.all([indexEntries(ctx, paths), indexEntries(onList, paths)]);
  const writes: IndexWrite[] = [];
  const kept: string[] = [];
  for (const p of parts) {
    const current = now.get(p.gitPath)?.find((e) => e.stage === 0) ?? null;
    const inCommit = committed.get(p.gitPath)?.find((e) => e.stage === 0) ?? null;
    if (!p.file) {
      // Not lines: the commit took the whole file, and the index gets the commit's entry.
      if ((current?.sha ?? null) !== p.indexBefore) kept.push(p.rel);
      else writes.push({ gitPath: p.gitPath, entry: inCommit ? { mode: inCommit.mode, sha: inCommit.sha } : null });
      continue;
    }
    // undefined: the index had the list's changes already; its entry stays as it is.
    if (p.indexAfter === undefined) continue;
    if ((current?.sha ?? null) !== p.file.index.sha) {
      // Staged meanwhile (another call, a hook): the list's lines go onto that entry too, else it would stage their revert.
      const onto = current && p.committed ? await withListLines(ctx, p, current.sha) : null;
      if (onto) writes.push({ gitPath: p.gitPath, entry: { mode: current!.mode, sha: onto } });
      else kept.push(p.rel);
      continue;
    }
    if (p.indexAfter === null) writes.push({ gitPath: p.gitPath, entry: null });
    else if (inCommit && p.committed && seqText(p.indexAfter) === seqText(p.committed))
      writes.push({ gitPath: p.gitPath, entry: { mode: inCommit.mode, sha: inCommit.sha } });
    else {
      const bom = p.file.index.sha ? p.file.index.bom : p.file.worktree.bom;
      const sha = await writeBlob(ctx, p.gitPath, blobBytes(bom, p.indexAfter), { write: true, filters: !p.file.rawBlobs });
      writes.push({ gitPath: p.gitPath, entry: { mode: current?.mode ?? inCommit?.mode ?? p.committedMode ?? "100644", sha } });
    }
  }
  await writeIndex(ctx, writes);
  return kept;
}

/**
 * The blob of an index entry someone changed during the commit, with the list's lines merged in: a three-way merge of
 * HEAD's lines (base), that entry's (ours) and the commit's (theirs). null when they conflict or the entry is not text.
 */
async function withListLines(ctx: GitStep, p: Part, sha: string): Promise<string | null> {
  const bytes = (await readBlobs(ctx, [sha], ctx.repo.maxFileBytes)).get(sha);
  const entry = bytes ? blobText(bytes) : null;
  if (!bytes || !entry || !p.file || !p.committed) return null;
  const merged = mergeLines(p.file.head.seq, entry, p.committed);
  if (merged.blocks.length) return null;
  const lines = merged.chunks.flatMap((c) => (c.kind === "stable" ? c.lines : []));
  const eols = merged.chunks.flatMap((c) => (c.kind === "stable" ? c.eols : []));
  return writeBlob(ctx, p.gitPath, blobBytes(hasBom(bytes), { lines, eols }), { write: true, filters: false });
}
