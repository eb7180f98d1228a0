import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { appendFileSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The built daemon: bench/ compiles to dist/bench/, beside dist/src/. */
export const MAIN = fileURLToPath(new URL("../src/main.js", import.meta.url));

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const median = (values: number[]) => percentile(values, 50);

/** The median proper: of an even count, the mean of the two middle values (for figures over two or four rounds). */
export function middle(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const k = sorted.length >> 1;
  return sorted.length % 2 ? sorted[k] : (sorted[k - 1] + sorted[k]) / 2;
}

export function fmt(ms: number): string {
  return ms < 10 ? ms.toFixed(3) : ms.toFixed(1);
}

/** One row of a comparison: ours vs the peer, with the ratio the issue's figure is about. */
export function report(label: string, ours: number, peer: number | undefined, unit: string, peerName?: string): void {
  const ratio = peer === undefined ? "" : `  ratio ${(ours / peer).toFixed(2)}x vs ${peerName ?? "peer"} (${fmt(peer)} ${unit})`;
  console.log(`${label.padEnd(48)} ${fmt(ours).padStart(10)} ${unit}${ratio}`);
}

/** The daemon over real pipes, for benchmarks: no assertions, just timings. */
export class BenchDaemon {
  readonly child: ChildProcessWithoutNullStreams;
  private nextId = 1;
  private readonly waiters = new Map<string | number, { resolve: (r: any) => void; reject: (e: Error) => void }>();
  readonly events: any[] = [];
  private readonly eventWaiters: { resolve: (e: any) => void; reject: (e: Error) => void }[] = [];
  readonly ready: Promise<void>;
  /** Set once the daemon has exited: every pending and later call, event wait and `ready` fail with it. */
  private exited?: Error;
  private stderrTail = "";

  /**
   * `nodeArgs` go to node before the daemon's script (a profiler, a preload); `quiet` keeps its stderr out of ours;
   * `main` is another build's daemon (a before/after figure), this build's by default.
   */
  constructor(root: string, args: string[] = [], options: { nodeArgs?: string[]; quiet?: boolean; main?: string } = {}) {
    // No language server warms up in the background of a figure unless the suite asks (--lsp-warm on).
    const warm = args.some((a) => a === "--lsp-warm" || a.startsWith("--lsp-warm=")) ? [] : ["--lsp-warm", "off"];
    this.child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.main ?? MAIN, "--root", root, ...warm, ...args], { stdio: "pipe" });
    this.child.stderr.on("data", (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString()).slice(-2000);
      if (!options.quiet) process.stderr.write(d);
    });
    let onReady!: () => void;
    let onDead!: (e: Error) => void;
    this.ready = new Promise((resolve, reject) => ((onReady = resolve), (onDead = reject)));
    this.ready.catch(() => undefined); // a daemon that dies is reported by whoever awaits it
    this.child.once("exit", (code, signal) => {
      this.exited = new Error(`the daemon exited (${signal ?? `code ${code}`}); stderr tail: ${this.stderrTail.trim().slice(-600)}`);
      onDead(this.exited);
      for (const w of this.waiters.values()) w.reject(this.exited);
      this.waiters.clear();
      for (const w of this.eventWaiters.splice(0)) w.reject(this.exited);
    });
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      const msg = JSON.parse(line);
      if (msg.event === "ready") onReady();
      else if (msg.event) {
        this.events.push(msg);
        for (const w of this.eventWaiters.splice(0)) w.resolve(msg);
      } else this.waiters.get(msg.call_id)?.resolve(msg), this.waiters.delete(msg.call_id);
    });
  }

  call(tool_id: string, params: Record<string, unknown>, session = "bench", approved = true): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.exited) return reject(this.exited);
      this.waiters.set(id, { resolve, reject });
      this.child.stdin.write(JSON.stringify({ tool_id, session_id: session, toolcall_id: id, approved, params }) + "\n");
    });
  }

  /** A call that must succeed: its result, or an Error with the failure's code and message. */
  async ok(tool_id: string, params: Record<string, unknown>, session = "bench"): Promise<any> {
    const r = await this.call(tool_id, params, session);
    if (!r.success) throw new Error(`${tool_id} failed: ${JSON.stringify(r.result).slice(0, 500)}`);
    return r.result;
  }

  /** Sends `calls` in one write (as a Gateway flushing a backlog does) and resolves with every answer, in call order. */
  burst(calls: { tool_id: string; params: Record<string, unknown> }[], session = "bench"): Promise<any[]> {
    const answers = calls.map((c) => {
      const id = this.nextId++;
      const line = JSON.stringify({ tool_id: c.tool_id, session_id: session, toolcall_id: id, approved: true, params: c.params });
      return { line, answer: new Promise<any>((resolve, reject) => this.waiters.set(id, { resolve, reject })) };
    });
    if (this.exited) return Promise.reject(this.exited);
    this.child.stdin.write(answers.map((a) => `${a.line}\n`).join(""));
    return Promise.all(answers.map((a) => a.answer));
  }

  nextEvent(): Promise<any> {
    return new Promise((resolve, reject) => (this.exited ? reject(this.exited) : this.eventWaiters.push({ resolve, reject })));
  }

  /**
   * The first event from index `from` of `events` on that `matches`. It scans `events` rather than trusting nextEvent
   * alone: lines that arrive in one read are all emitted before a waiter runs again, so a loop on nextEvent misses them.
   */
  async waitFor(matches: (e: any) => boolean, from = 0): Promise<any> {
    for (let seen = from; ; await this.nextEvent()) {
      for (; seen < this.events.length; seen++) if (matches(this.events[seen])) return this.events[seen];
    }
  }

  /** stdin closed (the daemon's clean shutdown); SIGKILL if it is still there after `graceMs`. Never throws. */
  async close(graceMs = 30_000): Promise<void> {
    if (this.exited) return;
    const gone = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    await gone;
    clearTimeout(timer);
  }
}

