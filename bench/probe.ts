/**
 * A preload (`node --import=…/probe.js SCRIPT`) that lets the bench look into a server it spawns without touching the
 * server's code: the first SIGUSR2 starts a window, the second writes what happened in it to $BENCH_PROBE_OUT as JSON
 * (event-loop delay, GC pauses by kind, CPU, the monotonic clock at both marks, for cutting a --cpu-prof profile to the
 * window). SIGTERM exits through process.exit, so that --cpu-prof writes its profile (a signal death writes none).
 */
import { writeFileSync } from "node:fs";
import { type PerformanceEntry, PerformanceObserver, monitorEventLoopDelay } from "node:perf_hooks";

const out = process.env.BENCH_PROBE_OUT;
if (out) {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  let gc: Record<string, { count: number; ms: number }> = {};
  const KINDS: Record<number, string> = { 1: "scavenge", 2: "mark-sweep-compact", 4: "incremental", 8: "weak-callbacks" };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
      const kind = KINDS[e.detail?.kind ?? 0] ?? "other";
      (gc[kind] ??= { count: 0, ms: 0 }).count++;
      gc[kind].ms += e.duration;
    }
  }).observe({ entryTypes: ["gc"] });
  let start: { cpu: NodeJS.CpuUsage; atUs: number } | undefined;
  const nowUs = () => Number(process.hrtime.bigint() / 1000n);
  process.on("SIGUSR2", () => {
    if (!start) {
      delay.reset();
      delay.enable();
      gc = {};
      start = { cpu: process.cpuUsage(), atUs: nowUs() };
      return;
    }
    const cpu = process.cpuUsage(start.cpu);
    delay.disable();
    const ms = (ns: number) => ns / 1e6;
    writeFileSync(
      out,
      JSON.stringify({
        fromUs: start.atUs,
        toUs: nowUs(),
        cpuUserMs: cpu.user / 1000,
        cpuSystemMs: cpu.system / 1000,
        loopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max), mean: ms(delay.mean) },
        gc,
      }),
    );
    start = undefined;
  });
  process.on("SIGTERM", () => process.exit(0));
}
