import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { ToolError } from "../errors.js";
import { FIRST_PIN_FD } from "../platform/sandbox/bwrap-argv.js";
import { openPins } from "../platform/sandbox/host.js";
import { KILL_GRACE_MS, type LimitOptions, type ManagedChild } from "../platform/supervisor.js";
import type { EventBus } from "../platform/bus.js";
import type { FileIndexView } from "../vfs/types.js";
import { CgroupReserve, type CommandCgroup, HELD_PIPES, type Limits, heldBwrapArgv } from "./cgroup-limits.js";
import { GitDirScan } from "./git-dirs.js";
import { type IgnoredChanges, UnwatchedSnapshot, type Watched, filesPerFolder, startStamp } from "./ignored-changes.js";
import { Job, type Launched } from "./jobs.js";
import { FifoPool, PipeCopy, openPipe } from "./output-pipe.js";
import { MAX_FILE_BYTES, OutputStore, closeQuietly, readCapped } from "./output-store.js";
import { type View, bashArgv, buildSandbox, notFoundHint, sandboxEnv, sandboxHome } from "./sandbox.js";
import { type Setup, type SetupHost, prepareSetup } from "./setup.js";
import { checkCommand, shellWriteRefused } from "./shell-parse.js";

/** SPEC 11: a foreground command's default and longest timeout (Claude Code's Bash has the same, which models know). */
export const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
export const MAX_TIMEOUT_MS = 600_000;
/**
 * After a command's exit, this long at most for the end of its output pipe: its sandbox's PID namespace and its process
 * group die with it within milliseconds, closing every copy. A writer holding it past this escaped both (unsandboxed,
 * setsid, no cgroup): the answer does not wait for it, and what it writes later still goes to output_file.
 */
const OUTPUT_DRAIN_MS = 1_000;
/**
 * Call `env` names refused: bash runs code from them (BASH_ENV, PROMPT_COMMAND, exported functions, PS4 under xtrace)
 * or they change how the line is split, so the write check would not see what runs.
 */
const HIDDEN_CODE_VARS = /^(BASH_ENV|ENV|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|PS[0-4]|IFS|BASH_XTRACEFD|BASH_FUNC_.*)$/;

export type SandboxMode = "on" | "off";

export interface TerminalOptions {
  /** `--terminal-network`. */
  network?: boolean;
  /** `--terminal-home DIR`: bound as HOME instead of an empty folder. */
  home?: string;
  /** `--terminal-env NAME`: secrets passed through on purpose. */
  passEnv?: readonly string[];
  /** `--terminal-sandbox off`: run unsandboxed (info says so). */
  sandbox?: SandboxMode;
  /** The daemon's state folder: output files go under it. */
  stateDir: string;
  limits?: Limits;
  /** One command's output beyond this stops it (tests lower it). */
  maxFileBytes?: number;
}

/** What runs: checked, resolved and built, but not started. */
export interface Plan {
  sandboxed: boolean;
  /** The command line the process is started with (`bwrap …`, or `bash …` unsandboxed): shown in the preview. */
  argv: string[];
  /** The whole environment (never shown: it changes with the daemon's). */
  env: Record<string, string>;
  /** Absolute real working directory, and the same relative to the root. */
  cwd: string;
  cwdRel: string;
  /** The simple commands the check found, for the preview. */
  commands: string[];
  stdin?: string;
  /** Folders bwrap binds by descriptor (opened at launch, handed over as 3, 4, …). */
  pins: string[];
  /** What the sandbox's file system shows where (for the hint on a program not found). */
  views: View[];
  /** The unwatched files before the command, to count what it changed there (a terminal_run in the foreground). */
  unwatched?: UnwatchedSnapshot;
}

export interface RunOutcome {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  duration_ms: number;
  /** stdout and stderr as written, escapes removed, cut to MAX_OUTPUT_CHARS as head and tail. */
  output: string;
  truncated: boolean;
  output_file: string;
  output_bytes: number;
  /** Stopped because its output passed MAX_FILE_BYTES. */
  output_limit_hit: boolean;
  /** Launched.changesSince. */
  changesSince: number;
  /** Why a program was not found (exit 127) when the sandbox hides where it is. */
  hint?: string;
}

