/**
 * `npm run bench -- caller` (issue 23): the tools' figures that do not depend on the tree's size, each timed from the
 * caller's side (this process, over the daemon's pipes, or an MCP client of `--mcp`) beside its peer in the same run:
 * - terminal_run `true`, sandbox on and off, against bare `bash -c true` spawned from here;
 * - git_stage_lines of 30 ranges against `git apply --cached` of the same patch, git_line_status against
 *   `git diff -U0 --histogram`, git_word_diff against `git diff --word-diff=porcelain`;
 * - file_read of 150 lines from 8 sessions at once, over JSON lines and over MCP, against the MCP filesystem server
 *   read through the same MCP client, on a quiet machine and beside a CPU load of our own (two busy processes);
 * - a 10-edit file_write on a 10,000-line file (p50, and the daemon's CPU per call);
 * - the first lsp_diagnostics and the first lsp_symbols of a cold daemon on a generated TypeScript project, against a
 *   bare client of the same language server.
 * BENCH_CALLER=terminal (names among terminal, lineGit, reads, writes, lsp, comma-separated) runs only those parts.
 * BENCH_BASELINE=FILE (another build's dist/src/main.js) adds git_stage_lines through that build's daemon, on a
 * repository of its own, beside this build's and git apply's in the same rounds: a before/after in one run; and the
 * same file_write batches through that build's daemon on a file of its own, the two daemons taking turns; and
 * terminal_run through that build's sandboxed daemon, taking turns with ours (BENCH_TERMINAL_RUNS rounds, default 30);
 * and file_read through that build's daemon over JSON lines and in MCP mode, on the same file, in every round of the
 * reads with ours and the peer (BENCH_READ_RUNS rounds of BENCH_READ_CALLS calls, default 5 of 2,000).
 * BENCH_READ_MODE=same|windows|fresh: the reads reread one 150-line file (same, the default), read a new window of a
 * 1,200-line file each call (windows), or read 4,096 distinct files in turn (fresh); see readFixture.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node.js";
import xxhash from "xxhash-wasm";
import {
  BenchDaemon,
  type Call,
  type Cleanup,
  Figures,
  MAIN,
  bareSpawn,
  cpuMs,
  exec,
  fmt,
  interleaved,
  median,
  percentile,
  timed,
  withCleanup,
} from "./lib.js";
import { RANGES, againstGit, lineGitRepo } from "./line-git-fixture.js";

const PACKAGES = fileURLToPath(new URL("../../node_modules/", import.meta.url));
export const MCP_FILESYSTEM = path.join(PACKAGES, "@modelcontextprotocol/server-filesystem/dist/index.js");

const TERMINAL_RUNS = Number(process.env.BENCH_TERMINAL_RUNS) || 30;
const LINE_GIT_WARMUP = 3;
const LINE_GIT_SAMPLES = 20;
/** file_read: sessions at once (one request in flight each), runs per side alternating, calls per run. */
export const SESSIONS = 8;
const READ_RUNS = 5;
/** BENCH_READ_CALLS: calls per run (shorter runs, more of them, pair a before/after more closely on a busy machine). */
const READ_CALLS = Number(process.env.BENCH_READ_CALLS) || 2_000;
const READ_WARMUP = 300;
/** The load generator: busy processes beside the benchmark, as other work on the machine would be. */
const BUSY_PROCESSES = 2;
const WRITE_BATCHES = 100;
const BIG_LINES = 10_000;
const LSP_ROUNDS = 2;
const LSP_MODULES = 150;

export default async function main(): Promise<void> {
  const figures = new Figures();
  const parts = { terminal, lineGit, reads, writes, lsp };
  // BENCH_CALLER=terminal,writes: only those parts (to iterate on one figure); default all of them.
  const only = process.env.BENCH_CALLER?.split(",").map((s) => s.trim());
  const unknown = only?.filter((name) => !(name in parts));
  if (unknown?.length) throw new Error(`BENCH_CALLER: unknown part ${unknown.join(", ")}; parts: ${Object.keys(parts).join(", ")}`);
  try {
    for (const [name, part] of Object.entries(parts)) if (!only || only.includes(name)) await part(figures);
  } finally {
    figures.print(`caller: figures from the caller's side (load = 1/5/15 min averages when measured; ${new Date().toISOString()})`);
  }
}

function tempDir(cleanup: Cleanup, name: string): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), `tool-layer-bench-${name}-`)));
  cleanup.removeLater(dir);
  return dir;
}

