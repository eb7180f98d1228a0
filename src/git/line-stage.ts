/**
 * Line staging and unstaging (SPEC 8 `git_stage_lines`, `git_unstage_lines`): the new index content is built line by
 * line (stage-lines.ts) and written as a blob and an index entry (line-objects.ts), never as a patch. A selection that
 * takes every change of a file, and a call with no selection, is the whole file: `git add -A` / `git reset` of that
 * path, which is exactly what they do (mode, deletion, filters, git's own line-ending rules).
 *
 * Blobs: staged lines get git's `\n` where git converts this path's line endings, and go through its clean filters
 * (`hash-object --path`) as `git add` would; a file whose index already holds `\r` under text=auto is stored as built
 * (`git add` does not convert it either). The entry keeps the index entry's mode (a new entry takes the worktree's).
 * Everything runs with the worktree to itself, so no other index writer of the daemon interleaves, and the preview is
 * the unified diff the index would gain, computed from the same plan the approved call writes.
 */
import path from "node:path";
import { type FileMarks, selectionOf } from "../core/changelist-marks.js";
import { EMPTY } from "../core/file-versions.js";
import { type LineDiff, type LineSeq, diffLines } from "../core/line-diff.js";
import { patchOf, withBom } from "../core/render.js";
import { type RangeState, rangeStates } from "../core/line-status.js";
import { type Selection, stageLines, unstageLines } from "../core/stage-lines.js";
import { type Eol, serialize, splicedBytes } from "../core/text.js";
import { ToolError } from "../errors.js";
import { sweep } from "./line-sweep.js";
import { readIndexEntries } from "./index-file.js";
import { replaceIndexEntries } from "./index-write.js";
import { attributesAlong, storedAsIs, worktreeTop, writeLooseBlob } from "./loose-objects.js";
import { type IndexWrite, gitRaw, writeBlob, writeIndex } from "./objects.js";
import type { RepoCtx } from "./repo.js";
import { type LineFile, changedPaths } from "./line-versions.js";
import { type GitCtx, git } from "./run.js";
import { type GitStep, commitStep } from "./step.js";
import { capDiff } from "./text.js";

export type IndexAction = "stage" | "unstage";

export interface IndexParams {
  path?: string;
  hash?: string | null;
  lines?: number[];
  ranges?: number[];
  changelist?: string;
}

/** What one file's index entry becomes. */
export interface IndexPlan {
  rel: string;
  gitPath: string;
  /** null: the file is not lines (binary, unmerged...); only a whole-file plan can take it. */
  file: LineFile | null;
  /** `git add -A` / `git reset` of the path instead of a blob. */
  whole: boolean;
  /** The new index lines (null: the entry goes); for a blob plan, what is written. */
  next: LineSeq | null;
  /** For each line of `next`, the worktree line with its content (-1: none), so its bytes come from the worktree's. */
  worktreeLines?: Int32Array;
  bom: boolean;
  mode: string | null;
  diff: string;
  /** The diff of the index's lines to `next` that `diff` shows (BOMs on the first lines). */
  indexToNext?: LineDiff;
  /** Changes the selection took in this file. */
  selected: number;
  marks?: FileMarks;
}

/** The worktree as `git add` would store it: git's `\n` where it converts line endings. */
export function addedForm(file: LineFile): LineSeq {
  const w = file.worktree.seq;
  return file.converts ? { lines: w.lines, eols: w.eols.map((e) => (e === "\r\n" ? "\n" : e)) } : w;
}

