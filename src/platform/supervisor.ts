import { type ChildProcess, type ChildProcessByStdio, spawn, spawnSync } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { CgroupTree, type Leaf, type RunSync } from "./cgroup-tree.js";
import { type Env, childEnv } from "./child-env.js";
import { groupAlive, isAlive, processTree } from "./process-tree.js";

/**
 * Short-lived children (git, rg, gh) running at once; the rest wait in a queue. A burst of 3,000 git_status calls
 * started 2,997 processes at once, half of them timed out and a file_read meanwhile took 2 s; on a 2-core machine eight
 * keep the cores busy (git status runs threads of its own) without starving the event loop.
 */
export const MAX_CONCURRENT = 8;
/** A short-lived child with no bound of its own is killed after this: no git or rg command we run should take longer. */
export const DEFAULT_CHILD_TIMEOUT_MS = 60_000;
/** Output kept per stream by run(); beyond it the rest is drained and dropped, so a huge log cannot exhaust memory. */
export const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
/** After SIGTERM, this long to exit before SIGKILL: git removes its lock files (index.lock) on SIGTERM, never on SIGKILL. */
export const KILL_GRACE_MS = 2_000;
/** A stopped child's processes are checked this often until gone: SIGKILL is delivered, not awaited, and no event says so. */
const GONE_POLL_MS = 10;
/**
 * After the kill, this long at most for a stopped child's tree to be gone: SIGKILL takes milliseconds, a large tsserver's
 * teardown some more on a loaded machine. One still there left the group with setsid() where no cgroup holds it
 * (containment by process group only): nothing the supervisor has can end it, so the stop ends without it and says
 * which (Stopped.left); the final sweep and the watchdog do the rest.
 */
export const GONE_WAIT_MS = 5_000;

export interface ProcessSpec {
  cmd: string;
  args: readonly string[];
  cwd: string;
  /** On top of the workspace environment (SPEC 1, childEnv); an undefined value removes a name. */
  env?: Env;
  /** The whole environment, used as it is (the terminal's sandbox builds its own). */
  exactEnv?: Record<string, string>;
  /** "pipe" to write to the child (language and MCP servers, a terminal command's stdin); default closed. */
  stdin?: "ignore" | "pipe";
  /**
   * A descriptor (a terminal command's output pipe) the child gets as both stdout and stderr, so the two arrive in the
   * order written. `child.stdout` and `child.stderr` are then null; the caller closes its copy.
   */
  output?: number;
  /** Descriptors the child gets as 3, 4, … in this order (folders the sandbox binds by descriptor); the caller closes its copies. */
  fds?: readonly number[];
  /** Socket pairs the child gets after `fds` (as 3 + fds.length, …), to talk with it (bwrap's --info-fd and --block-fd);
   * the daemon's ends are `child.stdio[3 + fds.length + i]`. */
  pipes?: number;
  /**
   * Own process group (default), so a kill reaches its children too (hooks, ssh, a test runner); a long-lived one also
   * gets its own cgroup (cgroup-tree.ts), so what leaves the group with setsid() is still reached. Node makes a group only
   * with setsid(), which on Linux also starts a scheduler autogroup: on a busy machine that group gets one share of the
   * CPU, which halved the speed of git status's parallel lstat threads. Commands that start no children opt out.
   */
  group?: boolean;
  /**
   * It runs in a PID namespace of its own that ends with it (bubblewrap's): that already takes along whatever it
   * started, so a long-lived one needs no cgroup of its own (whose move costs its start a grace period of RCU).
   */
  isolated?: boolean;
  /** What `info` and logs call it. */
  label?: string;
}

export interface LimitOptions {
  signal?: AbortSignal;
  /** Killed (whole group) after this; counts from the start, not from the wait in the queue. */
  timeoutMs?: number;
}

export interface RunOptions extends LimitOptions {
  maxBytes?: number;
  /** Written to stdin, which is then closed. */
  input?: string | Buffer;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout or stderr went over the cap and was cut. */
  truncated: boolean;
  timedOut: boolean;
}

export interface BytesResult extends Omit<RunResult, "stdout" | "stderr"> {
  stdout: Buffer;
  stderr: Buffer;
}