/** A daemon on `dir` (of another build when `main` names one), closed by `cleanup`, ready. */
async function daemon(cleanup: Cleanup, dir: string, args: string[] = [], main?: string): Promise<BenchDaemon> {
  const nodeArgs = process.env.BENCH_DAEMON_NODE_ARGS?.split(" ").filter(Boolean); // e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
  const d = new BenchDaemon(dir, args, { quiet: true, nodeArgs, main });
  cleanup.add("daemon", () => d.close());
  await d.ready;
  return d;
}

async function terminal(figures: Figures): Promise<void> {
  await withCleanup(async (cleanup) => {
    const dir = tempDir(cleanup, "terminal");
    await exec("git", ["init", "-q", dir]);
    writeFileSync(path.join(dir, "a.txt"), "a\n");
    const on = await daemon(cleanup, dir);
    const off = await daemon(cleanup, dir, ["--terminal-sandbox", "off"]);
    const reported = new Map<BenchDaemon, number[]>([
      [on, []],
      [off, []],
    ]);
    const run = (d: BenchDaemon) => async () => {
      const r = await d.ok("terminal_run", { command: "true" });
      if (r.exit_code !== 0) throw new Error(`terminal_run true: ${JSON.stringify(r).slice(0, 300)}`);
      reported.get(d)!.push(r.duration_ms);
    };
    const bare = () => bareSpawn("bash", ["--noprofile", "--norc", "-c", "true"], true);
    // BENCH_BASELINE: that build's sandboxed daemon on a folder of its own, taking turns with ours in going first.
    const baseline = process.env.BENCH_BASELINE;
    const base = baseline ? await daemon(cleanup, baselineRepo(cleanup), [], baseline) : undefined;
    if (base) reported.set(base, []);
    const times: Record<string, number[]> = base
      ? await alternating({ on: run(on), base: run(base) }, { off: run(off), bare }, TERMINAL_RUNS, 2)
      : await interleaved({ on: run(on), off: run(off), bare }, TERMINAL_RUNS, 2);
    const info = await on.ok("info", { tool_id: "terminal_run" });
    figures.add({
      figure: "terminal_run `true`, sandbox on",
      ours: median(times.on),
      peer: median(times.bare),
      peerName: "bare bash -c true",
      unit: "ms",
      note: `p90 ${fmt(percentile(times.on, 90))} ms; the answer's duration_ms median ${fmt(median(reported.get(on)!))} ms; sandbox: ${JSON.stringify(info.state?.sandbox ?? info.state).slice(0, 160)}`,
    });
    figures.add({
      figure: "terminal_run `true`, --terminal-sandbox off",
      ours: median(times.off),
      peer: median(times.bare),
      peerName: "bare bash -c true",
      unit: "ms",
      note: `p90 ${fmt(percentile(times.off, 90))} ms; the answer's duration_ms median ${fmt(median(reported.get(off)!))} ms`,
    });
    if (base)
      figures.add({
        figure: "terminal_run `true`, sandbox on, BENCH_BASELINE's build",
        ours: median(times.base),
        peer: median(times.bare),
        peerName: "bare bash -c true",
        unit: "ms",
        note: `p90 ${fmt(percentile(times.base, 90))} ms; the answer's duration_ms median ${fmt(median(reported.get(base)!))} ms; ours - baseline, paired by round: median ${fmt(median(times.on.map((t, i) => t - times.base[i])))} ms`,
      });
  });
}

/** A git repository like terminal()'s, for the baseline's daemon. */
function baselineRepo(cleanup: Cleanup): string {
  const dir = tempDir(cleanup, "terminal-baseline");
  execFileSync("git", ["init", "-q", dir]);
  writeFileSync(path.join(dir, "a.txt"), "a\n");
  return dir;
}

/**
 * Rounds of `pair`'s two calls, the one going first swapped each round (a sandbox's cgroup move is cheaper right after
 * another), then `rest` in order; ms per call, after `warmup` rounds.
 */
async function alternating<A extends string, R extends string>(
  pair: Record<A, Call>,
  rest: Record<R, Call>,
  runs: number,
  warmup: number,
): Promise<Record<A | R, number[]>> {
  const pairs = Object.entries(pair) as [A, Call][];
  const others = Object.entries(rest) as [R, Call][];
  const times = Object.fromEntries([...pairs, ...others].map(([k]) => [k, [] as number[]])) as Record<A | R, number[]>;
  for (let i = 0; i < warmup + runs; i++) {
    for (const [k, call] of [...(i % 2 ? [...pairs].reverse() : pairs), ...others]) {
      const [ms] = await timed(call);
      if (i >= warmup) times[k].push(ms);
    }
  }
  return times;
}

