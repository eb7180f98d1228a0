import { stat } from "node:fs/promises";
import { ToolError, isNodeError } from "../errors.js";
import type { Env } from "../platform/child-env.js";
import { DEFAULT_CHILD_TIMEOUT_MS, type ProcessSpec, type RunOptions, type RunResult, type Supervisor } from "../platform/supervisor.js";

export type { RunResult };

/** Network operations get longer than local ones, but a dead remote must not hold a call for minutes. */
export const NETWORK_TIMEOUT_MS = 120_000;

/** A signal that never aborts. */
const NEVER = new AbortController().signal;

/** A context whose signal never aborts, for the step inside ctx.commit: once git started changing refs it must finish. */
export function steady<T extends { signal?: AbortSignal }>(ctx: T): T {
  return { ...ctx, signal: NEVER };
}

/**
 * What every call gets. No askpass from the repo's config, no colour, paths printed as they are. No fsmonitor:
 * `core.fsmonitor` names a command, and a repository's config (a nested one's too: git passes `-c` on to the git it
 * runs inside a submodule) must not make git run it. No optional locks: a read-only status must not rewrite
 * `.git/index` (a stat refresh under index.lock; `git diff` ignores this, see temp-index.ts). No auto maintenance after commits, merges and fetches: it can take
 * minutes inside a call, runs a pre-auto-gc hook no preview listed, and a detached gc escapes the supervisor that must
 * own every child (SPEC 1). Porcelain that looks into submodules (status, checkout's report) stays out of
 * their worktrees; status and diff also get `--ignore-submodules=dirty` (NO_SUBMODULE_WORKTREES), which .gitmodules
 * cannot override as it can these settings.
 */
const GIT_CONFIG = [
  "--no-optional-locks",
  "-c",
  "core.askPass=",
  "-c",
  "color.ui=false",
  "-c",
  "core.quotePath=false",
  "-c",
  "advice.detachedHead=false",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "maintenance.auto=false",
  "-c",
  "diff.ignoreSubmodules=dirty",
  "-c",
  "status.submoduleSummary=false",
  "-c",
  "submodule.recurse=false",
];

/**
 * For `git status` and `git diff` against the worktree: a submodule's (or an embedded repository's) worktree is not
 * examined, only where its HEAD is. Looking inside means running `git status` in it, under its own configuration (its
 * filters, its attributes), which is not the root's to trust. A moved submodule HEAD is still reported.
 */
export const NO_SUBMODULE_WORKTREES = "--ignore-submodules=dirty";

/**
 * A dry run runs no hook, whatever git command it uses (SPEC 2): hooks are looked for in a folder that cannot hold any.
 * Finding the hooks an approved call would run (hooks.ts) opts out with `hooks: "repo"`.
 */
const NO_HOOKS = ["-c", "core.hooksPath=/dev/null"];

/**
 * git commands that only read or write the object store and start no child process: they run without a process group
 * of their own (see RunOptions.group). Everything else (hooks, remotes, merges that may run drivers) gets one;
 * update-ref too, since it runs the reference-transaction hook.
 */
const CHILDLESS_COMMANDS = new Set([
  "status",
  "diff",
  "log",
  "show",
  "rev-parse",
  "rev-list",
  "for-each-ref",
  "cat-file",
  "ls-files",
  "symbolic-ref",
  "config",
  "merge-tree",
  "commit-tree",
  "remote",
  "check-ref-format",
  "read-tree",
  "ls-tree",
  "write-tree",
]);

export interface GitCallOptions {
  /** Exit codes that are answers, not failures (e.g. 1 for `merge-tree` with conflicts). */
  ok?: number[] | "any";
  timeoutMs?: number;
  /** Output kept per stream (default MAX_OUTPUT_BYTES). */
  maxBytes?: number;
  env?: Env;
  cwd?: string;
  /** Written to git's stdin (then closed): path lists for `--stdin`. */
  input?: string;
  /** More `-c name=value` pairs, before the command. */
  config?: readonly string[];
  /** "repo": the repository's hooks are visible even in a dry run (only to find them, never to run them). */
  hooks?: "repo";
}

/** Where git runs: the workspace root, and the supervisor that owns every child (a GitRepo is one). */
export interface GitHost {
  readonly root: string;
  readonly processes: Pick<Supervisor, "run" | "runBytes">;
}