/** An argv run (a custom check): no shell, no write check, the same sandbox and environment rules. */
export interface ArgvRequest {
  argv: readonly string[];
  /** Inside the root (relative or absolute); default the root. */
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** What the terminal needs from the workspace around it (the Workspace is one; terminal/ never imports it). */
export interface TerminalHost extends SetupHost {
  readonly bus: EventBus;
  /** The VFS's file index, to tell watched files from unwatched ones (undefined before the VFS starts). */
  readonly fileIndex: FileIndexView | undefined;
}

/**
 * The terminal (SPEC 11): checks a command, builds its sandbox and runs it through the process supervisor, with its
 * output in a file, cut for the model, and background jobs that stream. One per daemon.
 */
export class Terminal {
  readonly jobs = new Map<string, Job>();
  readonly store: OutputStore;
  private setup?: Promise<Setup>;
  /** The folders of the VFS's files, per index generation: what counts as watched for UnwatchedSnapshot. */
  private foldersCache?: { generation: number; folders: Map<string, number> };
  private walkTruncatedLogged = false;
  /** The git-dir walk, which keeps each folder's entries while the folder is unchanged. */
  private readonly gitDirScan = new GitDirScan();
  /** Numbers for output files and job ids, per kind. */
  private readonly sequences = { run: 0, job: 0, check: 0 };
  private readonly releases = new Set<Promise<unknown>>();
  /** The next command's cgroups, made ahead once the setup says limits hold. */
  private cgroups?: CgroupReserve;
  private cgroupFailureLogged = false;
  /** The FIFOs commands write their output into (output-pipe.ts), and the copies of those running now. */
  private readonly pipes: FifoPool;
  private readonly copies = new Set<PipeCopy>();
  private drainLogged = false;

  constructor(
    private readonly ws: TerminalHost,
    private readonly options: TerminalOptions,
  ) {
    this.store = new OutputStore(options.stateDir, ws.root);
    this.pipes = new FifoPool(
      () => this.store.folder(),
      (paths) => this.mkfifo(paths),
    );
  }

  get mode(): SandboxMode {
    return this.options.sandbox ?? "on";
  }

  /**
   * Starts the probe in the background, so the first command does not wait for it. The bash grammar is not loaded here:
   * it would hold about 18 MB from the start in a daemon that may never run a command; the first check loads it, once.
   */
  start(): void {
    this.pipes.warm(this.ws.log);
    this.ready().catch((e: unknown) => this.ws.log(`terminal setup failed: ${e instanceof Error ? e.message : String(e)}`));
  }

  ready(): Promise<Setup> {
    this.setup ??= prepareSetup(this.ws, { network: !!this.options.network, limits: this.options.limits, hide: this.hidden() }).then((s) => {
      if (s.held.pids || s.held.memory) {
        this.cgroups = new CgroupReserve(s.parents, s.limits);
        this.cgroups.warm();
      }
      return s;
    });
    return this.setup;
  }

  /** What `info` shows of terminal_run. */
  async state(): Promise<Record<string, unknown>> {
    const s = await this.ready();
    const sandboxed = this.mode === "on";
    const available = !sandboxed || s.probe.available;
    const sandbox = !sandboxed
      ? { mode: "off", note: "--terminal-sandbox off: commands run unsandboxed, with the daemon's own file system access" }
      : {
          mode: "bwrap",
          available: s.probe.available,
          version: s.probe.version,
          ...(s.probe.reason ? { reason: s.probe.reason } : {}),
          nested_user_namespaces_blocked: s.probe.disableUserns,
        };
    return {
      available,
      ...(available ? {} : { reason: s.probe.reason }),
      sandbox,
      network: sandboxed ? (this.options.network ? "on (--terminal-network)" : "off") : "unrestricted (no sandbox)",
      home: this.options.home ? `${this.options.home} (--terminal-home)` : sandboxed ? "empty" : "the daemon's own (no sandbox)",
      env_passed_through: [...(this.options.passEnv ?? [])],
      limits: {
        pids: s.held.pids ? s.limits.pids : false,
        memory_bytes: s.held.memory ? s.limits.memoryBytes : false,
        ...(s.held.reason ? { reason: s.held.reason } : {}),
      },
      timeout_ms: { default: DEFAULT_COMMAND_TIMEOUT_MS, max: MAX_TIMEOUT_MS },
      jobs_running: [...this.jobs.values()].filter((j) => j.running).length,
    };
  }

