import { Supervisor } from "../src/platform/supervisor.js";
import { bareSpawn, interleaved, median, percentile, report } from "./lib.js";

/**
 * The supervisor's cost per process (issue 9: at most 1 ms over a bare spawn): `true` run to its end through
 * Supervisor.run (pool slot, workspace environment, watchdog registration, output collection, the group's cleanup)
 * against node's spawn with the same stdio and the same process-group choice, interleaved so all see the same machine.
 * A process group of its own (setsid) costs by itself; it is measured on both sides. Once the watchdog runs the
 * daemon lives in its cgroup tree, so a short-lived child is born there at no cost; a long-lived one (spawnLong: a
 * server, a terminal command) also joins a cgroup of its own before it execs (cgroup-tree.ts), measured apart.
 */
const RUNS = 300;

export default async function main(): Promise<void> {
  const supervisor = new Supervisor();
  supervisor.startWatchdog();
  const times = await interleaved(
    {
      group: () => supervisor.run({ cmd: "true", args: [], cwd: process.cwd() }),
      long: async () => {
        const m = await supervisor.spawnLong({ cmd: "true", args: [], cwd: process.cwd() });
        m.child.stdout.resume();
        m.child.stderr.resume();
        await m.exited;
      },
      bareGroup: () => bareSpawn("true", [], true),
      noGroup: () => supervisor.run({ cmd: "true", args: [], cwd: process.cwd(), group: false }),
      bare: () => bareSpawn("true", [], false),
    },
    RUNS,
  );
  report("spawn `true`, supervisor, own group (median)", median(times.group), median(times.bareGroup), "ms", "bare detached spawn");
  report("spawn `true`, supervisor, no group (median)", median(times.noGroup), median(times.bare), "ms", "bare spawn");
  report("spawn `true`, long-lived, own cgroup (median)", median(times.long), median(times.bareGroup), "ms", "bare detached spawn");
  const pairs = [
    ["own group", times.group, times.bareGroup],
    ["no group", times.noGroup, times.bare],
    ["long-lived", times.long, times.bareGroup],
  ] as const;
  for (const [label, a, b] of pairs) {
    console.log(
      `${`  overhead per process, ${label}`.padEnd(48)} ${(median(a) - median(b)).toFixed(3)} ms (p90 ${percentile(a, 90).toFixed(2)} / ${percentile(b, 90).toFixed(2)} ms)`,
    );
  }
  await supervisor.stop();
}