/** `npm run bench -- line-git-caller`: only the line-git figures of this suite. */
export async function lineGitOnly(): Promise<void> {
  const figures = new Figures();
  try {
    await lineGit(figures);
  } finally {
    figures.print(`line-git-caller: figures from the caller's side (${new Date().toISOString()})`);
  }
}

async function lineGit(figures: Figures): Promise<void> {
  await withCleanup(async (cleanup) => {
    const { dir, halfPatch } = await lineGitRepo();
    cleanup.removeLater(dir);
    const d = await daemon(cleanup, dir);
    const status = await d.ok("git_line_status", { path: "big.ts" });
    const ranges = status.ranges as { range: number }[];
    if (ranges.length !== RANGES) throw new Error(`expected ${RANGES} ranges, got ${ranges.length}`);
    const half = ranges.filter((r) => r.range % 2 === 1).map((r) => r.range);
    const call = (tool: string, params: Record<string, unknown>) => async () => (await timed(() => d.ok(tool, params)))[0];
    const git = (args: string[], input?: string) => async () => (await exec("git", args, { cwd: dir, input })).ms;
    const rounds = [LINE_GIT_WARMUP, LINE_GIT_SAMPLES] as const;

    const st = await againstGit(d, ...rounds, call("git_line_status", { path: "big.ts" }), git(["diff", "-U0", "--histogram", "--", "big.ts"]));
    figures.add({
      figure: `git_line_status, 5,000 lines, ${RANGES} ranges`,
      ours: median(st.ours),
      peer: median(st.git),
      peerName: "git diff -U0 --histogram",
      unit: "ms",
      note: `daemon CPU per call ${fmt(st.cpuPerCall)} ms`,
    });
    const wd = await againstGit(d, ...rounds, call("git_word_diff", { path: "big.ts" }), git(["diff", "--word-diff=porcelain", "--", "big.ts"]));
    figures.add({
      figure: "git_word_diff",
      ours: median(wd.ours),
      peer: median(wd.git),
      peerName: "git diff --word-diff=porcelain",
      unit: "ms",
      note: `daemon CPU per call ${fmt(wd.cpuPerCall)} ms`,
    });

    // Each run starts from an index equal to HEAD (the reset is not timed); what git applied must be what we staged.
    const reset = async () => void (await exec("git", ["reset", "-q", "--", "big.ts"], { cwd: dir }));
    const staged = async () => (await exec("git", ["diff", "--cached", "--", "big.ts"], { cwd: dir })).stdout;
    const sg = await againstGit(
      d,
      ...rounds,
      call("git_stage_lines", { path: "big.ts", hash: status.hash, ranges: half }),
      async () => {
        const ours = await staged();
        await reset();
        const ms = await git(["apply", "--cached", "-"], halfPatch)();
        if (ours !== (await staged())) throw new Error("git_stage_lines staged something else than git apply of the same ranges");
        return ms;
      },
      reset,
    );
    figures.add({
      figure: `git_stage_lines, ${half.length} ranges`,
      ours: median(sg.ours),
      peer: median(sg.git),
      peerName: "git apply --cached",
      unit: "ms",
      note: `daemon CPU per call ${fmt(sg.cpuPerCall)} ms`,
    });
    const baseline = process.env.BENCH_BASELINE;
    if (baseline) await stagingBesideBaseline(figures, cleanup, { dir, halfPatch, d, half, hash: status.hash }, baseline);
  });
}

/**
 * git_stage_lines of this build (`ours`, as in lineGit) and of the `baseline` build's daemon on a repository of its own,
 * and git apply on ours, each round from an index at HEAD; the two daemons take turns going first.
 */
