import { type ChildProcess, spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { ToolError, isNodeError } from "../errors.js";

/** Output kept per stream; beyond it the rest is drained and dropped, so a huge log cannot exhaust the daemon's memory. */
export const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
/** A git call with no bound of its own is killed after this: no git command we run should take longer on a sane repository. */
export const DEFAULT_PROCESS_TIMEOUT_MS = 60_000;

export interface RunOptions {
  cwd: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  maxBytes?: number;
  /**
   * Run in a process group of its own (default), so a kill reaches its children too (hooks, ssh, a test runner).
   * Node makes a group only with setsid(), which on Linux also starts a new scheduler autogroup: on a busy machine that
   * group gets one share of CPU, which halved the speed of git status's parallel lstat threads. Local git commands that
   * start no children opt out.
   */
  group?: boolean;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout or stderr went over the cap and was cut. */
  truncated: boolean;
  timedOut: boolean;
}

/** Children still running, so the daemon's shutdown can kill their process groups. */
const live = new Set<ChildProcess>();
/** The children that lead a process group of their own. */
const groups = new WeakSet<ChildProcess>();

export function killAllChildren(): void {
  for (const child of live) killGroup(child);
}

/** After SIGTERM, this long to exit before SIGKILL: git removes its lock files (index.lock) on SIGTERM, never on SIGKILL. */
export const KILL_GRACE_MS = 2_000;

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal); // the whole group: git's own children (ssh, hooks, credential helpers) too
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

function killGroup(child: ChildProcess): void {
  if (!groups.has(child)) {
    child.kill("SIGTERM");
    setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"), KILL_GRACE_MS).unref();
    return;
  }
  signalGroup(child, "SIGTERM");
  setTimeout(() => {
    // The group may outlive its leader (a hook's grandchild ignoring TERM): kill it whatever the leader did.
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        /* the group is gone */
      }
    }
  }, KILL_GRACE_MS).unref();
}

/** A signal that never aborts. */
const NEVER = new AbortController().signal;

/** A context whose signal never aborts, for the step inside ctx.commit: once git started changing refs it must finish. */
export function steady<T extends { signal?: AbortSignal }>(ctx: T): T {
  return { ...ctx, signal: NEVER };
}

/**
 * Runs `cmd` with an argument array (never a shell), stdin closed, in its own process group that a timeout or an abort
 * kills whole. Resolves with the exit code and capped output; rejects only when the command cannot start (ENOENT)
 * or the signal aborted (with the signal's reason, so the dispatcher answers CANCELLED/TIMEOUT).
 */
export function runProcess(cmd: string, args: readonly string[], opts: RunOptions): Promise<RunResult> {
  const maxBytes = opts.maxBytes ?? MAX_OUTPUT_BYTES;
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(opts.signal.reason);
    const group = opts.group ?? true;
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["ignore", "pipe", "pipe"], detached: group });
    live.add(child);
    if (group) groups.add(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let truncated = false;
    let timedOut = false;
    child.stdout!.on("data", (d: Buffer) => {
      if (outBytes < maxBytes) out.push(d);
      else truncated = true;
      outBytes += d.length;
    });
    child.stderr!.on("data", (d: Buffer) => {
      if (errBytes < maxBytes) err.push(d);
      else truncated = true;
      errBytes += d.length;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, opts.timeoutMs ?? DEFAULT_PROCESS_TIMEOUT_MS);
    const onAbort = () => killGroup(child);
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      live.delete(child);
    };
    child.on("error", (e) => {
      done();
      reject(e);
    });
    child.on("close", (code) => {
      done();
      if (opts.signal?.aborted) return reject(opts.signal.reason);
      const stdout = Buffer.concat(out);
      const stderr = Buffer.concat(err);
      if (stdout.length > maxBytes || stderr.length > maxBytes) truncated = true;
      resolve({
        code,
        stdout: stdout.subarray(0, maxBytes).toString("utf8"),
        stderr: stderr.subarray(0, maxBytes).toString("utf8"),
        truncated,
        timedOut,
      });
    });
  });
}

/** The environment of every git process: nothing may prompt, page or open an editor, and the caller's GIT_DIR cannot leak in. */
export function gitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_TERMINAL_PROMPT: "0",
    GIT_EDITOR: ":",
    GIT_SEQUENCE_EDITOR: ":",
    GIT_MERGE_AUTOEDIT: "no",
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_SSH_COMMAND: "ssh -o BatchMode=yes",
    GCM_INTERACTIVE: "never",
    LC_ALL: "C",
  };
  for (const k of ["GIT_ASKPASS", "SSH_ASKPASS", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX"]) delete env[k];
  return { ...env, ...extra };
}

/** Config every call gets: no askpass from the repo's config, no colour, paths printed as they are. */
const GIT_CONFIG = ["-c", "core.askPass=", "-c", "color.ui=false", "-c", "core.quotePath=false", "-c", "advice.detachedHead=false"];

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
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface GitCtx {
  ws: { root: string };
  signal?: AbortSignal;
}

/** Runs git in the workspace root; a failure is a ToolError whose message carries git's own words. */
export async function git(ctx: GitCtx, args: readonly string[], opts: GitCallOptions = {}): Promise<RunResult> {
  let r: RunResult;
  try {
    const group = !CHILDLESS_COMMANDS.has(args[0]);
    r = await runProcess("git", [...GIT_CONFIG, ...args], { cwd: opts.cwd ?? ctx.ws.root, signal: ctx.signal, timeoutMs: opts.timeoutMs, env: gitEnv(opts.env), group, maxBytes: opts.maxBytes });
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
