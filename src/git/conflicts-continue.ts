import { readFile } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../errors.js";
import { type Backup, saveRef } from "./backup.js";
import type { AutoMode } from "./conflicts-model.js";
import { type ConflictOp, type InProgress, type SideLabels, clearRecord, currentOperation, operationName, sideLabels } from "./conflicts-operation.js";
import { type FileView, autoLabel, fileViewText } from "./conflicts-read.js";
import { type SettledBlock, settleConflicts } from "./conflicts-settle.js";
import { unmergedPaths } from "./conflicts-stages.js";
import { plannedHooks } from "./hooks.js";
import { pathspec } from "./params.js";
import { type GitCtx, git } from "./run.js";
import type { GitStep } from "./step.js";

/**
 * Going on after conflicts: settle what auto-resolution may, and when nothing is left run the operation's next step
 * (commit the merge, `rebase --continue`, `cherry-pick --continue`, finish the stash apply), which may stop again:
 * then settle again, until the operation is done or something is left for a person.
 */

export interface RunOutcome {
  done: boolean;
  op: ConflictOp;
  settled: SettledBlock[];
  staged: string[];
  left: FileView[];
  /** Files settled by word merges, left unstaged for the caller to read before git_conflict_finalize goes on. */
  review: string[];
  /** What ran, in words: "committed the merge 1a2b3c4", "replayed the rest of the rebase". */
  steps: string[];
  labels: SideLabels | null;
  /** The stash a finished pop dropped, saved first. */
  dropped?: Backup;
}

/** Stops a runaway loop: a rebase of more commits than this stops conflicting long before in practice. */
const MAX_STOPS = 10_000;

/** `cur` has just stopped on conflicts: settle, continue, repeat. Runs inside the operation's worktree step. */
export async function settleAndContinue(ctx: GitStep, cur: InProgress, mode: AutoMode, message?: string): Promise<RunOutcome> {
  const out: RunOutcome = { done: false, op: cur.op, settled: [], staged: [], left: [], review: [], steps: [], labels: null };
  for (let stops = 0; stops < MAX_STOPS; stops++) {
    const labels = await sideLabels(ctx, cur);
    out.labels = labels;
    const replayed = cur.op === "rebase" || cur.op === "cherry-pick" || cur.op === "revert" ? labels.theirs_commit?.slice(0, 7) : undefined;
    const rep = await settleConflicts(ctx, mode, { ours: "HEAD", theirs: labels.theirs_commit?.slice(0, 7) ?? "theirs" }, replayed);
    out.settled.push(...rep.settled);
    out.staged.push(...rep.staged);
    // A word merge never goes into a commit unseen: the operation stops before its next step (SPEC 9).
    if (rep.left.length || rep.review.length) {
      out.left = rep.left;
      out.review = rep.review;
      return out;
    }
    const step = await continueStep(ctx, cur, message);
    out.steps.push(step.text);
    if (step.dropped) out.dropped = step.dropped;
    const next = step.done ? null : await currentOperation(ctx);
    if (!next) {
      out.done = true;
      out.labels = null;
      await clearRecord(ctx);
      return out;
    }
    cur = next;
    message = undefined;
  }
  throw new ToolError("GIT_FAILED", `The ${cur.op} stopped more than ${MAX_STOPS} times; finish it with git_conflicts and git_conflict_finalize.`);
}