async function stagingBesideBaseline(
  figures: Figures,
  cleanup: Cleanup,
  ours: { dir: string; halfPatch: string; d: BenchDaemon; half: number[]; hash: string },
  baseline: string,
): Promise<void> {
  const other = await lineGitRepo();
  cleanup.removeLater(other.dir);
  const base = await daemon(cleanup, other.dir, [], baseline);
  const baseHash = (await base.ok("git_line_status", { path: "big.ts" })).hash;
  const sides = [
    { name: "ours", d: ours.d, dir: ours.dir, hash: ours.hash },
    { name: "baseline", d: base, dir: other.dir, hash: baseHash },
  ];
  const gitOut = async (dir: string, args: string[], input?: string) => exec("git", args, { cwd: dir, input });
  const reset = (dir: string) => gitOut(dir, ["reset", "-q", "--", "big.ts"]);
  const times: Record<string, number[]> = { ours: [], baseline: [], git: [] };
  const cpu: Record<string, number> = { ours: 0, baseline: 0 };
  for (let i = 0; i < LINE_GIT_WARMUP + LINE_GIT_SAMPLES; i++) {
    const staged: string[] = [];
    for (const side of i % 2 ? [...sides].reverse() : sides) {
      await reset(side.dir);
      const c0 = cpuMs(side.d.child.pid);
      const [ms] = await timed(() => side.d.ok("git_stage_lines", { path: "big.ts", hash: side.hash, ranges: ours.half }));
      if (i >= LINE_GIT_WARMUP) times[side.name].push(ms), (cpu[side.name] += cpuMs(side.d.child.pid) - c0);
      staged.push((await gitOut(side.dir, ["diff", "--cached", "--", "big.ts"])).stdout);
    }
    await reset(ours.dir);
    const applied = await gitOut(ours.dir, ["apply", "--cached", "-"], ours.halfPatch);
    if (i >= LINE_GIT_WARMUP) times.git.push(applied.ms);
    const expected = (await gitOut(ours.dir, ["diff", "--cached", "--", "big.ts"])).stdout;
    if (staged.some((s) => s !== expected)) throw new Error("a git_stage_lines staged something else than git apply of the same ranges");
  }
  const perCall = (name: string) => fmt(cpu[name] / LINE_GIT_SAMPLES);
  for (const [name, peer, peerName] of [
    ["ours", times.git, "git apply --cached"],
    ["ours", times.baseline, "the baseline build"],
    ["baseline", times.git, "git apply --cached"],
  ] as const) {
    figures.add({
      figure: `git_stage_lines, ${ours.half.length} ranges${name === "baseline" ? " (baseline build)" : ""}, beside the baseline`,
      ours: median(times[name]),
      peer: median(peer),
      peerName,
      unit: "ms",
      note: `daemon CPU per call ${perCall(name)} ms`,
    });
  }
}

/** An MCP client over stdio (node running `args`, in the SDK's default environment plus `env`), and the server's pid. */
export async function mcpClient(cleanup: Cleanup, args: string[], env: Record<string, string> = {}): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: "ignore", env: { ...getDefaultEnvironment(), ...env } });
  const client = new Client({ name: "tool-layer-bench", version: "1" });
  cleanup.add("mcp client", () => client.close());
  await client.connect(transport);
  return { client, pid: transport.pid! };
}

export interface ReadSide {
  name: string;
  pid: number;
  /** The call of session `k`. */
  call: (session: number) => Call;
}

/** `busy` processes spinning on the CPU until stopped. */
export function cpuLoad(cleanup: Cleanup, busy: number): void {
  const children: ChildProcess[] = Array.from({ length: busy }, () => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
  cleanup.add("cpu load", () => Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : (c.once("exit", r), c.kill("SIGKILL")))))));
}

/** One run: SESSIONS sessions each keeping one call in flight until `total` calls are done; calls/s and each call's time. */
export async function readRun(side: ReadSide, total: number): Promise<{ perSecond: number; times: number[] }> {
  let issued = 0;
  const times: number[] = [];
  const session = async (k: number) => {
    while (issued < total) {
      issued++;
      times.push((await timed(side.call(k)))[0]);
    }
  };
  const t = performance.now();
  await Promise.all(Array.from({ length: SESSIONS }, (_, k) => session(k)));
  return { perSecond: (total / (performance.now() - t)) * 1000, times };
}

/**
 * READ_RUNS runs per side, the sides taking turns (in reverse order every other round when `alternate`, so no side
 * always follows the same one): median calls/s, pooled p50/p99, server CPU per call, and each round's calls/s.
 */
async function compareReads(sides: ReadSide[], runs = READ_RUNS, alternate = false) {
  const acc = sides.map(() => ({ rates: [] as number[], times: [] as number[], cpu: 0, clientCpu: 0 }));
  for (let r = 0; r < runs; r++) {
    const order = [...sides.entries()];
    if (alternate && r % 2) order.reverse();
    for (const [k, side] of order) {
      const c0 = cpuMs(side.pid);
      const own = process.cpuUsage();
      const run = await readRun(side, READ_CALLS);
      acc[k].cpu += cpuMs(side.pid) - c0;
      const used = process.cpuUsage(own);
      acc[k].clientCpu += (used.user + used.system) / 1000;
      acc[k].rates.push(run.perSecond);
      acc[k].times.push(...run.times);
    }
  }
  return acc.map((a) => ({
    perSecond: median(a.rates),
    rates: a.rates,
    p50: median(a.times),
    p99: percentile(a.times, 99),
    cpuPerCall: a.cpu / (runs * READ_CALLS),
    clientCpuPerCall: a.clientCpu / (runs * READ_CALLS),
  }));
}

