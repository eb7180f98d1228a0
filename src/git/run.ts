import { stat } from "node:fs/promises";
import { ToolError, isNodeError } from "../errors.js";
import type { Env } from "../platform/child-env.js";
import { DEFAULT_TIMEOUT_MS, type RunResult, type Supervisor } from "../platform/supervisor.js";

export type { RunResult };
/** A git call with no bound of its own is killed after this: no git command we run should take longer on a sane repository. */
export const DEFAULT_PROCESS_TIMEOUT_MS = DEFAULT_TIMEOUT_MS;

/** A signal that never aborts. */
const NEVER = new AbortController().signal;

/** A context whose signal never aborts, for the step inside ctx.commit: once git started changing refs it must finish. */
export function steady<T extends { signal?: AbortSignal }>(ctx: T): T {
  return { ...ctx, signal: NEVER };
}

/**
 * Config every call gets: no askpass from the repo's config, no colour, paths printed as they are, and no fsmonitor:
 * `core.fsmonitor` names a command, and a repository's config (a nested one's too) must not make git run it.
 */
const GIT_CONFIG = ["-c", "core.askPass=", "-c", "color.ui=false", "-c", "core.quotePath=false", "-c", "advice.detachedHead=false", "-c", "core.fsmonitor=false"];

/**
 * git commands that only read or write the object store and start no child process: they run without a process group
 * of their own (see RunOptions.group). Everything else (hooks, remotes, merges that may run drivers) gets one.
 */
const CHILDLESS_COMMANDS = new Set([
  "status", "diff", "log", "show", "rev-parse", "rev-list", "for-each-ref", "cat-file", "ls-files", "symbolic-ref",
  "config", "merge-tree", "commit-tree", "remote", "check-ref-format", "update-ref", "read-tree",
]);

export interface GitCallOptions {
  /** Exit codes that are answers, not failures (e.g. 1 for `merge-tree` with conflicts). */
  ok?: number[] | "any";
  timeoutMs?: number;
  /** Output kept per stream (default MAX_OUTPUT_BYTES). */
  maxBytes?: number;
  env?: Env;
  cwd?: string;
}

export interface GitCtx {
  ws: { root: string; processes: Supervisor };
  signal?: AbortSignal;
}

/** Runs git in the workspace root; a failure is a ToolError whose message carries git's own words. */
export async function git(ctx: GitCtx, args: readonly string[], opts: GitCallOptions = {}): Promise<RunResult> {
  let r: RunResult;
  try {
    const group = !CHILDLESS_COMMANDS.has(args[0]);
    r = await ctx.ws.processes.run(
      { cmd: "git", args: [...GIT_CONFIG, ...args], cwd: opts.cwd ?? ctx.ws.root, env: { LC_ALL: "C", ...opts.env }, group, label: `git ${args[0]}` },
      { signal: ctx.signal, timeoutMs: opts.timeoutMs, maxBytes: opts.maxBytes },
    );
  } catch (e) {
    if (isNodeError(e, "ENOENT")) {
      // spawn says ENOENT for a missing cwd too: tell the two apart.
      const cwd = opts.cwd ?? ctx.ws.root;
      if (!(await stat(cwd).then(() => true, () => false))) throw new ToolError("NOT_FOUND", `The folder ${cwd} no longer exists; the workspace root was removed.`);
      throw new ToolError("TOOL_MISSING", "git is not installed or not on PATH; install git to use the git tools.");
    }
    throw e;
  }
  if (r.timedOut) {
    throw new ToolError("TIMEOUT", `git ${args[0]} did not finish within ${opts.timeoutMs ?? DEFAULT_PROCESS_TIMEOUT_MS} ms and was killed; check the remote or narrow the request.`);
  }
  if (opts.ok !== "any" && !(opts.ok ?? [0]).includes(r.code ?? -1)) throw gitFailure(args, r);
  return r;
}

export function gitFailure(args: readonly string[], r: RunResult): ToolError {
  const said = (r.stderr.trim() || r.stdout.trim()).slice(-4000);
  if (/not a git repository/i.test(said)) {
    return new ToolError("NOT_A_REPOSITORY", "The workspace root is not inside a git repository; run git_clone, or `git init` it first.");
  }
  return new ToolError("GIT_FAILED", `git ${args[0]} failed (exit ${r.code}): ${said || "no output"}`, { exit_code: r.code, output: said });
}
