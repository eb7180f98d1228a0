import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
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

export function fmt(ms: number): string {
  return ms < 10 ? ms.toFixed(3) : ms.toFixed(1);
}

/** One row of a comparison: ours vs the peer, with the ratio the figure is about. */
export function report(label: string, ours: number, peer: number | undefined, unit: string, peerName?: string): void {
  const ratio = peer === undefined ? "" : `  ratio ${(ours / peer).toFixed(2)}x vs ${peerName ?? "peer"} (${fmt(peer)} ${unit})`;
  console.log(`${label.padEnd(48)} ${fmt(ours).padStart(10)} ${unit}${ratio}`);
}

/** The daemon over real pipes, for benchmarks: no assertions, just timings. */
export class BenchDaemon {
  readonly child: ChildProcessWithoutNullStreams;
  private nextId = 1;
  private readonly waiters = new Map<string | number, (r: any) => void>();
  readonly events: any[] = [];
  private readonly eventWaiters: ((e: any) => void)[] = [];
  readonly ready: Promise<void>;

  constructor(root: string, args: string[] = []) {
    this.child = spawn(process.execPath, [MAIN, "--root", root, ...args], { stdio: "pipe" });
    this.child.stderr.on("data", (d) => process.stderr.write(d));
    let onReady!: () => void;
    this.ready = new Promise((resolve) => (onReady = resolve));
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      const msg = JSON.parse(line);
      if (msg.event === "ready") onReady();
      else if (msg.event) {
        this.events.push(msg);
        for (const w of this.eventWaiters.splice(0)) w(msg);
      } else this.waiters.get(msg.call_id)?.(msg), this.waiters.delete(msg.call_id);
    });
  }

  call(tool_id: string, params: Record<string, unknown>, session = "bench", approved = true): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiters.set(id, resolve);
      this.child.stdin.write(JSON.stringify({ tool_id, session_id: session, toolcall_id: id, approved, params }) + "\n");
    });
  }

  /** A call that must succeed: its result, or an Error with the failure's code and message. */
  async ok(tool_id: string, params: Record<string, unknown>): Promise<any> {
    const r = await this.call(tool_id, params);
    if (!r.success) throw new Error(`${tool_id} failed: ${JSON.stringify(r.result).slice(0, 500)}`);
    return r.result;
  }

  /** Sends `calls` in one write (as a Gateway flushing a backlog does) and resolves with every answer, in call order. */
  burst(calls: { tool_id: string; params: Record<string, unknown> }[], session = "bench"): Promise<any[]> {
    const answers = calls.map((c) => {
      const id = this.nextId++;
      const line = JSON.stringify({ tool_id: c.tool_id, session_id: session, toolcall_id: id, approved: true, params: c.params });
      return { line, answer: new Promise<any>((resolve) => this.waiters.set(id, resolve)) };
    });
    this.child.stdin.write(answers.map((a) => `${a.line}\n`).join(""));
    return Promise.all(answers.map((a) => a.answer));
  }

  nextEvent(): Promise<any> {
    return new Promise((resolve) => this.eventWaiters.push(resolve));
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

  async close(): Promise<void> {
    this.child.stdin.end();
    await new Promise((resolve) => this.child.once("exit", resolve));
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