export type PipedChild = ChildProcessByStdio<Writable | null, Readable, Readable>;
/** A child with all three streams piped (a language or MCP server the caller talks to). */
export type ServerChild = ChildProcessByStdio<Writable, Readable, Readable>;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StopOptions {
  /** Between SIGTERM and SIGKILL (default KILL_GRACE_MS); 0 is SIGKILL at once, with no SIGTERM before. */
  graceMs?: number;
  /**
   * A polite request to end (a language server's shutdown and exit), made in SIGTERM's place: SIGKILL follows once
   * `graceMs` passed since the ask began, unless the child exited by then (an ask that settles at once, such as closing
   * stdin, no longer races its SIGKILL against the child's own exit). The tree is seen before it, so what the child leaves
   * on a clean exit is still waited for.
   */
  ask?: () => Promise<unknown>;
}

/** How a stop ended: the child's exit, and the pids of its tree still running GONE_WAIT_MS after the kill. */
export interface Stopped extends Exit {
  left: number[];
}

/** A child the supervisor owns: killed whole on timeout, abort, stop() or daemon shutdown. */
export interface ManagedChild {
  readonly child: PipedChild;
  readonly pid: number;
  readonly label: string;
  /** It leads a process group of its own (ProcessSpec.group), so a kill reaches the whole group. */
  readonly group: boolean;
  /** Settles when the process has exited and its streams closed. */
  readonly exited: Promise<Exit>;
  readonly timedOut: boolean;
  /**
   * The one way to end a child: SIGTERM to its whole group (or to the child alone), then SIGKILL to the group, its
   * cgroup and the child after `graceMs`, whatever the child did meanwhile. Resolves with how it exited once nothing
   * of its tree is left: not the child, not what it had started by then (a sandbox's PID namespace included), not a
   * process of its group or cgroup, or GONE_WAIT_MS passed (then `left` names what still runs). A child that already
   * exited is not signalled.
   */
  stop(opts?: StopOptions): Promise<Stopped>;
}

/** A long-lived child handed over at once (attach): it may never have started, and then says so by its 'error' event. */
export interface AttachedChild {
  readonly child: ServerChild;
  /** ManagedChild.stop, resolved with Stopped.left; at once, with none, for a child that never started. */
  stop(opts?: StopOptions): Promise<number[]>;
}

/** What the supervisor keeps of a live child: the child, and how to end it without waiting (timeouts, shutdown). */
interface Live {
  managed: ManagedChild;
  terminate(graceMs: number): void;
}

interface Slot {
  start: () => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
}

/** The waits for a pool slot of one call (its signal): how many now, since when, and the time waited before. */
interface Waits {
  now: number;
  since: number;
  before: number;
}

/**
 * The one owner of every child process: each is started here, in its own process group, inside the supervisor's cgroup
 * tree, with the workspace environment, a timeout, and a watchdog process that kills it (and the tree) if the daemon
 * dies without cleaning up (SIGKILL).
 * Short-lived children go through a bounded pool; long-lived ones (language servers, MCP servers, background jobs) do not.
 */
export class Supervisor {
  private readonly live = new Map<number, Live>();
  private readonly queue: Slot[] = [];
  private running = 0;
  /** The most short-lived children that ever ran at once (for info, and to show the pool's bound holds). */
  private peak = 0;
  private started = 0;
  /** Processes started so far by label (`git status`...): what a call costs in processes, for info and tests. */
  private readonly startedBy = new Map<string, number>();
  private readonly waits = new WeakMap<AbortSignal, Waits>();
  private watchdog?: ChildProcess & { stdin: Writable };
  private closed = false;
  /** Where the children that may start children of their own are contained (or why they cannot be). */
  private readonly cgroups: CgroupTree;

  constructor(
    private readonly maxConcurrent = MAX_CONCURRENT,
    private readonly log: (message: string) => void = () => undefined,
  ) {
    this.cgroups = new CgroupTree(log, undefined, runSync);
  }

  /**
   * Starts the watchdog and moves the daemon into its cgroup tree; until then, children are still killed by stop(),
   * just not after a SIGKILL of the daemon, and only long-lived ones are in the tree.
   */
  startWatchdog(): void {
    if (this.watchdog || this.closed) return;
    const script = fileURLToPath(new URL("./watchdog.js", import.meta.url));
    const tree = this.cgroups.dir ? ["--cgroup", this.cgroups.dir] : [];
    const dog = spawn(process.execPath, [script, ...tree], { detached: true, stdio: ["pipe", "ignore", "inherit"] });
    // After the watchdog, which must stay outside the tree it kills: from here every child is born in the tree.
    this.cgroups.enter();
    dog.on("error", (e) => this.log(`the child-process watchdog failed to start: ${e.message}`));
    dog.stdin.on("error", () => undefined); // it died: children are still killed by stop()
    dog.unref();
    this.watchdog = dog as ChildProcess & { stdin: Writable };
    for (const { managed: c } of this.live.values()) this.tell(`+${c.group ? "g" : "p"} ${c.pid}`);
  }

