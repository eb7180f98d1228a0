/**
 * `npm run bench -- profile-reads`: why file_read from 8 sessions does as it does against the MCP filesystem server,
 * quiet and beside two busy processes, seen from outside each server: every server (the daemon over JSON lines, the
 * daemon in MCP mode, the filesystem server) runs under `--cpu-prof` with the probe preload (probe.ts: event-loop delay,
 * GC, CPU, over the timed window only), then again under `strace -c -f` for its system calls per read. Prints per read:
 * CPU, GC, loop delay, syscalls, and each server's functions and categories by self time within the window.
 * BENCH_READ_MODE=same|windows|fresh chooses the reads as for the caller bench (readFixture); BENCH_PROFILE_SIDES=JSON
 * lines,MCP mode limits the sides. The profiles stay in $BENCH_PROFILE_DIR (default: a temp folder, named in the output) for a closer look.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { spawn } from "node:child_process";
import { BenchDaemon, type Cleanup, MAIN, fmt, load, withCleanup } from "./lib.js";
import { MCP_FILESYSTEM, type ReadSide, SESSIONS, checkRead, cpuLoad, mcpClient, readFixture, readMode, readRun } from "./caller.js";

const PROBE = fileURLToPath(new URL("./probe.js", import.meta.url));
const CALLS = 6_000;
const WARMUP = 500;

interface Probe {
  fromUs: number;
  toUs: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  loopDelayMs: { p50: number; p99: number; max: number; mean: number };
  gc: Record<string, { count: number; ms: number }>;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Self time (µs) per function and per category of the samples between `fromUs` and `toUs` (the probe's window). */
function selfTimes(profile: CpuProfile, fromUs: number, toUs: number): { functions: Map<string, number>; categories: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const functions = new Map<string, number>();
  const categories = new Map<string, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    const dt = profile.timeDeltas[i + 1] ?? 0;
    if (t < fromUs || t > toUs) continue;
    const f = byId.get(profile.samples[i])!;
    const where = f.url ? `${f.url.replace(/^file:\/\/.*?\/(dist|node_modules)\//, "$1/")}:${f.lineNumber + 1}` : "";
    const name = `${f.functionName || "(anonymous)"} ${where}`.trim();
    functions.set(name, (functions.get(name) ?? 0) + dt);
    const category = f.functionName.startsWith("(")
      ? f.functionName
      : f.url.startsWith("node:")
        ? "node internals"
        : !f.url
          ? "native (V8 builtins, syscalls' JS side)"
          : f.url.includes("/node_modules/")
            ? `node_modules/${/node_modules\/((@[^/]+\/)?[^/]+)/.exec(f.url)?.[1]}`
            : f.url.includes("/dist/src/")
              ? "our code (dist/src)"
              : "other";
    categories.set(category, (categories.get(category) ?? 0) + dt);
  }
  return { functions, categories };
}

/** CPU ms of the process's main thread and of its other threads (libuv's pool, V8's GC helpers), and context switches. */
function threads(pid: number): { mainMs: number; otherMs: number; voluntary: number; involuntary: number } {
  const out = { mainMs: 0, otherMs: 0, voluntary: 0, involuntary: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ms = (Number(f[11]) + Number(f[12])) * 10; // clock ticks of 10 ms
      if (tid === String(pid)) out.mainMs += ms;
      else out.otherMs += ms;
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8");
      out.voluntary += Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      out.involuntary += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
    } catch {
      /* a thread that ended meanwhile */
    }
  }
  return out;
}

const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);

/** A side to profile: started with the given node flags and probe file; its pid and a call per session. */
type Start = (cleanup: Cleanup, nodeArgs: string[], probeOut: string) => Promise<ReadSide>;

function starts(dir: string, fixture: ReturnType<typeof readFixture>): Record<string, Start> {
  // Each start counts its calls afresh: every side reads the same sequence (BENCH_READ_MODE, see readFixture).
  const counted = (args: (n: number) => Record<string, unknown>, call: (a: Record<string, unknown>, k: number) => Promise<void>) => {
    let n = 0;
    return (k: number) => () => call(args(n++), k);
  };
  return {
    "JSON lines": async (cleanup, nodeArgs, probeOut) => {
      process.env.BENCH_PROBE_OUT = probeOut; // BenchDaemon's child inherits our environment
      const d = new BenchDaemon(dir, [], { nodeArgs, quiet: true });
      delete process.env.BENCH_PROBE_OUT;
      cleanup.add("daemon", () => d.close());
      await d.ready;
      return { name: "JSON lines", pid: d.child.pid!, call: counted(fixture.ours, async (a, k) => void (await d.ok("file_read", a, `s${k}`))) };
    },
    "MCP mode": async (cleanup, nodeArgs, probeOut) => {
      const c = await mcpClient(cleanup, [...nodeArgs, MAIN, "--mcp", "--root", dir], { BENCH_PROBE_OUT: probeOut });
      return {
        name: "MCP mode",
        pid: c.pid,
        call: counted(fixture.ours, async (a) => checkRead("file_read", await c.client.callTool({ name: "file_read", arguments: a }))),
      };
    },
    "MCP filesystem server": async (cleanup, nodeArgs, probeOut) => {
      const c = await mcpClient(cleanup, [...nodeArgs, MCP_FILESYSTEM, dir], { BENCH_PROBE_OUT: probeOut });
      return {
        name: "MCP filesystem server",
        pid: c.pid,
        call: counted(fixture.peer, async (a) => checkRead("read_text_file", await c.client.callTool({ name: "read_text_file", arguments: a }))),
      };
    },
  };
}

