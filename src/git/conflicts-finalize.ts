import { ToolError } from "../errors.js";
import { continueStep, nextStepText, settleAndContinue, settledText, stoppedError } from "./conflicts-continue.js";
import { type AutoMode, KIND_TEXT, firstMarkerLeft } from "./conflicts-model.js";
import { type InProgress, clearRecord, currentOperation, operationName } from "./conflicts-operation.js";
import { readConflicts } from "./conflicts-read.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "./hooks.js";
import { type GitStep, commitStep, worktreeStep } from "./step.js";
import { addPaths } from "./stage.js";
import { git } from "./run.js";
import { list } from "./text.js";

/**
 * git_conflict_finalize (and git_rebase {action:"continue"}): refuses while a marker region or an unmerged whole-file
 * conflict is left, else stages the conflicted files and runs the operation's next step, settling and going on where it
 * stops again.
 */
export async function finalizeOperation(ctx: GitStep, cur: InProgress, opts: { message?: string; mode?: AutoMode }): Promise<Record<string, unknown>> {
  if (opts.message && cur.op !== "merge")
    throw new ToolError(
      "INVALID_PARAMS",
      `message: only a merge takes a message; a ${cur.op} keeps the commit's own (change it afterwards with git_commit {amend:true}).`,
    );
  const states = await readConflicts(ctx);
  const problems: string[] = [];
  for (const s of states) {
    if (s.kind !== "text")
      problems.push(`${s.path}: ${KIND_TEXT[s.kind]}, still unmerged (settle it with git_conflict_resolve {path, hash, take} without block)`);
    else if (!s.file) problems.push(`${s.path}: not in the worktree, still unmerged (git_conflict_resolve {path, hash:null, take})`);
    else {
      const at = firstMarkerLeft(s.sm!, s.file.doc.lines, s.attrs.markerSize);
      if (at !== null) problems.push(`${s.path}:${at + 1}: a conflict marker is still there`);
    }
  }
  if (problems.length) {
    throw new ToolError("CONFLICT", `Cannot finalize the ${operationName(cur)} yet: ${problems.join("; ")}. git_conflicts lists what is left.`, { problems });
  }
  const staging = states.map((s) => s.path);
  const hooks = await plannedHooks(ctx, hookNames(cur));
  const step = await nextStepText(cur, opts.message);
  const text = (done: boolean) =>
    [
      list(done ? "staged" : "would stage", staging) || (done ? "" : "nothing to stage"),
      `${done ? "ran" : "then"}: ${step}`,
      hooksText(hooks, done ? "ran" : "would run"),
    ]
      .filter(Boolean)
      .join("\n");
  // The files as they are now (their hashes): an approval covers what is staged, not just which files.
  const shown = { operation: cur.op, staging, hashes: Object.fromEntries(states.map((s) => [s.path, s.hash])), step, hooks };
  if (ctx.dryRun) return { ...shown, text: text(false) };
  const mode = opts.mode ?? cur.record?.auto ?? "all";
  const stageAndStep = async (c: GitStep) => {
    await addPaths(c, staging);
    return continueStep(c, cur, opts.message);
  };
  const finish = async (ctx: GitStep, first: Awaited<ReturnType<typeof continueStep>>) => {
    const next = first.done ? null : await currentOperation(ctx);
    const outcome = next ? await settleAndContinue(ctx, next, mode) : null;
    if (outcome && !outcome.done) {
      outcome.steps.unshift(first.text);
      throw stoppedError(outcome, operationName(cur), cur.record?.backup ?? null);
    }
    if (!next) await clearRecord(ctx);
    const head = (await git(ctx, ["rev-parse", "HEAD"])).stdout.trim();
    const steps = [first.text, ...(outcome?.steps ?? [])];
    const settled = outcome?.settled ?? [];
    const dropped = first.dropped ?? outcome?.dropped;
    const done = [`finished the ${operationName(cur)}: now at ${head.slice(0, 7)}`, text(true), ...steps, settledText(settled)].filter(Boolean).join("\n");
    return { ...shown, head, steps, auto_resolved: settled, ...(dropped ? { dropped } : {}), text: done };
  };
  if (cur.op !== "merge") return worktreeStep(ctx, async (c) => finish(c, await stageAndStep(c)));
  // A merge's commit runs the commit hooks, which may run a test suite for minutes: like git_commit's, it stays
  // cancellable (git gets SIGTERM and writes no commit), and a cancelled one leaves the merge in progress with its
  // resolutions staged, to finalize again. git's other steps (rebase --continue) go on to the end once started.
  return ctx.exclusive(async () => {
    const first = await stageAndStep(ctx);
    return commitStep(ctx, (c) => finish(c, first));
  });
}

/** The hooks finishing may run: a commit's, and for a rebase its own as it replays the rest. */
function hookNames(cur: InProgress): readonly string[] {
  switch (cur.op) {
    case "merge":
    case "cherry-pick":
    case "revert":
      return OPERATION_HOOKS.commit;
    case "rebase":
      return [...OPERATION_HOOKS.commit, ...OPERATION_HOOKS.rebase];
    default:
      return OPERATION_HOOKS.stash;
  }
}