  /** Runs a short-lived command to its end (through the pool) and returns its capped output. */
  async run(spec: ProcessSpec, opts: RunOptions = {}): Promise<RunResult> {
    const r = await this.runBytes(spec, opts);
    return { ...r, stdout: r.stdout.toString("utf8"), stderr: r.stderr.toString("utf8") };
  }

  /** run(), with stdout and stderr as the bytes the command wrote (git objects, whose sizes are in bytes). */
  async runBytes(spec: ProcessSpec, opts: RunOptions = {}): Promise<BytesResult> {
    const maxBytes = opts.maxBytes ?? MAX_OUTPUT_BYTES;
    const managed = await this.spawn({ ...spec, stdin: opts.input !== undefined ? "pipe" : spec.stdin }, opts);
    const { child } = managed;
    if (opts.input !== undefined) {
      child.stdin!.on("error", () => undefined); // a child that exits without reading
      child.stdin!.end(opts.input);
    }
    const out = collect(child.stdout, maxBytes);
    const err = collect(child.stderr, maxBytes);
    const { code, signal } = await managed.exited;
    opts.signal?.throwIfAborted();
    return { code, signal, stdout: out.bytes(), stderr: err.bytes(), truncated: out.truncated || err.truncated, timedOut: managed.timedOut };
  }

  /**
   * Starts a short-lived child once a pool slot is free; the slot is held until it exits. Rejects if the signal aborts
   * while it waits, or if the command cannot start (ENOENT...).
   */
  async spawn(spec: ProcessSpec, opts: LimitOptions = {}): Promise<ManagedChild> {
    await this.slot(opts.signal);
    try {
      const managed = await this.start(spec, opts.timeoutMs ?? DEFAULT_CHILD_TIMEOUT_MS, opts.signal);
      void managed.exited.finally(() => this.release());
      return managed;
    } catch (e) {
      this.release();
      throw e;
    }
  }

  /**
   * Starts a child outside the pool: it runs until stop(), the daemon's shutdown, or the timeout and signal when given
   * (a terminal command, which may run for minutes and must not hold a slot git needs).
   */
  spawnLong(spec: ProcessSpec, opts: LimitOptions = {}): Promise<ManagedChild> {
    return this.start(spec, opts.timeoutMs, opts.signal, true);
  }

  /**
   * Milliseconds the work of `signal` (a call's) has spent waiting for a pool slot, a wait in progress included: a call's
   * timeout leaves them out, so a burst that queues behind the pool does not spend its callers' timeouts waiting.
   */
  waitedMs(signal: AbortSignal): number {
    const w = this.waits.get(signal);
    if (!w) return 0;
    return w.before + (w.now ? performance.now() - w.since : 0);
  }

  /** What `info` shows. */
  state(): Record<string, unknown> {
    return {
      running: this.live.size,
      pool: { busy: this.running, queued: this.queue.length, max: this.maxConcurrent, peak: this.peak },
      started: this.started,
      started_by: Object.fromEntries(this.startedBy),
      watchdog: this.watchdog ? (this.watchdog.exitCode === null ? "running" : "exited") : "not started",
      containment: this.cgroups.state(),
      children: [...this.live.values()].map(({ managed: c }) => ({ pid: c.pid, label: c.label })),
    };
  }

  /** Kills every child (SIGTERM, then SIGKILL after `graceMs` for what is left) and lets the watchdog go. */
  async stop(graceMs = KILL_GRACE_MS): Promise<void> {
    this.closed = true;
    for (const slot of this.queue.splice(0)) slot.reject(new Error("the daemon is shutting down"));
    const children = [...this.live.values()];
    for (const c of children) c.terminate(graceMs);
    const all = Promise.all(children.map((c) => c.managed.exited.catch(() => undefined)));
    await Promise.race([all, new Promise<void>((resolve) => setTimeout(resolve, graceMs + 200).unref())]);
    await this.cgroups.close(); // what left its group (setsid) and the children that did not exit
    this.watchdog?.stdin.end(); // it kills whatever still runs (a group whose leader exited but members did not)
  }