export function checkRead(what: string, r: { isError?: unknown; content?: unknown }): void {
  if (r.isError || !Array.isArray(r.content) || !r.content.length) throw new Error(`${what}: ${JSON.stringify(r).slice(0, 300)}`);
}

/** BENCH_READ_MODE: what each read asks for (see readFixture). */
export type ReadMode = "same" | "windows" | "fresh";
/** `windows`: the larger file's lines, and the offsets (1 + 150n mod WINDOW_OFFSETS, all of them before one repeats). */
const WINDOW_FILE_LINES = 1_200;
const WINDOW_OFFSETS = 1_051;
/** `fresh`: distinct 150-line files, cycled (4,096 files, 50 MB: no cache of ours holds that many). */
const FRESH_FILES = 4_096;

export function readMode(): ReadMode {
  const mode = process.env.BENCH_READ_MODE ?? "same";
  if (mode !== "same" && mode !== "windows" && mode !== "fresh") throw new Error(`BENCH_READ_MODE: same, windows or fresh, not ${mode}`);
  return mode;
}

function sourceLines(n: number, salt = ""): string {
  return `${Array.from({ length: n }, (_, i) => `    const value${i} = compute(${i}, "some text to make a realistic line"); // ${salt}${i}`).join("\n")}\n`;
}

/**
 * The files under `dir` for a read mode, and the n-th call's arguments (each side counts its own calls, so every side
 * reads the same sequence):
 * - same: read150.ts, 150 lines, every call (a reread: our window cache answers it after the first);
 * - windows: a 150-line window of read1200.ts (1,200 lines) at offset 1 + 150n mod 1,051, so consecutive calls read
 *   consecutive windows and no window repeats within 1,051 calls (the window cache keeps 64). The MCP filesystem
 *   server has no offset: it reads `head: 150` on even calls and `tail: 150` on odd ones, the windows it has, each as
 *   many lines as ours and answered from as little of the file as it needs (it stops reading there), while ours reads
 *   and hashes the whole file on every call, as file_read always does;
 * - fresh: fresh/fNNNN.ts, 4,096 distinct 150-line files, call n reads file n mod 4,096 whole (each file's bytes seen
 *   for the first time, or 4,095 reads after they last were: nothing of ours keeps that many); the peer reads the
 *   same file whole.
 */
export function readFixture(dir: string, mode: ReadMode): { ours: (n: number) => Record<string, unknown>; peer: (n: number) => Record<string, unknown> } {
  if (mode === "same") {
    writeFileSync(path.join(dir, "read150.ts"), sourceLines(150));
    return { ours: () => ({ path: "read150.ts" }), peer: () => ({ path: path.join(dir, "read150.ts") }) };
  }
  if (mode === "windows") {
    writeFileSync(path.join(dir, "read1200.ts"), sourceLines(WINDOW_FILE_LINES));
    const abs = path.join(dir, "read1200.ts");
    return {
      ours: (n) => ({ path: "read1200.ts", offset: 1 + ((150 * n) % WINDOW_OFFSETS), limit: 150 }),
      peer: (n) => (n % 2 ? { path: abs, tail: 150 } : { path: abs, head: 150 }),
    };
  }
  mkdirSync(path.join(dir, "fresh"), { recursive: true });
  const name = (n: number) => `fresh/f${String(n % FRESH_FILES).padStart(4, "0")}.ts`;
  for (let i = 0; i < FRESH_FILES; i++) writeFileSync(path.join(dir, name(i)), sourceLines(150, `f${i} `));
  return { ours: (n) => ({ path: name(n) }), peer: (n) => ({ path: path.join(dir, name(n)) }) };
}

/** A call per session whose n-th call (counted across sessions) asks for `args(n)`. */
function counted(
  args: (n: number) => Record<string, unknown>,
  call: (a: Record<string, unknown>, session: number) => Promise<void>,
): (session: number) => Call {
  let n = 0;
  return (k) => () => call(args(n++), k);
}