  private async requireSandbox(): Promise<Setup> {
    const s = await this.ready();
    if (this.mode === "on" && !s.probe.available) {
      throw new ToolError(
        "SANDBOX_UNAVAILABLE",
        `Commands run only in a sandbox, and it does not work here: ${s.probe.reason}. Make bubblewrap work (install it, allow user namespaces), or start the daemon with --terminal-sandbox off to run commands unsandboxed.`,
        { reason: s.probe.reason },
      );
    }
    return s;
  }

  /** Checks and builds a shell command: SHELL_WRITE_REFUSED, SANDBOX_UNAVAILABLE, or what would run. */
  async plan(req: { command: string; cwd?: string; env?: Record<string, string>; stdin?: string }): Promise<Plan> {
    for (const name of Object.keys(req.env ?? {})) {
      if (HIDDEN_CODE_VARS.test(name))
        throw new ToolError(
          "INVALID_PARAMS",
          `env.${name}: bash would run code from it (or split the line by it) that the write check cannot see; put what it does in the command itself.`,
        );
    }
    const verdict = await checkCommand(req.command, { root: this.ws.root, stdin: req.stdin, env: req.env });
    if (!verdict.ok) throw shellWriteRefused(verdict.reason);
    const plan = await this.build(req.command, req, this.watched());
    return { ...plan, commands: verdict.commands };
  }

  /** Builds an argv run (a custom check): the same sandbox and environment, no shell and so no write check. */
  planArgv(req: ArgvRequest): Promise<Plan> {
    if (!req.argv.length) throw new ToolError("INVALID_PARAMS", "argv: empty; name the program to run.");
    return this.build(req.argv, req);
  }

  /** `watched`: note the unwatched files on the way, to count what the command changes there. */
  private async build(
    command: string | readonly string[],
    req: { cwd?: string; env?: Record<string, string>; stdin?: string },
    watched?: Watched,
  ): Promise<Plan> {
    const s = await this.requireSandbox();
    const where = await this.ws.paths.resolve(req.cwd ?? ".");
    if (!where.exists) throw new ToolError("NOT_FOUND", `cwd ${req.cwd} does not exist; use a folder inside the workspace.`);
    if (!(await stat(where.real)).isDirectory()) throw new ToolError("INVALID_PARAMS", `cwd: ${req.cwd} is a file, not a folder.`);
    const sandboxed = this.mode === "on";
    const home = sandboxed ? sandboxHome({ root: this.ws.root, homePath: s.host.homePath }) : (this.options.home ?? os.homedir());
    const unwatched = watched && new UnwatchedSnapshot(this.ws.root, watched);
    const gitDirs = sandboxed || unwatched ? await this.gitDirs(s, unwatched) : [];
    const built = sandboxed
      ? buildSandbox({
          root: this.ws.root,
          gitDirs,
          homePath: s.host.homePath,
          home: this.options.home,
          network: !!this.options.network,
          hide: this.hidden(),
          cwd: where.real,
          command,
          hidden: s.host.hidden,
          keep: s.host.keep,
          disableUserns: s.probe.disableUserns,
        })
      : { argv: typeof command === "string" ? bashArgv(command) : [...command], pins: [], views: [] };
    const env = sandboxEnv({ base: process.env, passThrough: this.options.passEnv, callEnv: req.env, home });
    return {
      sandboxed,
      argv: built.argv,
      env,
      cwd: where.real,
      cwdRel: where.realRel,
      commands: [],
      stdin: req.stdin,
      pins: built.pins,
      views: built.views,
      unwatched,
    };
  }