/** `cmd` by node's spawn alone, its output drained, done when it closes: the floor a supervised spawn is measured against. */
export function bareSpawn(cmd: string, args: string[], detached: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], detached });
    child.on("error", reject);
    child.stdout.resume();
    child.stderr.resume();
    child.on("close", () => resolve());
  });
}

/**
 * CPU milliseconds a process has used (user + system, from /proc): on a shared machine wall-clock figures swing with other
 * load, while CPU per call says what the process itself costs. NaN where /proc is missing.
 */
export function cpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // from field 3 (state) on: the name may hold ") "
    const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND) * 1000;
  } catch {
    return NaN;
  }
}

/** Resident memory of one process (not its children) in MB, from /proc; 0 once it is gone. */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** cpuMs of a process and its living descendants (the daemon's watcher host): the work a flood cost, whatever the load. */
export function treeCpuMs(pid: number): number {
  let ms = cpuMs(pid);
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean)) ms += treeCpuMs(Number(child));
    }
  } catch {
    // gone meanwhile
  }
  return ms;
}

/** An MCP server over stdio JSON-RPC (newline-delimited), spoken to as a bare MCP client would. */
export class StdioJsonRpc {
  readonly child: ChildProcessWithoutNullStreams;
  private nextId = 1;
  private readonly waiters = new Map<number, (r: any) => void>();

  constructor(command: string, args: string[]) {
    this.child = spawn(command, args, { stdio: "pipe" });
    this.child.stderr.resume();
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      const msg = JSON.parse(line);
      if (typeof msg.id === "number") this.waiters.get(msg.id)?.(msg), this.waiters.delete(msg.id);
    });
  }

  request(method: string, params: unknown): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiters.set(id, resolve);
      this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }

  async init(): Promise<void> {
    await this.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "tool-layer-bench", version: "0" } });
    this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    await new Promise((resolve) => this.child.once("exit", resolve));
  }
}

export type Call = () => Promise<unknown>;

/** How long `fn` took, in ms, and what it returned. */
export async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const value = await fn();
  return [performance.now() - t, value];
}

/** `n` round trips of `call`, one after the other, in ms each. */
export async function latencies(call: Call, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await timed(call))[0]);
  return out;
}