  private tell(line: string): void {
    if (this.watchdog && !this.watchdog.stdin.destroyed) this.watchdog.stdin.write(`${line}\n`);
  }

  private slot(signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the daemon is shutting down"));
    signal?.throwIfAborted();
    if (this.running < this.maxConcurrent) {
      this.take();
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waited = this.waiting(signal);
      const slot: Slot = {
        signal,
        start: () => {
          signal?.removeEventListener("abort", onAbort);
          waited();
          this.take();
          resolve();
        },
        reject: (e) => {
          signal?.removeEventListener("abort", onAbort);
          waited();
          reject(e);
        },
      };
      const onAbort = () => {
        const i = this.queue.indexOf(slot);
        if (i >= 0) this.queue.splice(i, 1);
        waited();
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(slot);
    });
  }

  /** Counts a wait of `signal`'s call for a slot, from now until the function returned is called. */
  private waiting(signal: AbortSignal | undefined): () => void {
    if (!signal) return () => undefined;
    let w = this.waits.get(signal);
    if (!w) this.waits.set(signal, (w = { now: 0, since: 0, before: 0 }));
    if (w.now++ === 0) w.since = performance.now();
    const waits = w;
    return () => {
      if (--waits.now === 0) waits.before += performance.now() - waits.since;
    };
  }

  private take(): void {
    this.running++;
    this.peak = Math.max(this.peak, this.running);
  }

  private release(): void {
    this.running--;
    const next = this.queue.shift();
    if (next) next.start();
  }

  private start(spec: ProcessSpec, timeoutMs: number | undefined, signal: AbortSignal | undefined, longLived = false): Promise<ManagedChild> {
    if (this.closed) return Promise.reject(new Error("the daemon is shutting down"));
    signal?.throwIfAborted();
    const { child, managed } = this.launch(spec, timeoutMs, signal, longLived);
    if (managed) return Promise.resolve(managed);
    return new Promise((_, reject) => child.once("error", reject)); // it never started (ENOENT, EACCES)
  }

  /**
   * Starts a long-lived child with its stdin piped at once and hands it over, for a caller that drives the process
   * itself (a language server's connection, an MCP client transport). It is owned like any other: killed by the
   * supervisor's stop() and by the watchdog. A failure to start comes as the child's 'error' event.
   */
  attach(spec: ProcessSpec & { stdin: "pipe" }): AttachedChild {
    if (this.closed) throw new Error("the daemon is shutting down");
    const { child, managed } = this.launch(spec, undefined, undefined, true);
    return {
      child: child as ServerChild, // stdin is a pipe: never null
      stop: async (opts) => (managed ? (await managed.stop(opts)).left : []),
    };
  }