/** The plan for one file, or null when it would change nothing. `sel` undefined: the whole file. */
export function planFile(action: IndexAction, file: LineFile, sel: Selection | undefined, modes: Modes): IndexPlan | null {
  const v = file.versions;
  const indexMode = modes.index.get(file.gitPath) ?? null;
  const headMode = modes.head.get(file.gitPath) ?? null;
  const base = { rel: file.rel, gitPath: file.gitPath, file };
  if (action === "stage") {
    if (!sel) {
      const sameMode = !file.hash || indexMode === file.worktreeMode;
      if (!v.indexToWorktree.ranges.length && (file.index.sha !== null) === (file.hash !== null) && sameMode) return null;
      const next = file.hash === null ? null : addedForm(file);
      return {
        ...base,
        whole: true,
        next,
        bom: file.worktree.bom,
        mode: next ? file.worktreeMode : null,
        ...diffOf(file, next, file.worktree.bom, indexMode, next ? file.worktreeMode : null),
        selected: 1,
      };
    }
    const built = stageLines(v, sel, { eol: file.converts ? "\n" : undefined });
    if (!built.selected) return null;
    // Every change taken is the whole file, unless its mode changed too: that is not a line, and stays unstaged.
    if (built.complete && (indexMode === null || file.hash === null || indexMode === file.worktreeMode)) return planFile(action, file, undefined, modes);
    const mode = indexMode ?? file.worktreeMode ?? "100644";
    const next = { lines: built.lines, eols: built.eols };
    const bom = file.index.sha ? file.index.bom : file.worktree.bom;
    const worktreeLines = built.newLines;
    return { ...base, whole: false, next, worktreeLines, bom, mode, ...diffOf(file, next, bom, indexMode, mode), selected: built.selected };
  }
  if (!sel) {
    if (file.head.sha === file.index.sha && headMode === indexMode) return null;
    const next = file.head.sha === null ? null : file.head.seq;
    return { ...base, whole: true, next, bom: file.head.bom, mode: headMode, ...diffOf(file, next, file.head.bom, indexMode, headMode), selected: 1 };
  }
  const built = unstageLines(v, sel);
  if (!built.selected) return null;
  if (built.complete && (file.head.sha === null || headMode === indexMode)) return planFile(action, file, undefined, modes);
  const mode = indexMode ?? headMode ?? file.worktreeMode ?? "100644";
  const next = { lines: built.lines, eols: built.eols };
  const bom = file.index.sha ? file.index.bom : file.head.bom;
  return { ...base, whole: false, next, bom, mode, ...diffOf(file, next, bom, indexMode, mode), selected: built.selected };
}

/** The unified diff the index gains (a mode change as git writes it, above the hunks; the BOMs on the first lines). */
function diffOf(
  file: LineFile,
  after: LineSeq | null,
  afterBom: boolean,
  oldMode: string | null,
  newMode: string | null,
): { diff: string; indexToNext: LineDiff } {
  const modeLine = oldMode && newMode && oldMode !== newMode ? `old mode ${oldMode}\nnew mode ${newMode}\n` : "";
  const before = withBom(file.index.seq, file.index.bom);
  const indexToNext = diffLines(before, withBom(after ?? EMPTY, afterBom), { ids: file.versions.ids });
  const diff = patchOf(file.rel, indexToNext).diff;
  const gone = after === null && file.index.sha !== null ? `deleted file ${file.rel}\n` : "";
  const added = file.index.sha === null && after !== null ? `new file ${file.rel}\n` : "";
  return { diff: `${gone}${added}${modeLine}${diff}`, indexToNext };
}

export interface Modes {
  index: Map<string, string>;
  head: Map<string, string>;
}

/** Index and HEAD modes of these paths (the index from its file, HEAD's from `ls-tree`; `head: false` skips HEAD's). */
export async function modesOf(ctx: RepoCtx, gitPaths: string[], opts: { head?: boolean } = {}): Promise<Modes> {
  const [index, head] = await Promise.all([
    ctx.repo.gitDir().then((gitDir) => readIndexEntries(ctx, ctx.repo.indexFiles, gitDir, gitPaths)),
    gitPaths.length && opts.head !== false
      ? gitRaw(ctx, ["ls-tree", "-z", "--full-tree", "HEAD", "--", ...gitPaths], { ok: "any" })
      : Promise.resolve({ code: 0, stdout: Buffer.alloc(0), stderr: "" }),
  ]);
  const modes: Modes = { index: new Map(), head: new Map() };
  for (const [p, list] of index) {
    const zero = list.find((e) => e.stage === 0);
    if (zero) modes.index.set(p, zero.mode);
  }
  if (head.code === 0) {
    for (const rec of head.stdout.toString("utf8").split("\0")) {
      const m = /^(\d{6}) blob [0-9a-f]+\t(.*)$/s.exec(rec);
      if (m) modes.head.set(m[2], m[1]);
    }
  }
  return modes;
}