async function reads(figures: Figures): Promise<void> {
  await withCleanup(async (cleanup) => {
    const dir = tempDir(cleanup, "reads");
    const mode = readMode();
    const fixture = readFixture(dir, mode);
    const jsonl = await daemon(cleanup, dir);
    const ours = await mcpClient(cleanup, [MAIN, "--mcp", "--root", dir]);
    const peer = await mcpClient(cleanup, [MCP_FILESYSTEM, dir]);
    const sides: ReadSide[] = [
      { name: "JSON lines", pid: jsonl.child.pid!, call: counted(fixture.ours, async (a, k) => void (await jsonl.ok("file_read", a, `s${k}`))) },
      {
        name: "MCP mode",
        pid: ours.pid,
        call: counted(fixture.ours, async (a) => checkRead("file_read over MCP", await ours.client.callTool({ name: "file_read", arguments: a }))),
      },
      {
        name: "MCP filesystem server",
        pid: peer.pid,
        call: counted(fixture.peer, async (a) => checkRead("read_text_file", await peer.client.callTool({ name: "read_text_file", arguments: a }))),
      },
    ];
    // BENCH_BASELINE: that build's daemon over JSON lines and in MCP mode on the same files, taking turns with ours and
    // the peer in every round (BENCH_READ_RUNS rounds, default READ_RUNS; the order reversed every other round).
    const baseline = process.env.BENCH_BASELINE;
    if (baseline) {
      const baseJsonl = await daemon(cleanup, dir, [], baseline);
      const baseMcp = await mcpClient(cleanup, [baseline, "--mcp", "--root", dir]);
      sides.push(
        {
          name: "JSON lines, baseline",
          pid: baseJsonl.child.pid!,
          call: counted(fixture.ours, async (a, k) => void (await baseJsonl.ok("file_read", a, `s${k}`))),
        },
        {
          name: "MCP mode, baseline",
          pid: baseMcp.pid,
          call: counted(fixture.ours, async (a) =>
            checkRead("file_read over MCP (baseline)", await baseMcp.client.callTool({ name: "file_read", arguments: a })),
          ),
        },
      );
    }
    const runs = Number(process.env.BENCH_READ_RUNS) || READ_RUNS;
    for (const side of sides) await readRun(side, READ_WARMUP);
    for (const loaded of [false, true]) {
      await withCleanup(async (loadCleanup) => {
        if (loaded) cpuLoad(loadCleanup, BUSY_PROCESSES);
        const [j, m, fs, bj, bm] = await compareReads(sides, runs, !!baseline);
        const when = loaded ? `beside ${BUSY_PROCESSES} busy processes` : "quiet";
        const note = (x: typeof j) =>
          `p50 ${fmt(x.p50)} / p99 ${fmt(x.p99)} ms (peer ${fmt(fs.p50)} / ${fmt(fs.p99)} ms); server CPU per read ${fmt(x.cpuPerCall)} ms (peer ${fmt(fs.cpuPerCall)} ms); the client's ${fmt(x.clientCpuPerCall)} ms (with the peer ${fmt(fs.clientCpuPerCall)} ms)`;
        figures.add({
          figure: `file_read 150 lines (${mode}), ${SESSIONS} sessions, JSON lines, ${when}`,
          ours: j.perSecond,
          peer: fs.perSecond,
          peerName: "MCP filesystem server",
          unit: "/s",
          note: note(j),
        });
        figures.add({
          figure: `file_read 150 lines (${mode}), ${SESSIONS} in flight, MCP mode, ${when}`,
          ours: m.perSecond,
          peer: fs.perSecond,
          peerName: "MCP filesystem server",
          unit: "/s",
          note: note(m),
        });
        figures.add({
          figure: `  server CPU per read, MCP mode, ${when}`,
          ours: m.cpuPerCall,
          peer: fs.cpuPerCall,
          peerName: "MCP filesystem server",
          unit: "ms",
        });
        if (!bj || !bm) return;
        // Ours against the baseline's build, round by round (the two met the same load in each round).
        const paired = (x: typeof j, b: typeof j) => `ours / baseline by round: median ${fmt(median(x.rates.map((v, i) => v / b.rates[i])))}x`;
        for (const [mode, x, b] of [
          ["JSON lines", j, bj],
          ["MCP mode", m, bm],
        ] as const) {
          figures.add({
            figure: `file_read 150 lines (${readMode()}), ${mode}, BENCH_BASELINE's build, ${when}`,
            ours: b.perSecond,
            peer: fs.perSecond,
            peerName: "MCP filesystem server",
            unit: "/s",
            note: `${note(b)}; ${paired(x, b)}; ours ${fmt(x.perSecond)} /s, server CPU per read ${fmt(x.cpuPerCall)} ms, the client's ${fmt(x.clientCpuPerCall)} ms`,
          });
        }
      });
    }
  });
}