/** The step that finishes (or moves on) an operation whose conflicts are all settled and staged. */
export async function continueStep(ctx: GitStep, cur: InProgress, message?: string): Promise<{ done: boolean; text: string; dropped?: Backup }> {
  switch (cur.op) {
    case "merge": {
      // git's message lists the conflicts as comment lines; strip them, as a clean merge's message has none.
      const args = message ? ["commit", "--quiet", "--no-edit", "-m", message] : ["commit", "--quiet", "--no-edit", "--cleanup=strip"];
      const r = await git(ctx, args, { ok: "any", timeoutMs: 600_000 });
      if (r.code !== 0) {
        const after = "The merge is still in progress, its conflicts resolved and staged; fix what it reports, then git_conflict_finalize again.";
        // git's own refusals start with fatal:; anything else with a commit hook in place is that hook's refusal.
        const hooks = /^fatal: /m.test(r.stderr) ? [] : (await plannedHooks(ctx, COMMIT_REFUSERS)).map((h) => h.hook);
        throw stepFailed(hooks.length ? `the merge commit (refused by the ${hooks.join(" or ")} hook)` : "the merge commit", r, after, hooks);
      }
      const sha = (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
      return { done: true, text: `committed the merge: ${sha.slice(0, 7)}` };
    }
    case "rebase":
    case "cherry-pick":
    case "revert": {
      const r = await git(ctx, [cur.op, "--continue"], { ok: "any", timeoutMs: 600_000 });
      const still = await currentOperation(ctx);
      if (r.code === 0 && !still)
        return {
          done: true,
          text: `${cur.op === "rebase" ? "replayed the rest of the rebase" : `finished the ${cur.op}`}: now at ${(await head(ctx)).slice(0, 7)}`,
        };
      if (still && (await unmergedPaths(ctx)).length) return { done: false, text: `${cur.op} --continue stopped again on conflicts` };
      if (r.code === 0) return { done: false, text: `${cur.op} --continue went on` };
      throw stepFailed(`git ${cur.op} --continue`, r, `The ${cur.op} is still in progress; git_conflicts shows where it is.`);
    }
    default:
      return finishStash(ctx, cur);
  }
}

/** The commit hooks that can refuse a commit (githooks(5)); post-commit runs after it is made. */
const COMMIT_REFUSERS = ["pre-commit", "prepare-commit-msg", "commit-msg"];

function stepFailed(what: string, r: { code: number | null; stdout: string; stderr: string }, after: string, hooks: string[] = []): ToolError {
  const output = `${r.stdout}${r.stderr}`.trim().slice(-4000);
  const code = hooks.length || /hook/i.test(output) ? "HOOK_FAILED" : "GIT_FAILED";
  return new ToolError(code, `${what} failed (exit ${r.code}): ${output || "no output"} ${after}`, {
    exit_code: r.code,
    output,
    ...(hooks.length ? { hook: hooks.join(" or ") } : {}),
  });
}

async function head(ctx: GitCtx): Promise<string> {
  return (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
}

/**
 * A stash apply is done when its conflicts are: the index is shaped as a clean `git stash apply` leaves it (the files it
 * changed unstaged again, new files staged), and a pop drops the stash, saved to a backup ref first.
 */
async function finishStash(ctx: GitStep, cur: InProgress): Promise<{ done: boolean; text: string; dropped?: Backup }> {
  const rec = cur.record;
  if (!rec) return { done: true, text: "the stash apply is done (its files stay staged: it was started outside tool-layer)" };
  const changed = (await git(ctx, ["diff", "--cached", "--name-only", "-z", "--no-renames", rec.before.index_tree])).stdout.split("\0").filter(Boolean);
  const before = new Set((await git(ctx, ["ls-tree", "-r", "-z", "--name-only", rec.before.index_tree])).stdout.split("\0").filter(Boolean));
  const unstage = changed.filter((p) => before.has(p));
  if (unstage.length) await git(ctx, ["reset", "-q", rec.before.index_tree, "--", ...unstage.map(pathspec)]);
  let dropped: Backup | undefined;
  if (rec.stash?.action === "pop") {
    const list = (await git(ctx, ["stash", "list", "--format=%gd %H"])).stdout.split("\n").filter(Boolean);
    const entry = list.map((l) => l.split(" ")).find(([, sha]) => sha === rec.stash!.commit);
    if (entry) {
      dropped = await saveRef(ctx, "stash-drop", rec.stash.commit, "worktree");
      await git(ctx, ["stash", "drop", "--quiet", entry[0]]);
    }
  }
  return {
    done: true,
    text: `the ${rec.stash?.action ?? "apply"} of ${rec.stash?.name ?? "the stash"} is done${dropped ? `; the stash was dropped (saved as ${dropped.ref})` : ""}`,
    dropped,
  };
}

/** What a finished or stopped run says about the blocks auto-resolution settled; word merges stand out. */
export function settledText(settled: SettledBlock[]): string {
  if (!settled.length) return "";
  const lines = [`auto-resolution settled ${settled.length} block${settled.length === 1 ? "" : "s"}:`];
  for (const b of settled) {
    const where = b.lines ? `lines ${b.lines[0]}-${b.lines[1]}` : `after line ${b.after} (no lines)`;
    lines.push(`  ${b.path} ${where}${b.commit ? ` (replaying ${b.commit})` : ""}: ${autoLabel(b.rule)}${b.taken ? `, took ${b.taken}` : ""}`);
    lines.push(...b.result.map((l) => `    ${l}`));
  }
  const words = settled.filter((b) => b.rule === "words").length;
  if (words)
    lines.push(`${words} of them ${words === 1 ? "is a word merge" : "are word merges"}: read ${words === 1 ? "it" : "them"} before you build on the result.`);
  return lines.join("\n");
}

/** A conflict report in a message is cut here: git_conflicts pages the rest. */
const MAX_REPORT_CHARS = 30_000;

/** The answer of an operation that stopped with blocks left for a person: CONFLICT, block by block. */
export function stoppedError(outcome: RunOutcome, what: string, backup: Backup | null): ToolError {
  const blocks = outcome.left.reduce((n, f) => n + (f.kind === "text" ? f.blocks.length : 1), 0);
  const files = outcome.left.map((f) => f.path);
  const abort = outcome.op === "rebase" ? `git_rebase {action:"abort"}` : `git_merge {abort:true}`;
  const words = outcome.settled.filter((b) => b.rule === "words").length;
  const head = !blocks
    ? `The ${what} stopped before its next step (${nextWord(outcome.op)}): auto-resolution settled every block, ${words} of them by word merge${words === 1 ? "" : "s"} in ${outcome.review.join(", ")} (listed below), which ${words === 1 ? "is" : "are"} right most of the time, not always. Read ${words === 1 ? "it" : "them"}; then git_conflict_finalize goes on (it stages ${outcome.review.length === 1 ? "that file" : "those files"} as they are then: edit first if a merge is wrong), or abandon it all with ${abort}.`
    : `The ${what} stopped on conflicts: ${blocks} block${blocks === 1 ? "" : "s"} in ${files.join(", ")} ${blocks === 1 ? "needs" : "need"} you${
        outcome.settled.length ? ` (auto-resolution settled ${outcome.settled.length}, listed below)` : ""
      }. Resolve each with git_conflict_resolve {path, hash, block, take | keep} (whole-file conflicts with take alone), then git_conflict_finalize; or abandon it all with ${abort}.`;
  const parts = [head];
  if (outcome.labels) parts.push(`ours = ${outcome.labels.ours_label}\ntheirs = ${outcome.labels.theirs_label}`);
  if (outcome.steps.length) parts.push(outcome.steps.join("\n"));
  const settled = settledText(outcome.settled);
  if (settled) parts.push(settled);
  parts.push(outcome.left.map((f) => fileViewText(f)).join("\n"));
  let message = parts.join("\n");
  if (message.length > MAX_REPORT_CHARS)
    message = `${message.slice(0, message.lastIndexOf("\n", MAX_REPORT_CHARS))}\n… [cut; git_conflicts {path} lists every block]`;
  return new ToolError("CONFLICT", message, {
    files,
    in_progress: outcome.op,
    ...(outcome.labels ? { ours_label: outcome.labels.ours_label, theirs_label: outcome.labels.theirs_label } : {}),
    auto_resolved: outcome.settled,
    conflicts: outcome.left,
    review: outcome.review,
    staged: outcome.staged,
    steps: outcome.steps,
    ...(outcome.dropped ? { dropped: outcome.dropped } : {}),
    backup,
  });
}

/** The step a stop before it holds back, in words. */
function nextWord(op: ConflictOp): string {
  return op === "merge" ? "the merge commit" : op === "stash" ? "finishing the stash apply" : `${op} --continue`;
}

/** What finishing would do next, for a preview: the merge message, or how many commits a rebase has left. */
export async function nextStepText(cur: InProgress, message?: string): Promise<string> {
  const read = (f: string) => readFile(path.join(cur.gitDir, f), "utf8").catch(() => "");
  switch (cur.op) {
    case "merge": {
      // The message the commit will have: the caller's when given, else git's (its comment lines stripped).
      if (message !== undefined) return `commit the merge (${operationName(cur)}) with the message ${JSON.stringify(message)}`;
      const msg = (await read("MERGE_MSG")).split("\n").filter((l) => l && !l.startsWith("#"))[0] ?? "";
      return `commit the merge (${operationName(cur)})${msg ? ` with git's message "${msg}"` : ""}`;
    }
    case "rebase": {
      const todo = (await read("rebase-merge/git-rebase-todo")).split("\n").filter((l) => l.trim() && !l.startsWith("#")).length;
      return `git rebase --continue: commit this step, then replay ${todo} more commit${todo === 1 ? "" : "s"} (each may stop on conflicts; auto-resolution runs at every stop)`;
    }
    case "cherry-pick":
    case "revert":
      return `git ${cur.op} --continue: commit this step, then go on with any commits left in the sequence`;
    default:
      return cur.record?.stash?.action === "pop"
        ? `finish the pop of ${cur.record.stash.name}: unstage its changes as a clean pop leaves them, and drop the stash (saved to a backup ref first)`
        : "finish the stash apply: unstage its changes as a clean apply leaves them";
  }
}