/**
 * Each case timed `runs` times (after `warmup` untimed rounds), the cases taking turns within a round so that drift in
 * the machine's load falls on all alike.
 */
export async function interleaved<K extends string>(cases: Record<K, Call>, runs: number, warmup = 0): Promise<Record<K, number[]>> {
  const entries = Object.entries(cases) as [K, Call][];
  const times = Object.fromEntries(entries.map(([k]) => [k, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < warmup + runs; i++) {
    for (const [k, call] of entries) {
      const [ms] = await timed(call);
      if (i >= warmup) times[k].push(ms);
    }
  }
  return times;
}

/** Calls per second with `lanes` callers each keeping one request in flight; lane k calls `callFor(k)`. */
export async function throughput(callFor: (lane: number) => Call, lanes: number, total: number): Promise<number> {
  let issued = 0;
  const lane = async (call: Call) => {
    while (issued < total) {
      issued++;
      await call();
    }
  };
  const t = performance.now();
  await Promise.all(Array.from({ length: lanes }, (_, k) => lane(callFor(k))));
  return (total / (performance.now() - t)) * 1000;
}

/**
 * Median calls/s of each side over `runs` runs of `total` calls with `lanes` callers, the sides alternating run by run so
 * that load from other processes on a shared machine falls on all alike; also each side's CPU milliseconds per call
 * (of the process `pid`, the server, not this one).
 */
export async function compareThroughput(
  sides: readonly { callFor: (lane: number) => Call; pid: number | undefined }[],
  lanes: number,
  runs: number,
  total: number,
): Promise<{ perSecond: number; cpuPerCall: number }[]> {
  const rates = sides.map(() => [] as number[]);
  const cpu = sides.map(() => 0);
  for (let r = 0; r < runs; r++) {
    for (const [k, side] of sides.entries()) {
      const before = cpuMs(side.pid);
      rates[k].push(await throughput(side.callFor, lanes, total));
      cpu[k] += cpuMs(side.pid) - before;
    }
  }
  return sides.map((_, k) => ({ perSecond: median(rates[k]), cpuPerCall: cpu[k] / (runs * total) }));
}

/** The machine's load averages (1, 5, 15 min), printed beside every figure: the machine is shared. */
export function load(): string {
  return loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
}

/**
 * What a suite must undo (daemons, child processes, folders), run last-registered first. A failing step is reported on
 * stderr and the others still run: cleanup never throws, so the error that ended the suite is the one that is seen (an
 * ENOTEMPTY from rm once hid the real failure).
 */
export class Cleanup {
  private readonly steps: { label: string; run: () => unknown }[] = [];

  add(label: string, run: () => unknown): void {
    this.steps.push({ label, run });
  }

  /** A folder removed, retried while a process that just died may still be writing into it. */
  removeLater(dir: string): void {
    this.add(`rm -r ${dir}`, () => removeTree(dir));
  }

  async run(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step.run();
      } catch (e) {
        console.error(`cleanup: ${step.label} failed (ignored): ${(e as Error).message}`);
      }
    }
  }
}

/**
 * Removes a folder after a suite, never throwing: retried while a process that just died may still be writing into it
 * (ENOTEMPTY), and a failure only logged, so the suite's own error, when there is one, is the one reported.
 */
export function removeTree(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch (e) {
    console.error(`cleanup: rm -r ${dir} failed (ignored): ${(e as Error).message}`);
  }
}

/** `body` with a Cleanup that runs after it whatever happens; the body's own error is the one that propagates. */
export async function withCleanup<T>(body: (cleanup: Cleanup) => Promise<T>): Promise<T> {
  const cleanup = new Cleanup();
  try {
    return await body(cleanup);
  } finally {
    await cleanup.run();
  }
}

/** One figure of a comparison, kept for the suite's closing table (and BENCH_JSON, a file of one JSON row per line). */
export interface Row {
  figure: string;
  scale?: string;
  ours: number;
  peer?: number;
  peerName?: string;
  unit: string;
  note?: string;
  /** "difference": the peer is a floor that can be near or below zero (ours - peer is shown, not the ratio). */
  compare?: "ratio" | "difference";
}

