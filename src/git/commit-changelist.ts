/**
 * `git_commit {changelist}` (SPEC 8): commits exactly one changelist's changes. The commit's tree is HEAD's plus those
 * changes, built in a temporary index (GIT_INDEX_FILE), and the commit itself is git_commit's own path run against
 * that index, so its checks, hooks, preview and errors are those of any commit. Afterwards nothing looks reverted:
 * each committed file's entry in the real index becomes the new HEAD plus whatever else was staged before (the old
 * index with the list's changes staged), and every other list's changes stay in the worktree, and in the index where
 * they were staged.
 */
import { statSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { selectionOf } from "../core/changelist-marks.js";
import { mergeLines } from "../core/merge/three-way.js";
import { hasBom } from "../core/text.js";
import type { LineSeq } from "../core/line-diff.js";
import { type Selection, stageLines } from "../core/stage-lines.js";
import { ToolError } from "../errors.js";
import type { Supervisor } from "../platform/supervisor.js";
import type { ToolContext, ToolResult } from "../tools/tool.js";
import type { Workspace } from "../workspace.js";
import { blobText } from "./conflicts-model.js";
import { readBlobs } from "./conflicts-stages.js";
import { sweep } from "./line-sweep.js";
import { type IndexWrite, gitRaw, indexEntries, writeBlob, writeIndex } from "./objects.js";
import { lineGit } from "./line-service.js";
import { addedForm, blobBytes, modesOf } from "./line-stage.js";
import { type LineFile, repoInfo } from "./line-versions.js";
import { EMPTY_TREE, cachedGitDir, commitStep, headInfo, operationInProgress } from "./repo.js";
import { backupText, saveRef } from "./backup.js";
import { git, steady } from "./run.js";
import { PATCH_READ_BYTES, capDiff } from "./text.js";

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
  ctx: ToolContext,
  params: { changelist: string; paths?: string[] },
  commit: (ctx: ToolContext) => Promise<ToolResult>,
): Promise<ToolResult> {
  if (params.paths) throw new ToolError("INVALID_PARAMS", "paths, changelist: commit either some paths or one changelist, not both.");
  const list = params.changelist;
  const svc = lineGit(ctx.ws);
  await svc.changelists.ready(ctx);
  if (!svc.changelists.has(list)) throw new ToolError("NOT_FOUND", `changelist: there is no changelist "${list}" (lists: ${svc.changelists.names().join(", ")}).`);
  const op = await operationInProgress(await cachedGitDir(ctx));
  if (op) throw new ToolError("CONFLICT", `A ${op} is in progress; finish or abort it before committing a changelist (a changelist commit leaves the rest of the worktree out, which a ${op} cannot).`);
  const { head } = await headInfo(ctx);
  const found = await sweep(ctx, svc.files, svc.changelists, { list });
  const parts = planParts(found.files.map((f) => ({ file: f.file, sel: selectionOf(f.marks, f.file.versions.headToWorktree, list) })));
  // A change that is not lines (a binary file) is one whole-file change of the active list.
  if (list === svc.changelists.active) {
    const { prefix } = await repoInfo(ctx);
    const before = await indexEntries(ctx, found.skipped.map((s) => prefix + s.path));
    for (const s of found.skipped) {
      const gitPath = prefix + s.path;
      const indexBefore = before.get(gitPath)?.find((e) => e.stage === 0)?.sha ?? null;
      parts.push({ rel: s.path, gitPath, file: null, whole: true, committed: null, committedMode: null, bom: false, indexBefore });
    }
  }
  if (!parts.length) throw new ToolError("NO_CHANGE", `Changelist ${list} has no changes to commit; git_changelists shows what each list holds.`);

  const dir = await mkdtemp(path.join(tmpdir(), "tool-layer-changelist-"));
  try {
    const env = { GIT_INDEX_FILE: path.join(dir, "index") };
    await git(ctx, head ? ["read-tree", head] : ["read-tree", "--empty"], { env });
    await buildIndex(ctx, parts, env);
    // The approver sees the lines that go in, not just how many (as git_stage_lines shows them).
    const patch = await git(ctx, ["diff", "--cached", "--no-ext-diff", "--no-textconv", "--no-renames", head ?? EMPTY_TREE, "--"], { env, maxBytes: PATCH_READ_BYTES });
    const capped = capDiff(patch.stdout, "git_changelist_lines shows the list file by file", patch.truncated);
    const shown = { changelist: list, diff: capped.text, ...(capped.truncated ? { diff_truncated: true } : {}) };
    const withPatch = (text: unknown) => `changelist ${list}: ${String(text)}\n${capped.text}`.trimEnd();
    const built = ctx.dryRun ? null : (await git(ctx, ["write-tree"], { env })).stdout.trim();
    const result = await commit(withIndexFile(ctx, env.GIT_INDEX_FILE));
    if (ctx.dryRun || typeof result.commit !== "string") return { ...result, ...shown, text: withPatch(result.text) };
    await refuseHookChanges(ctx, head, result.commit, built!);
    const kept = await ctx.exclusive(() => commitStep(ctx, (c) => updateRealIndex(c, parts, env)));
    const note = kept.length ? `\nthe index entries of ${kept.join(", ")} changed during the commit and were left as they are` : "";
    return { ...result, ...shown, ...(kept.length ? { index_kept: kept } : {}), text: withPatch(`${result.text}${note}`) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A hook that stages files (a formatter's `git add`) stages them into the commit's temporary index, and git commits
 * them: then the commit is not the list's changes. It is undone (the branch back where it was, the commit kept in a
 * backup ref; the real index and the worktree were never touched) and the call fails, naming the files.
 */
async function refuseHookChanges(ctx: ToolContext, head: string | null, commit: string, built: string): Promise<void> {
  const tree = (await git(ctx, ["rev-parse", `${commit}^{tree}`])).stdout.trim();
  if (tree === built) return;
  const changed = (await git(ctx, ["diff-tree", "-r", "-z", "--name-only", "--no-renames", built, tree])).stdout.split("\0").filter(Boolean);
  const backup = await saveRef(ctx, "changelist-commit", commit, "commit");
  await git(steady(ctx), head ? ["update-ref", "-m", "tool-layer: undo a changelist commit a hook changed", "HEAD", head, commit] : ["update-ref", "-d", "HEAD", commit]);
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
    parts.push({ rel: file.rel, gitPath: file.gitPath, file, whole, committed, committedMode: null, bom: whole ? file.worktree.bom : file.head.bom, indexAfter });
  }
  return parts;
}

/** Writes the commit's files into the temporary index (no hook runs for it; a dry run runs no filter either). */
async function buildIndex(ctx: ToolContext, parts: Part[], env: { GIT_INDEX_FILE: string }): Promise<void> {
  const modes = await modesOf(ctx, parts.map((p) => p.gitPath));
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
      const raw = await readFile(path.join(ctx.ws.root, p.rel)).catch(() => null);
      const mode = raw ? ((statSync(path.join(ctx.ws.root, p.rel)).mode & 0o111) !== 0 ? "100755" : "100644") : null;
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
  await writeIndex(ctx, writes, { env, hooks: false });
  if (adds.length) {
    const specs = adds.map((p) => `:(top,literal)${p.gitPath}\0`).join("");
    await gitRaw(ctx, ["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], { input: specs, env, config: ["-c", "core.hooksPath=/dev/null"] });
  }
}

/**
 * After the commit: each committed file's real index entry becomes the old index with the list's changes staged, which
 * is the commit's own entry when nothing else was staged. An entry someone changed meanwhile is left alone and named.
 */
async function updateRealIndex(ctx: ToolContext, parts: Part[], env: { GIT_INDEX_FILE: string }): Promise<string[]> {
  const paths = parts.map((p) => p.gitPath);
  const [now, committed] = await Promise.all([indexEntries(ctx, paths), indexEntries(ctx, paths, env)]);
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
    else if (inCommit && p.committed && seqText(p.indexAfter) === seqText(p.committed)) writes.push({ gitPath: p.gitPath, entry: { mode: inCommit.mode, sha: inCommit.sha } });
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
async function withListLines(ctx: ToolContext, p: Part, sha: string): Promise<string | null> {
  const bytes = (await readBlobs(ctx, [sha], ctx.ws.maxFileBytes)).get(sha);
  const entry = bytes ? blobText(bytes) : null;
  if (!bytes || !entry || !p.file || !p.committed) return null;
  const merged = mergeLines(p.file.head.seq, entry, p.committed);
  if (merged.blocks.length) return null;
  const lines = merged.chunks.flatMap((c) => (c.kind === "stable" ? c.lines : []));
  const eols = merged.chunks.flatMap((c) => (c.kind === "stable" ? c.eols : []));
  return writeBlob(ctx, p.gitPath, blobBytes(hasBom(bytes), { lines, eols }), { write: true, filters: false });
}

/** The call's context with every git command (and so every hook git runs) on `indexFile` instead of the real index. */
export function withIndexFile(ctx: ToolContext, indexFile: string): ToolContext {
  const real = ctx.ws.processes;
  const onIndex = <S extends { cmd: string; env?: Record<string, string | undefined> }>(spec: S): S =>
    spec.cmd === "git" && !(spec.env && "GIT_INDEX_FILE" in spec.env) ? { ...spec, env: { ...spec.env, GIT_INDEX_FILE: indexFile } } : spec;
  const processes = Object.create(real) as Supervisor;
  processes.run = (spec, opts) => real.run(onIndex(spec), opts);
  processes.spawn = (spec, opts) => real.spawn(onIndex(spec), opts);
  const ws = Object.create(ctx.ws) as Workspace;
  Object.defineProperty(ws, "processes", { value: processes });
  return { ...ctx, ws };
}