async function writes(figures: Figures): Promise<void> {
  await withCleanup(async (cleanup) => {
    const { h32 } = await xxhash();
    const tag = (line: string) => (h32(line, 0) & 0xffff).toString(16).toUpperCase().padStart(4, "0");
    // BENCH_BASELINE: the same writes through that build's daemon on a file of its own, the two taking turns.
    const baseline = process.env.BENCH_BASELINE;
    const sides = await Promise.all(
      (baseline ? [undefined, baseline] : [undefined]).map(async (main) => {
        const dir = tempDir(cleanup, "writes");
        const big = Array.from({ length: BIG_LINES }, (_, i) => `  line ${i}: ${"lorem ipsum dolor sit amet ".repeat(2)}`);
        writeFileSync(path.join(dir, "big.txt"), big.join("\n") + "\n");
        const d = await daemon(cleanup, dir, [], main);
        const hash = (await d.ok("file_read", { path: "big.txt", lines: [1] })).hash as string;
        return { dir, big, d, hash, times: [] as number[], cpu: [] as number[] };
      }),
    );
    const warmup = 10;
    for (let i = 0; i < warmup + WRITE_BATCHES; i++) {
      for (const side of i % 2 ? [...sides].reverse() : sides) {
        const { big, d } = side;
        const edits = Array.from({ length: 10 }, (_, k) => {
          const line = k * (BIG_LINES / 10) + 1 + (i % 50);
          const content = `  edited ${i} ${k}`;
          const edit = { type: "replace", startline: `${line}:${tag(big[line - 1])}`, content };
          big[line - 1] = content;
          return edit;
        });
        const c0 = cpuMs(d.child.pid);
        const [ms, r] = await timed(() => d.ok("file_write", { path: "big.txt", hash: side.hash, edits }));
        side.hash = r.hash;
        if (i < warmup) continue;
        side.times.push(ms);
        side.cpu.push(cpuMs(d.child.pid) - c0);
      }
    }
    for (const { dir, big } of sides) {
      const written = readFileSync(path.join(dir, "big.txt"), "utf8");
      if (written !== big.join("\n") + "\n") throw new Error("file_write left the file other than the edits say");
    }
    const [ours, base] = sides;
    const cpuNote = (cpu: number[]) => fmt(cpu.reduce((a, b) => a + b, 0) / cpu.length);
    figures.add({
      figure: `10-edit file_write on ${BIG_LINES} lines, p50`,
      ours: median(ours.times),
      ...(base ? { peer: median(base.times), peerName: "the baseline build" } : {}),
      unit: "ms",
      note:
        `p90 ${fmt(percentile(ours.times, 90))} ms, p99 ${fmt(percentile(ours.times, 99))} ms; daemon CPU per call ${cpuNote(ours.cpu)} ms (10 ms clock ticks, averaged)` +
        (base ? `; baseline p90 ${fmt(percentile(base.times, 90))} ms, CPU ${cpuNote(base.cpu)} ms` : ""),
    });
  });
}

/** A TypeScript project of LSP_MODULES modules, each importing the one before; main.ts has one type error. */
function tsProject(dir: string): void {
  writeFileSync(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", noEmit: true }, include: ["src"] }),
  );
  mkdirSync(path.join(dir, "src"), { recursive: true });
  for (let i = 0; i < LSP_MODULES; i++) {
    const prev = i ? `import { Service${i - 1}, helper${i - 1} } from "./module${i - 1}.js";\n` : "";
    const body = [
      `export interface Options${i} {\n  name: string;\n  retries: number;\n  tags: readonly string[];\n}`,
      `export class Service${i} {\n  private readonly cache = new Map<string, number>();\n  constructor(readonly options: Options${i}) {}\n` +
        `  run(key: string): number {\n    const hit = this.cache.get(key);\n    if (hit !== undefined) return hit;\n    const value = key.length * ${i + 1};\n    this.cache.set(key, value);\n    return value;\n  }\n}`,
      `export function helper${i}(values: number[]): number {\n  return values.reduce((a, b) => a + b, 0)${i ? ` + helper${i - 1}([1, 2])` : ""};\n}`,
      i ? `export const chained${i} = new Service${i - 1}({ name: "m${i}", retries: 1, tags: [] }).run("k") + helper${i - 1}([${i}]);` : "",
    ];
    writeFileSync(path.join(dir, "src", `module${i}.ts`), prev + body.join("\n\n") + "\n");
  }
  const last = LSP_MODULES - 1;
  writeFileSync(
    path.join(dir, "src/main.ts"),
    `import { Service${last}, helper${last} } from "./module${last}.js";\n\nconst s = new Service${last}({ name: "main", retries: 2, tags: ["a"] });\nconst total: string = s.run("x") + helper${last}([1]);\nconsole.log(total);\n`,
  );
}