/** A row's comparison: ours / peer, or ours - peer for a "difference" row. */
function compared(r: Row): string {
  if (r.peer === undefined || Number.isNaN(r.peer) || Number.isNaN(r.ours)) return "";
  if (r.compare === "difference") return `${r.ours >= r.peer ? "+" : "-"}${fmt(Math.abs(r.ours - r.peer))} ${r.unit}`;
  return r.peer ? `${(r.ours / r.peer).toFixed(2)}x` : "";
}

/** Rows of one suite: each printed as it is measured (with the load at that moment), and as a table at the end. */
export class Figures {
  readonly rows: (Row & { load: string })[] = [];

  add(row: Row): void {
    const withLoad = { ...row, load: load() };
    this.rows.push(withLoad);
    const scale = row.scale ? `[${row.scale}] ` : "";
    if (row.compare === "difference" && row.peer !== undefined) {
      console.log(
        `${`${scale}${row.figure}`.padEnd(48)} ${fmt(row.ours).padStart(10)} ${row.unit}  ${compared(row)} vs ${row.peerName ?? "peer"} (${fmt(row.peer)} ${row.unit})`,
      );
    } else report(`${scale}${row.figure}`, row.ours, row.peer, row.unit, row.peerName);
    if (row.note) console.log(`  ${row.note}`);
    if (process.env.BENCH_JSON) appendFileSync(process.env.BENCH_JSON, JSON.stringify({ ...withLoad, at: new Date().toISOString() }) + "\n");
  }

  /** The rows as a markdown table: figure, ours, peer, ratio, load. */
  print(title: string): void {
    const cell = (v: number | undefined, unit: string) => (v === undefined || Number.isNaN(v) ? "" : `${fmt(v)} ${unit}`);
    console.log(`\n${title}\n\n| figure | ours | peer | ratio | load |\n|---|---|---|---|---|`);
    for (const r of this.rows) {
      const peer = r.peer === undefined ? "" : `${r.peerName ? `${r.peerName} ` : ""}${cell(r.peer, r.unit)}`;
      const ratio = r.peer === undefined ? "" : compared(r);
      console.log(`| ${r.scale ? `${r.scale}: ` : ""}${r.figure} | ${cell(r.ours, r.unit)} | ${peer} | ${ratio} | ${r.load} |`);
    }
  }
}

/**
 * `cmd` run to its end from the bench (a peer, or git doing what a user does outside the daemon): its time from spawn to
 * close, its stdout, its exit code. `input` is written to its stdin (a string, or a function that streams it). Rejects
 * on an exit code outside `okCodes` (default 0), naming the command and its stderr's tail; past `timeoutMs` it is killed
 * and resolves with `timedOut`.
 */
export function exec(
  cmd: string,
  args: string[],
  options: {
    cwd?: string;
    input?: string | ((stdin: NodeJS.WritableStream) => Promise<void>);
    okCodes?: number[];
    keepOutput?: boolean;
    timeoutMs?: number;
  } = {},
): Promise<{ ms: number; stdout: string; code: number; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd: options.cwd, stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    let timedOut = false;
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), child.kill("SIGKILL")), options.timeoutMs);
    child.stdout!.on("data", (d: Buffer) => options.keepOutput !== false && out.push(d));
    child.stderr!.on("data", (d) => (err = (err + d).slice(-4000)));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const ms = performance.now() - t0;
      const result = { ms, stdout: Buffer.concat(out).toString(), code: code ?? -1, timedOut };
      if (!timedOut && !(options.okCodes ?? [0]).includes(code ?? -1))
        reject(new Error(`${cmd} ${args.join(" ").slice(0, 200)} exited ${code}: ${err.trim()}`));
      else resolve(result);
    });
    if (options.input !== undefined) {
      child.stdin!.on("error", () => undefined); // a child that exits without reading it all: its exit code says how it went
      if (typeof options.input === "string") child.stdin!.end(options.input);
      else options.input(child.stdin!).catch(reject);
    }
  });
}