/** What a git command runs with: its repository, the call's signal, and the environment every git it starts gets. */
export interface GitCtx {
  repo: GitHost;
  signal?: AbortSignal;
  /** A dry run: git runs with no hooks at all. */
  dryRun?: boolean;
  /**
   * Set for every git command of this context, and so for the hooks git runs: withTempIndex's GIT_INDEX_FILE. A
   * command's own `env` wins over it.
   */
  env?: Env;
}

/** The process git() starts for `args`: the fixed configuration, no hooks in a dry run, the workspace root, the context's environment. */
export function gitSpec(ctx: GitCtx, args: readonly string[], opts: Pick<GitCallOptions, "env" | "cwd" | "config" | "hooks"> = {}): ProcessSpec {
  const group = !CHILDLESS_COMMANDS.has(args[0]);
  const hooks = ctx.dryRun && opts.hooks !== "repo" ? NO_HOOKS : [];
  return {
    cmd: "git",
    args: [...GIT_CONFIG, ...hooks, ...(opts.config ?? []), ...args],
    cwd: opts.cwd ?? ctx.repo.root,
    env: { LC_ALL: "C", ...ctx.env, ...opts.env },
    group,
    label: `git ${args[0]}`,
  };
}

/** Runs git in the workspace root; a failure is a ToolError whose message carries git's own words. */
export function git(ctx: GitCtx, args: readonly string[], opts: GitCallOptions = {}): Promise<RunResult> {
  return exec(ctx, args, opts, (spec, limits) => ctx.repo.processes.run(spec, limits));
}

/** git() with stdout as the bytes git wrote (objects are bytes, and their sizes count bytes) and bytes as input. */
export async function gitBytes(ctx: GitCtx, args: readonly string[], opts: Omit<GitCallOptions, "input"> & { input?: string | Buffer } = {}) {
  const r = await exec(ctx, args, opts, (spec, limits) => ctx.repo.processes.runBytes(spec, limits));
  return { ...r, stderr: r.stderr.toString("utf8") };
}

async function exec<R extends { code: number | null; timedOut: boolean; stdout: string | Buffer; stderr: string | Buffer }>(
  ctx: GitCtx,
  args: readonly string[],
  opts: Omit<GitCallOptions, "input"> & { input?: string | Buffer },
  runner: (spec: ProcessSpec, limits: RunOptions) => Promise<R>,
): Promise<R> {
  let r: R;
  try {
    r = await runner(gitSpec(ctx, args, opts), { signal: ctx.signal, timeoutMs: opts.timeoutMs, maxBytes: opts.maxBytes, input: opts.input });
  } catch (e) {
    if (isNodeError(e, "ENOENT")) {
      // spawn says ENOENT for a missing cwd too: tell the two apart.
      const cwd = opts.cwd ?? ctx.repo.root;
      if (
        !(await stat(cwd).then(
          () => true,
          () => false,
        ))
      )
        throw new ToolError("NOT_FOUND", `The folder ${cwd} no longer exists; the workspace root was removed.`);
      throw new ToolError("TOOL_MISSING", "git is not installed or not on PATH; install git to use the git tools.");
    }
    throw e;
  }
  if (r.timedOut) {
    throw new ToolError(
      "TIMEOUT",
      `git ${args[0]} did not finish within ${opts.timeoutMs ?? DEFAULT_CHILD_TIMEOUT_MS} ms and was killed; check the remote or narrow the request.`,
    );
  }
  if (opts.ok !== "any" && !(opts.ok ?? [0]).includes(r.code ?? -1))
    throw gitFailure(args, { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr.toString() });
  return r;
}

export function gitFailure(args: readonly string[], r: Pick<RunResult, "code" | "stdout" | "stderr">): ToolError {
  const said = (r.stderr.trim() || r.stdout.trim()).slice(-4000);
  if (/not a git repository/i.test(said)) {
    return new ToolError("NOT_A_REPOSITORY", "The workspace root is not inside a git repository; run git_clone, or `git init` it first.");
  }
  return new ToolError("GIT_FAILED", `git ${args[0]} failed (exit ${r.code}): ${said || "no output"}`, { exit_code: r.code, output: said });
}