  /**
   * Spawns and registers synchronously (the pid is known at once), so no child is ever unknown to the watchdog. A
   * long-lived child with a group gets a cgroup of its own (its start waits for the kernel's move, about a grace period
   * of RCU: nothing for a server, too much for every git call), so what it leaves, setsid() or not, dies when it ends.
   */
  private launch(
    spec: ProcessSpec,
    timeoutMs: number | undefined,
    signal: AbortSignal | undefined,
    longLived: boolean,
  ): { child: PipedChild; managed?: ManagedChild } {
    const group = spec.group ?? true;
    const label = spec.label ?? spec.cmd;
    const env = spec.exactEnv ?? childEnv(spec.env);
    const start = (cmd: string, args: readonly string[]) =>
      spawn(cmd, args, {
        cwd: spec.cwd,
        env,
        stdio: [spec.stdin ?? "ignore", spec.output ?? "pipe", spec.output ?? "pipe", ...(spec.fds ?? []), ...Array<"pipe">(spec.pipes ?? 0).fill("pipe")],
        detached: group,
      }) as PipedChild;
    // setsid() leaves a process group, never a cgroup.
    const { value: child, leaf } =
      group && longLived && !spec.isolated ? this.cgroups.start(spec.cmd, spec.args, env, spec.cwd, start) : { value: start(spec.cmd, spec.args) };
    const pid = child.pid;
    if (pid === undefined && leaf) void this.cgroups.release(leaf);
    // Kept for the child's life: a later 'error' (a kill that fails) must not be an unhandled event.
    child.on("error", (e) => {
      if (pid !== undefined) this.log(`${label}: ${e.message}`);
    });
    if (pid === undefined) return { child };
    this.started++;
    this.startedBy.set(label, (this.startedBy.get(label) ?? 0) + 1);
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    let closed = false;
    /** The leaf's release once the child closed: its leftovers killed and gone. */
    let released: Promise<void> = Promise.resolve();
    const terminate = (graceMs: number) => killTree(child, group, leaf, graceMs, () => closed);
    const onAbort = () => terminate(KILL_GRACE_MS);
    const exited = new Promise<Exit>((done) => {
      child.once("close", (code, sig) => {
        closed = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.live.delete(pid);
        // What the command left in its group (a hook's `sleep &`) or its cgroup (`setsid sleep &`) dies with it; the
        // watchdog then forgets it.
        if (group) signalGroup(pid, "SIGKILL");
        if (leaf) released = this.cgroups.release(leaf);
        this.tell(`- ${pid}`);
        done({ code, signal: sig });
      });
    });
    const stop = async ({ graceMs = KILL_GRACE_MS, ask }: StopOptions = {}): Promise<Stopped> => {
      // What it has started by now, seen before anything is signalled: once the child is gone its children are no
      // longer found under it (a sandbox's namespace, whose init leaves the group with bwrap's --new-session).
      const tree = group && !closed ? processTree(pid) : [];
      if (ask && !closed) {
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
        await Promise.race([ask().catch(() => undefined), exited, grace]);
        await Promise.race([exited, grace]); // asked: the rest of the grace to end as it chose, then SIGKILL
        clearTimeout(timer);
        terminate(0);
      } else {
        terminate(graceMs);
      }
      const exit = await exited;
      await released; // the cgroup's leftovers: killed and gone
      const deadline = Date.now() + GONE_WAIT_MS;
      const running = () => tree.some(isAlive) || (group && !leaf && groupAlive(pid));
      while (running() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, GONE_POLL_MS));
      return { ...exit, left: tree.filter(isAlive) };
    };
    const managed: ManagedChild = {
      child,
      pid,
      exited,
      stop,
      label,
      group,
      get timedOut() {
        return timedOut;
      },
    };
    this.live.set(pid, { managed, terminate });
    this.tell(`+${group ? "g" : "p"} ${pid}`);
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        timedOut = true;
        terminate(KILL_GRACE_MS);
      }, timeoutMs);
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) terminate(KILL_GRACE_MS);
    return { child, managed };
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // the group is gone
  }
}

/**
 * SIGTERM to the child's group (or to the child), SIGKILL after `graceMs` (at once when 0), whatever the leader did
 * meanwhile; the SIGKILL reaches its cgroup too, so what left the group with setsid() goes as well. Nothing once the
 * child has `closed`: its close killed what was left, and its pid and its emptied cgroup may be another child's by then.
 */
function killTree(child: PipedChild, group: boolean, leaf: Leaf | undefined, graceMs: number, closed: () => boolean): void {
  const pid = child.pid;
  if (pid === undefined || closed()) return;
  const alive = () => child.exitCode === null && child.signalCode === null;
  const kill = () => {
    if (closed()) return;
    // The group may outlive its leader (a grandchild ignoring TERM): kill it whatever the leader did.
    if (group) signalGroup(pid, "SIGKILL");
    leaf?.kill();
    if (alive()) child.kill("SIGKILL");
  };
  if (graceMs <= 0) return kill();
  if (group) {
    if (!signalGroup(pid, "SIGTERM") && alive()) child.kill("SIGTERM");
  } else if (alive()) {
    child.kill("SIGTERM");
  }
  setTimeout(kill, graceMs).unref();
}

/** The cgroup tree's check of what /bin/sh passes on (a synchronous run, before the first contained child). */
const runSync: RunSync = (cmd, args, env) => {
  const r = spawnSync(cmd, args, { env, encoding: "utf8", timeout: 5_000 });
  return { status: r.status, stdout: r.stdout ?? "" };
};

/** Collects a stream up to `maxBytes`, draining and dropping the rest (none when the output went to a descriptor). */
function collect(stream: Readable | null, maxBytes: number): { bytes: () => Buffer; truncated: boolean } {
  const chunks: Buffer[] = [];
  let bytes = 0;
  const state = {
    truncated: false,
    bytes: () => Buffer.concat(chunks).subarray(0, maxBytes),
  };
  stream?.on("data", (d: Buffer) => {
    if (bytes < maxBytes) chunks.push(d);
    else state.truncated = true;
    bytes += d.length;
    if (bytes > maxBytes) state.truncated = true;
  });
  return state;
}