/** The bytes of a version we built, for writeBlob. */
export function blobBytes(bom: boolean, seq: LineSeq): Buffer {
  return serialize({ bom, lines: seq.lines as string[], eols: seq.eols as ("" | Eol)[] });
}

/** A blob plan's bytes: a staged version is mostly the worktree's lines, copied from the worktree's bytes (splicedBytes). */
function planBytes(ctx: RepoCtx, p: IndexPlan): Buffer {
  const file = p.file!;
  const { worktree, bytes } = file;
  if (!p.worktreeLines || !bytes) return blobBytes(p.bom, p.next!);
  const starts = ctx.repo.lines.worktreeStarts({ ...file, bytes });
  return splicedBytes({ bom: p.bom, ...p.next! }, p.worktreeLines, { bom: worktree.bom, ...worktree.seq }, bytes, starts);
}

/**
 * Writes the plans: blobs and their entries, then the whole-file adds or resets (each kind in one process). `alongside`
 * (the answer) is built while the writes wait: on the files when the daemon writes the entries itself (index-write.ts),
 * else once the last git process has started, so its CPU is spent while git works, not after it.
 */
export async function applyPlans<T>(ctx: RepoCtx, action: IndexAction, plans: readonly IndexPlan[], alongside: () => Promise<T>): Promise<T> {
  const answerSoon = () => new Promise<T>((resolve, reject) => setImmediate(() => alongside().then(resolve, reject)));
  const whole = plans.filter((p) => p.whole);
  const entries = async () => {
    const writes: IndexWrite[] = [];
    for (const p of plans.filter((p) => !p.whole))
      writes.push({ gitPath: p.gitPath, entry: { mode: p.mode!, sha: await storeBlob(ctx, p.gitPath, planBytes(ctx, p), !p.file!.rawBlobs) } });
    // A git process costs the daemon a fork of its heap: the entries are replaced here where that is all git would do.
    if (writes.length && !(await replaceIndexEntries(ctx, writes))) await writeIndex(ctx, writes);
  };
  if (!whole.length) {
    const [, answer] = await Promise.all([entries(), answerSoon()]);
    return answer;
  }
  await entries();
  const specs = whole.map((p) => `:(top,literal)${p.gitPath}\0`).join("");
  const args = action === "stage" ? ["add", "-A"] : ["reset", "-q"];
  const added = gitRaw(ctx, [...args, "--pathspec-from-file=-", "--pathspec-file-nul"], { input: specs });
  // A free pool slot starts the process within this turn's microtasks; the answer is built after them.
  const [, answer] = await Promise.all([added, answerSoon()]);
  return answer;
}

/**
 * Writes a blob we built, through its clean filters as `git add` would (`filters`) or as it is: by the daemon where git
 * would store the bytes unchanged (loose-objects.ts), by `git hash-object` otherwise.
 */
export async function storeBlob(ctx: RepoCtx, gitPath: string, bytes: Buffer, filters: boolean): Promise<string> {
  const repo = await ctx.repo.location();
  const asIs =
    !filters ||
    (await storedAsIs(
      repo,
      ctx.repo.configFiles,
      worktreeTop(ctx.repo.root, repo.prefix),
      gitPath,
      bytes,
      await readIndexEntries(ctx, ctx.repo.indexFiles, repo.gitDir, attributesAlong(gitPath)),
    ));
  if (asIs) return writeLooseBlob(path.join(repo.commonDir, "objects"), bytes);
  return writeBlob(ctx, gitPath, bytes, { write: true, filters });
}