/** The same language server as the daemon's, with its initialization options, over a bare JSON-RPC connection. */
async function bareLsp(dir: string, want: "diagnostics" | "symbols"): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [path.join(PACKAGES, "typescript-language-server/lib/cli.mjs"), "--stdio", "--log-level", "2"], {
    cwd: dir,
    stdio: "pipe",
    detached: true,
  });
  const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  child.stderr.resume();
  let onPublish: (p: { uri: string; diagnostics: unknown[] }) => void = () => {};
  conn.onNotification("textDocument/publishDiagnostics", (p: { uri: string; diagnostics: unknown[] }) => onPublish(p));
  conn.onRequest(() => null);
  conn.onNotification(() => {});
  conn.listen();
  try {
    const root = pathToFileURL(dir).href;
    await conn.sendRequest("initialize", {
      processId: process.pid,
      rootUri: root,
      workspaceFolders: [{ uri: root, name: "w" }],
      capabilities: { textDocument: { publishDiagnostics: {}, documentSymbol: { hierarchicalDocumentSymbolSupport: true } } },
      initializationOptions: {
        tsserver: { path: path.join(PACKAGES, "typescript/lib/tsserver.js"), useSyntaxServer: "never", logVerbosity: "off" },
        plugins: [],
        disableAutomaticTypingAcquisition: true,
        hostInfo: "tool-layer-bench",
      },
    });
    await conn.sendNotification("initialized", {});
    const uri = pathToFileURL(path.join(dir, "src/main.ts")).href;
    const diagnosed = new Promise<void>((resolve) => (onPublish = (p) => p.uri === uri && p.diagnostics.length > 0 && resolve()));
    await conn.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "typescript", version: 1, text: readFileSync(path.join(dir, "src/main.ts"), "utf8") },
    });
    if (want === "diagnostics") await diagnosed;
    else {
      const symbols = (await conn.sendRequest("textDocument/documentSymbol", { textDocument: { uri } })) as unknown[];
      if (!symbols?.length) throw new Error("bare documentSymbol: nothing");
    }
    return performance.now() - t0;
  } finally {
    conn.dispose();
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}

async function lsp(figures: Figures): Promise<void> {
  const ours = { diagnostics: [] as number[], symbols: [] as number[] };
  const bare = { diagnostics: [] as number[], symbols: [] as number[] };
  for (let r = 0; r < LSP_ROUNDS; r++) {
    for (const want of ["diagnostics", "symbols"] as const) {
      await withCleanup(async (cleanup) => {
        const dir = tempDir(cleanup, "lsp");
        tsProject(dir);
        const d = await daemon(cleanup, dir);
        const [ms, r] = await timed(() =>
          want === "diagnostics" ? d.ok("lsp_diagnostics", { path: "src/main.ts", wait_ms: 100_000 }) : d.ok("lsp_symbols", { path: "src/main.ts" }),
        );
        if (want === "diagnostics" && (r.status !== "current" || r.diagnostics.length !== 1))
          throw new Error(`lsp_diagnostics: ${JSON.stringify(r).slice(0, 300)}`);
        ours[want].push(ms);
      });
      await withCleanup(async (cleanup) => {
        const dir = tempDir(cleanup, "lsp");
        tsProject(dir);
        bare[want].push(await bareLsp(dir, want));
      });
    }
  }
  const note = `${LSP_MODULES + 1} modules; ours from the call to a ready daemon (the server starts on it, sandboxed where bwrap works); bare from the server's spawn`;
  figures.add({
    figure: "first lsp_diagnostics, cold",
    ours: median(ours.diagnostics),
    peer: median(bare.diagnostics),
    peerName: "bare tsls: spawn -> first publish",
    unit: "ms",
    note,
  });
  figures.add({
    figure: "first lsp_symbols, cold",
    ours: median(ours.symbols),
    peer: median(bare.symbols),
    peerName: "bare tsls: spawn -> documentSymbol",
    unit: "ms",
  });
}
