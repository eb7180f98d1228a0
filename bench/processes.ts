import { spawn } from "node:child_process";
import { Supervisor } from "../src/platform/supervisor.js";
import { median, percentile, report } from "./lib.js";

/**
 * The supervisor's cost per process (issue 9: at most 1 ms over a bare spawn): `true` run to its end through
 * Supervisor.run (pool slot, workspace environment, watchdog registration, output collection, the group's cleanup)
 * against node's spawn with the same stdio and the same process-group choice, interleaved so all see the same machine.
 * A process group of its own (setsid) costs by itself; it is measured on both sides.
 */
const RUNS = 300;

function bare(detached: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("true", [], { stdio: ["ignore", "pipe", "pipe"], detached });
    child.on("error", reject);
    child.stdout.resume();
    child.stderr.resume();
    child.on("close", () => resolve());
  });
}

export default async function main(): Promise<void> {
  const supervisor = new Supervisor();
  supervisor.startWatchdog();
  const cases = {
    group: () => supervisor.run({ cmd: "true", args: [], cwd: process.cwd() }),
    bareGroup: () => bare(true),
    noGroup: () => supervisor.run({ cmd: "true", args: [], cwd: process.cwd(), group: false }),
    bare: () => bare(false),
  };
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, [] as number[]])) as Record<keyof typeof cases, number[]>;
  for (let i = 0; i < RUNS; i++) {
    for (const [name, run] of Object.entries(cases)) {
      const t = performance.now();
      await run();
      times[name as keyof typeof cases].push(performance.now() - t);
    }
  }
  report("spawn `true`, supervisor, own group (median)", median(times.group), median(times.bareGroup), "ms", "bare detached spawn");
  report("spawn `true`, supervisor, no group (median)", median(times.noGroup), median(times.bare), "ms", "bare spawn");
  for (const [label, a, b] of [["own group", times.group, times.bareGroup], ["no group", times.noGroup, times.bare]] as const) {
    console.log(`${`  overhead per process, ${label}`.padEnd(48)} ${(median(a) - median(b)).toFixed(3)} ms (p90 ${percentile(a, 90).toFixed(2)} / ${percentile(b, 90).toFixed(2)} ms)`);
  }
  await supervisor.stop();
}