/** The new `ranges` status of a planned file: its HEAD and worktree with the index the plan leaves. */
export function rangesAfter(plan: IndexPlan, marks?: FileMarks): RangeState[] {
  const file = plan.file!;
  const v = file.versions;
  // An index at HEAD's lines: HEAD -> the new index is the diff the preview made (when no BOM was put on either side).
  const headToNext = v.index === v.head && !file.index.bom && !plan.bom ? plan.indexToNext : undefined;
  return rangeStates(v.withIndex(plan.next ?? EMPTY, headToNext), marks);
}

/** INVALID_PARAMS for selections that cannot mean anything, HASH_MISMATCH for a selection made on another version. */
export function checkSelection(params: IndexParams, needsPath: boolean): Selection | undefined {
  const sel = params.lines !== undefined || params.ranges !== undefined ? { lines: params.lines, ranges: params.ranges } : undefined;
  if (sel && params.path === undefined) throw new ToolError("INVALID_PARAMS", "lines, ranges: name the file they are in with path.");
  if (sel && params.changelist !== undefined)
    throw new ToolError("INVALID_PARAMS", "changelist: select either a changelist or lines/ranges of one file, not both.");
  if (sel && params.hash === undefined)
    throw new ToolError(
      "INVALID_PARAMS",
      "hash: required with lines or ranges: the worktree file hash the line numbers belong to (git_line_status or file_read give it).",
    );
  if (needsPath && params.path === undefined) throw new ToolError("INVALID_PARAMS", "path: required.");
  return sel;
}

export function checkHash(file: LineFile, hash: string | null | undefined): void {
  if (hash === undefined || (hash === null ? file.hash === null : hash.toLowerCase() === file.hash)) return;
  throw new ToolError(
    "HASH_MISMATCH",
    `${file.rel} changed since the version you gave (hash ${hash}); it is now ${file.hash ?? "deleted"}. Read its status again (git_line_status) and select from that.`,
    { current_hash: file.hash },
  );
}

/** Root-relative paths a call without path or changelist covers: what `git add -A` would stage, or `git reset` unstage. */
async function allPaths(ctx: GitCtx, action: IndexAction): Promise<string[]> {
  if (action === "stage") return changedPaths(ctx, "index");
  const head = await git(ctx, ["rev-parse", "--verify", "--quiet", "HEAD"], { ok: [0, 1, 128] });
  const r =
    head.code === 0
      ? await git(ctx, ["diff", "--cached", "--name-only", "-z", "--no-renames", "--relative", "--no-ext-diff", "--", "."])
      : await git(ctx, ["ls-files", "-z", "--cached", "--", "."]);
  return r.stdout.split("\0").filter(Boolean).sort();
}