  /**
   * The git dirs to bind read-only, found afresh for every command by a walk of the whole tree (the VFS's index skips
   * ignored folders, and a repository a command made a moment ago must be in; unchanged folders are not read again),
   * plus the root's own outside it.
   */
  private async gitDirs(s: Setup, unwatched?: UnwatchedSnapshot): Promise<string[]> {
    const walked = await this.gitDirScan.find(this.ws.root, { visit: unwatched?.visit });
    if (walked.truncated && !this.walkTruncatedLogged) {
      this.walkTruncatedLogged = true;
      this.ws.log("the workspace has more folders than the git-dir walk reads; git dirs beyond them are writable to commands");
    }
    return [...new Set([...s.outerGitDirs, ...walked.dirs])].sort();
  }

  /** The daemon's state folder, which no command may see (SPEC 12: approvals live there), once it exists. */
  private hidden(): string[] {
    return existsSync(this.options.stateDir) ? [this.options.stateDir] : [];
  }

  /** The VFS's files and their folders, as the index has them now; undefined without a VFS (nothing to count against). */
  private watched(): Watched | undefined {
    const index = this.ws.fileIndex;
    if (!index) return undefined;
    if (this.foldersCache?.generation !== index.generation) this.foldersCache = { generation: index.generation, folders: filesPerFolder(index.paths()) };
    return { has: (rel) => index.has(rel), folders: this.foldersCache.folders };
  }

  /** What a foreground command changed at the unwatched places, once the watcher has caught up with its end. */
  ignoredChanges(plan: Plan, outcome: RunOutcome): IgnoredChanges | undefined {
    const now = this.watched();
    return now && plan.unwatched?.changesSince(outcome.changesSince, now);
  }

  /** What a preview shows of the sandbox (deterministic: no generated names, so preview_id digests it). */
  async sandboxPreview(plan: Plan): Promise<Record<string, unknown>> {
    const s = await this.ready();
    const limits = { pids: s.held.pids ? s.limits.pids : false, memory_bytes: s.held.memory ? s.limits.memoryBytes : false };
    return { mode: plan.sandboxed ? "bwrap" : "off", argv: plan.argv, network: plan.sandboxed && !!this.options.network, limits };
  }

  /** Starts a planned command (output pipe and file, cgroup, supervisor); the caller waits for `exited`. `limits`: the
   * supervisor kills its whole tree on the timeout or the signal's abort (a foreground command; a job has neither). */
  async launch(plan: Plan, name: string, label: string, limits: LimitOptions = {}): Promise<Launched> {
    await this.ready(); // and with it the cgroup reserve
    let managed: ManagedChild | undefined;
    const { file, changesSince, writeFd, copy, copied } = await this.output(name, () => managed?.stop());
    let cgroup: CommandCgroup | undefined;
    let pins: number[] = [];
    let startedAt = 0;
    try {
      pins = openPins(plan.pins);
      cgroup = await this.cgroups?.take().catch((e: unknown) => {
        if (!this.cgroupFailureLogged) this.ws.log(`commands run without their cgroup limits: ${e instanceof Error ? e.message : String(e)}`);
        this.cgroupFailureLogged = true;
        return undefined;
      });
      // A sandbox joins its cgroups while bwrap sets it up (CommandCgroup.admit); a bare command first, through a shell.
      const held = cgroup !== undefined && plan.sandboxed;
      const firstPipe = FIRST_PIN_FD + pins.length;
      const argv = !cgroup ? plan.argv : held ? heldBwrapArgv(plan.argv, firstPipe) : cgroup.wrap(plan.argv);
      managed = await this.ws.processes.spawnLong(
        {
          cmd: argv[0],
          args: argv.slice(1),
          cwd: plan.cwd,
          exactEnv: plan.env,
          stdin: plan.stdin !== undefined ? "pipe" : "ignore",
          output: writeFd,
          fds: pins,
          pipes: held ? HELD_PIPES : 0,
          label,
          isolated: plan.sandboxed,
        },
        limits,
      );
      startedAt = Date.now();
      if (held) await this.admit(cgroup!, managed, firstPipe);
    } catch (e) {
      if (cgroup) this.release(cgroup);
      void copied.then(() => this.store.done(file)); // no writer left: the copy ends at once
      throw e;
    } finally {
      for (const d of [writeFd, ...pins]) closeQuietly(d); // the child has its own copies
    }
    if (plan.stdin !== undefined) {
      managed.child.stdin!.on("error", () => undefined); // a command that exits without reading it
      managed.child.stdin!.end(plan.stdin);
    }
    const exited = managed.exited.then(async (exit) => {
      if (cgroup) this.release(cgroup);
      await this.drained(copied, label);
      return exit;
    });
    return { managed, file, startedAt, exited, changesSince, outputLimitHit: () => copy.limitHit };
  }