/** System calls of `pid` and its threads while `body` runs, from `strace -c -f` (counts, not times: strace slows it). */
async function syscalls(pid: number, out: string, body: () => Promise<unknown>): Promise<Map<string, number>> {
  const strace = spawn("strace", ["-c", "-f", "-o", out, "-p", String(pid)], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 500)); // attached (strace prints nothing to wait on)
  await body();
  const done = new Promise((r) => strace.once("exit", r));
  strace.kill("SIGINT");
  await done;
  const counts = new Map<string, number>();
  for (const line of readFileSync(out, "utf8").split("\n")) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (m && m[2] !== "total") counts.set(m[2], Number(m[1]));
  }
  return counts;
}

export default async function main(): Promise<void> {
  const out = process.env.BENCH_PROFILE_DIR ?? mkdtempSync(path.join(tmpdir(), "tool-layer-bench-profile-"));
  mkdirSync(out, { recursive: true });
  console.log(`profiles in ${out}; ${CALLS} reads of 150 lines per side, ${SESSIONS} sessions at once`);
  await withCleanup(async (cleanup) => {
    const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-bench-profile-tree-"));
    cleanup.removeLater(dir);
    const mode = readMode();
    const fixture = readFixture(dir, mode);
    console.log(`BENCH_READ_MODE=${mode}`);
    for (const loaded of [false, true]) {
      const when = loaded ? "loaded" : "quiet";
      console.log(`\n### ${when} (load ${load()})`);
      const only = process.env.BENCH_PROFILE_SIDES?.split(",").map((x) => x.trim());
      for (const [name, start] of Object.entries(starts(dir, fixture))) {
        if (only && !only.includes(name)) continue;
        const slug = `${when}-${name.replace(/\W+/g, "-")}`;
        const profDir = path.join(out, slug);
        const probeOut = path.join(out, `${slug}.probe.json`);
        let perSecond = 0;
        let split = { mainMs: 0, otherMs: 0, voluntary: 0, involuntary: 0 };
        let clientMs = 0;
        await withCleanup(async (inner) => {
          const side = await start(inner, [`--import=${PROBE}`, "--cpu-prof", `--cpu-prof-dir=${profDir}`], probeOut);
          await readRun(side, WARMUP);
          if (loaded) cpuLoad(inner, 2);
          process.kill(side.pid, "SIGUSR2");
          const t0 = threads(side.pid);
          const c0 = process.cpuUsage();
          perSecond = (await readRun(side, CALLS)).perSecond;
          const c = process.cpuUsage(c0);
          clientMs = (c.user + c.system) / 1000;
          const t1 = threads(side.pid);
          process.kill(side.pid, "SIGUSR2");
          split = {
            mainMs: t1.mainMs - t0.mainMs,
            otherMs: t1.otherMs - t0.otherMs,
            voluntary: t1.voluntary - t0.voluntary,
            involuntary: t1.involuntary - t0.involuntary,
          };
          await new Promise((r) => setTimeout(r, 200)); // the probe writes its file on the signal
        });
        const probe = JSON.parse(readFileSync(probeOut, "utf8")) as Probe;
        const prof = JSON.parse(readFileSync(path.join(profDir, readdirSync(profDir)[0]), "utf8")) as CpuProfile;
        const { functions, categories } = selfTimes(prof, probe.fromUs, probe.toUs);
        const perCall = (ms: number) => `${fmt((ms * 1000) / CALLS)} µs`;
        const gcMs = Object.values(probe.gc).reduce((a, g) => a + g.ms, 0);
        console.log(
          `\n${name}: ${fmt(perSecond)} reads/s; per read CPU ${perCall(probe.cpuUserMs + probe.cpuSystemMs)} (user ${perCall(probe.cpuUserMs)}, system ${perCall(probe.cpuSystemMs)}), GC ${perCall(gcMs)} (${Object.entries(
            probe.gc,
          )
            .map(([k, g]) => `${k} ${g.count}x ${fmt(g.ms)} ms`)
            .join(", ")})`,
        );
        console.log(
          `  CPU per read on the main thread ${perCall(split.mainMs)}, on the others ${perCall(split.otherMs)}; context switches per read: voluntary ${fmt(split.voluntary / CALLS)}, involuntary ${fmt(split.involuntary / CALLS)}; the client's (this process's) CPU per call ${perCall(clientMs)}`,
        );
        console.log(`  event-loop delay p50 ${fmt(probe.loopDelayMs.p50)} / p99 ${fmt(probe.loopDelayMs.p99)} / max ${fmt(probe.loopDelayMs.max)} ms`);
        console.log(
          `  self time by category, per read: ${top(categories, 8)
            .map(([k, us]) => `${k} ${fmt(us / CALLS)} µs`)
            .join("; ")}`,
        );
        console.log("  top functions by self time, per read:");
        for (const [f, us] of top(functions, 12)) console.log(`    ${fmt(us / CALLS).padStart(7)} µs  ${f}`);

        await withCleanup(async (inner) => {
          const side = await start(inner, [], path.join(out, `${slug}.strace-probe.json`));
          await readRun(side, WARMUP);
          if (loaded) cpuLoad(inner, 2);
          const counts = await syscalls(side.pid, path.join(out, `${slug}.strace`), () => readRun(side, CALLS));
          const total = [...counts.values()].reduce((a, b) => a + b, 0);
          console.log(
            `  syscalls per read ${fmt(total / CALLS)}: ${top(counts, 10)
              .map(([k, n]) => `${k} ${fmt(n / CALLS)}`)
              .join(", ")}`,
          );
        });
      }
    }
  });
}