/** git_stage_lines and git_unstage_lines: plan, preview or write, report. */
export async function runIndexTool(action: IndexAction, params: IndexParams, ctx: GitStep): Promise<Record<string, unknown>> {
  const sel = checkSelection(params, false);
  const { lines, changelists } = ctx.repo;
  const repo = await ctx.repo.location();
  return ctx.exclusive(async () => {
    let targets: { file: LineFile | null; rel: string; sel?: Selection; marks?: FileMarks }[] = [];
    if (params.changelist !== undefined) {
      await changelists.ready();
      if (!changelists.has(params.changelist))
        throw new ToolError("NOT_FOUND", `changelist: there is no changelist "${params.changelist}"; git_changelists lists them.`);
      const found = await sweep(ctx, { list: params.changelist, path: params.path });
      targets = found.files.map(({ file, marks }) => ({
        file,
        rel: file.rel,
        marks,
        sel: selectionOf(marks, file.versions.headToWorktree, params.changelist!),
      }));
    } else if (params.path !== undefined) {
      // The modes are read beside the versions: one round of processes, not two.
      const target = await ctx.repo.paths.resolve(params.path, { allowGitDir: false });
      const [file, modes] = await Promise.all([lines.loadResolved(ctx, target), modesOf(ctx, [repo.prefix + target.rel], { head: action === "unstage" })]);
      checkHash(file, params.hash);
      const plan = planFile(action, file, sel, modes);
      if (!plan) throw noChange(action, params);
      const answer = () => report(action, params, [plan], ctx);
      return ctx.dryRun ? answer() : commitStep(ctx, (c) => applyPlans(c, action, [plan], answer));
    } else {
      for (const rel of await allPaths(ctx, action)) {
        try {
          targets.push({ file: await lines.load(ctx, rel, { mustExist: false }), rel });
        } catch (e) {
          if (!(e instanceof ToolError)) throw e;
          targets.push({ file: null, rel }); // not lines: staged (or unstaged) whole, as git add -A does
        }
      }
    }
    const modes = await modesOf(
      ctx,
      targets.map((t) => t.file?.gitPath ?? repo.prefix + t.rel),
    );
    const plans: IndexPlan[] = [];
    for (const t of targets) {
      if (!t.file) {
        plans.push({
          rel: t.rel,
          gitPath: repo.prefix + t.rel,
          file: null,
          whole: true,
          next: null,
          bom: false,
          mode: null,
          diff: `binary or unreadable file ${t.rel}: ${action === "stage" ? "staged" : "unstaged"} whole\n`,
          selected: 1,
        });
        continue;
      }
      const plan = planFile(action, t.file, t.sel, modes);
      if (plan) plans.push({ ...plan, marks: t.marks });
    }
    if (!plans.length) throw noChange(action, params);
    const answer = () => report(action, params, plans, ctx);
    return ctx.dryRun ? answer() : commitStep(ctx, (c) => applyPlans(c, action, plans, answer));
  });
}

function noChange(action: IndexAction, params: IndexParams): ToolError {
  const what = params.changelist !== undefined ? `changelist "${params.changelist}"` : (params.path ?? "the worktree");
  return action === "stage"
    ? new ToolError(
        "NO_CHANGE",
        `Nothing to stage in ${what}: the selection holds no change the index lacks (it may be staged already); git_line_status shows what is staged.`,
      )
    : new ToolError("NO_CHANGE", `Nothing to unstage in ${what}: the index has HEAD's lines there; git_line_status shows what is staged.`);
}

async function report(action: IndexAction, params: IndexParams, plans: IndexPlan[], ctx: GitStep): Promise<Record<string, unknown>> {
  const dryRun = ctx.dryRun;
  const files = [];
  for (const p of plans) {
    const marks = p.marks ?? (p.file ? await ctx.repo.changelists.marksFor(p.file) : undefined);
    const ranges = p.file ? rangesAfter(p, marks) : null;
    files.push({ path: p.rel, hash: p.file?.hash ?? null, whole_file: p.whole, changes: p.selected, ranges });
  }
  const diff = plans.map((p) => p.diff).join("");
  const capped = capDiff(diff, "pass path to see one file");
  const verb = action === "stage" ? (dryRun ? "would stage" : "staged") : dryRun ? "would unstage" : "unstaged";
  const summary = files.map((f) => {
    const r = f.ranges ? f.ranges.map((x) => `${x.range} ${x.staged}`).join(", ") : "";
    return `  ${f.path}${f.whole_file ? " (whole file)" : ` (${f.changes} change${f.changes === 1 ? "" : "s"})`}${r ? ` · ranges now: ${r}` : ""}`;
  });
  const text = [`${verb} ${files.length} file${files.length === 1 ? "" : "s"}:`, ...summary, capped.text.trimEnd()].join("\n");
  return {
    [action === "stage" ? "staged" : "unstaged"]: capped.text,
    ...(capped.truncated ? { diff_truncated: true } : {}),
    files,
    ...(params.path !== undefined && files.length === 1 ? { ranges: files[0].ranges } : {}),
    text,
  };
}