  /**
   * A command's output file and the pipe it writes into (`writeFd`, for the child), copied into the file until every
   * writer is gone (`copied`); `onLimit` when the output passes the file's limit.
   */
  private async output(
    name: string,
    onLimit: () => void,
  ): Promise<{ file: string; changesSince: number; writeFd: number; copy: PipeCopy; copied: Promise<void> }> {
    const fifo = await this.pipes.take();
    const { file, fd } = this.store.create(name);
    const changesSince = startStamp(fd);
    let pipe: { readFd: number; writeFd: number };
    try {
      pipe = openPipe(fifo);
    } catch (e) {
      closeQuietly(fd);
      void this.store.done(file);
      throw e;
    }
    const copy = new PipeCopy(pipe.readFd, fd, this.options.maxFileBytes ?? MAX_FILE_BYTES, onLimit);
    this.copies.add(copy);
    const copied = copy.done.then((ended) => {
      this.copies.delete(copy);
      closeQuietly(fd);
      if (ended) this.pipes.give(fifo);
    });
    return { file, changesSince, writeFd: pipe.writeFd, copy, copied };
  }

  /** The copy of a command's output, once its pipe has ended or OUTPUT_DRAIN_MS passed (said in the log once). */
  private async drained(copied: Promise<void>, label: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), OUTPUT_DRAIN_MS)));
    const timedOut = await Promise.race([copied.then(() => false), late]);
    clearTimeout(timer);
    if (timedOut && !this.drainLogged) {
      this.drainLogged = true;
      this.ws.log(`${label}: a process it started still holds its output open after it exited; what it writes goes on into output_file`);
    }
  }

  /** Lets a held sandbox into its cgroups (CommandCgroup.admit); when the kernel refuses, kills it before the command
   * ran, and says so. */
  private async admit(cgroup: CommandCgroup, managed: ManagedChild, firstPipe: number): Promise<void> {
    const stdio = managed.child.stdio;
    try {
      await cgroup.admit(managed.pid, stdio[firstPipe] as Readable, stdio[firstPipe + 1] as Writable);
    } catch (e) {
      await managed.stop({ graceMs: 0 });
      throw new ToolError(
        "SANDBOX_UNAVAILABLE",
        `The kernel refused to move the command into its cgroup (${e instanceof Error ? e.message : String(e)}); nothing ran. Run it again; if it persists, start the daemon in a cgroup it may make children in.`,
      );
    }
  }

  /** Makes FIFOs at `paths` (Node has no mkfifo). */
  private async mkfifo(paths: string[]): Promise<void> {
    const r = await this.ws.processes.run({ cmd: "mkfifo", args: ["-m", "600", "--", ...paths], cwd: path.dirname(paths[0]), group: false, label: "mkfifo" });
    if (r.code !== 0) throw new Error(`mkfifo failed: ${r.stderr.trim() || `exit ${r.code ?? r.signal}`}`);
  }

  private release(cgroup: CommandCgroup): void {
    const p = cgroup.release().catch(() => undefined);
    this.releases.add(p);
    void p.finally(() => this.releases.delete(p));
  }

  /**
   * Runs a planned command in the foreground to its end, timeout or abort (both kill its whole tree). `afterEnd` starts
   * at the command's end (its exit, and its output's pipe drained: every writer gone), beside the read of its output,
   * and is awaited before the outcome (not after an abort).
   */
  async run(
    plan: Plan,
    opts: { timeoutMs: number; signal?: AbortSignal; label?: string; kind?: "run" | "check"; afterEnd?: () => Promise<void> },
  ): Promise<RunOutcome> {
    opts.signal?.throwIfAborted();
    const kind = opts.kind ?? "run";
    const l = await this.launch(plan, `${kind}-${++this.sequences[kind]}`, opts.label ?? "terminal", { timeoutMs: opts.timeoutMs, signal: opts.signal });
    const { afterEnd } = opts;
    const afterwards = afterEnd ? l.exited.then(() => (opts.signal?.aborted ? undefined : afterEnd())) : undefined;
    try {
      return await this.outcome(plan, l, opts.signal);
    } finally {
      await afterwards;
    }
  }

  private async outcome(plan: Plan, l: Launched, signal: AbortSignal | undefined): Promise<RunOutcome> {
    const exit = await l.exited;
    const duration = Date.now() - l.startedAt;
    try {
      signal?.throwIfAborted();
      const out = await readCapped(l.file);
      const hint =
        plan.sandboxed && exit.code === 127 ? notFoundHint(out.output, plan.env.PATH ?? "", plan.views, { homeFlag: !this.options.home }) : undefined;
      return {
        exit_code: exit.code,
        signal: exit.signal,
        timed_out: l.managed.timedOut,
        duration_ms: duration,
        output: out.output,
        truncated: out.truncated,
        output_file: l.file,
        output_bytes: out.bytes,
        output_limit_hit: l.outputLimitHit(),
        changesSince: l.changesSince,
        ...(hint ? { hint } : {}),
      };
    } finally {
      await this.store.done(l.file);
    }
  }

  /** An argv run to its end (a custom check). */
  async runArgv(req: ArgvRequest): Promise<RunOutcome> {
    const plan = await this.planArgv(req);
    return this.run(plan, { timeoutMs: req.timeoutMs, signal: req.signal, label: `check ${req.argv[0]}`, kind: "check" });
  }

  /** Starts a background job: no timeout, output as events, killed with the daemon. */
  async startJob(plan: Plan, command: string, session: string): Promise<Job> {
    const id = `job-${++this.sequences.job}`;
    const l = await this.launch(plan, id, `terminal job: ${command.slice(0, 60)}`);
    const job = new Job(id, command, plan.cwdRel, session, l, this.ws.bus);
    this.jobs.set(id, job);
    void job.ended.then(() => this.store.done(l.file)).then(() => this.forgetPruned());
    return job;
  }

  job(id: string): Job {
    const job = this.jobs.get(id);
    if (!job)
      throw new ToolError("NOT_FOUND", `There is no job ${JSON.stringify(id)}; terminal_jobs lists them (finished ones are kept while their output is).`);
    return job;
  }

  /** Finished jobs whose output file was pruned are forgotten with it. */
  private forgetPruned(): void {
    for (const [id, job] of this.jobs) if (!job.running && !this.store.kept(job.file)) this.jobs.delete(id);
  }

  async dispose(): Promise<void> {
    const running = [...this.jobs.values()].filter((j) => j.running);
    for (const j of running) j.detach();
    await Promise.race([Promise.all(running.map((j) => j.kill())), new Promise((r) => setTimeout(r, KILL_GRACE_MS + 500).unref())]);
    await Promise.allSettled([...this.releases, this.cgroups?.close()]);
    for (const copy of this.copies) copy.close();
    this.store.dispose();
  }
}
