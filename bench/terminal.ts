import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { EventBus } from "../src/platform/bus.js";
import { Supervisor } from "../src/platform/supervisor.js";
import { checkCommandSync, initShellParser } from "../src/terminal/shell-parse.js";
import { Terminal } from "../src/terminal/terminal.js";
import { Workspace } from "../src/workspace.js";
import { BenchDaemon, bareSpawn, cpuMs, interleaved, latencies, median, percentile, report, rssMb, removeTree } from "./lib.js";

/**
 * Issue 14's figures: the sandbox's cost per command over bare `bash -c` (median of 50, target at most 20 ms), the write
 * check's cost per command line (target at most 1 ms), and 100 MB of output through the daemon with bounded memory.
 */
const RUNS = 50;
const BIG_OUTPUT_BYTES = 100_000_000;
/** Command lines of the kinds models send, nested and long ones included. */
const LINES = [
  "npm test",
  "npm run build 2>&1 | tail -50",
  "ls -la src/ && git status --short",
  "grep -rn 'TODO' src | head -20",
  "cd packages/app && npx tsc --noEmit -p tsconfig.json 2>&1 | grep -v node_modules",
  'bash -c \'for f in src/*.ts; do echo "$f"; wc -l "$f"; done\' 2>/dev/null',
  "find . -name '*.log' -mtime +7 -exec rm {} + ; echo done",
  "cat <<'EOF' | python3 -\nimport sys\nprint(sys.version)\nEOF",
  "timeout 60 env CI=1 nice -n 5 xargs -n1 echo < /dev/null",
  "echo $(git rev-parse HEAD) $(date +%s) >/dev/null; sed -n '1,20p' README.md",
];

async function sandboxOverhead(): Promise<void> {
  const root = mkdtempSync(path.join(os.tmpdir(), "tool-layer-bench-terminal-"));
  const state = mkdtempSync(path.join(os.tmpdir(), "tool-layer-bench-state-"));
  const supervisor = new Supervisor();
  supervisor.startWatchdog();
  const ws = new Workspace({ root }, supervisor, new EventBus());
  const terminal = new Terminal(ws, { stateDir: state });
  const off = new Terminal(ws, { stateDir: state, sandbox: "off" });
  const setup = await terminal.ready();
  await off.ready();
  const sandboxed = await terminal.plan({ command: "true" });
  const unsandboxed = await off.plan({ command: "true" });
  const times = await interleaved(
    {
      bare: () => bareSpawn("bash", ["--noprofile", "--norc", "-c", "true"], true),
      bwrap: () => supervisor.run({ cmd: sandboxed.argv[0], args: sandboxed.argv.slice(1), cwd: root, exactEnv: sandboxed.env }),
      runner: () => terminal.run(sandboxed, { timeoutMs: 10_000 }),
      runnerOff: () => off.run(unsandboxed, { timeoutMs: 10_000 }),
    },
    RUNS,
  );
  const limits = setup.held.pids || setup.held.memory ? "with its cgroup" : "no cgroup limits here";
  console.log(`sandbox: ${setup.probe.available ? setup.probe.version : setup.probe.reason}; ${limits}`);
  report("bare `bash -c true`, detached spawn (median)", median(times.bare), undefined, "ms");
  report("bwrap argv through the supervisor (median)", median(times.bwrap), median(times.bare), "ms", "bare bash");
  report("the runner, sandboxed (output file, cgroup) (median)", median(times.runner), median(times.bare), "ms", "bare bash");
  report("the runner, --terminal-sandbox off (median)", median(times.runnerOff), median(times.bare), "ms", "bare bash");
  console.log(
    `${"  sandbox overhead per command (target <= 20 ms)".padEnd(48)} ${(median(times.runner) - median(times.bare)).toFixed(2)} ms (p90 ${percentile(times.runner, 90).toFixed(1)} / ${percentile(times.bare, 90).toFixed(1)} ms)`,
  );
  await terminal.dispose();
  await off.dispose();
  await supervisor.stop();
  removeTree(root);
  removeTree(state);
}

async function checkCost(): Promise<void> {
  await initShellParser();
  for (const line of LINES) checkCommandSync(line); // warm up
  const perLine: number[] = [];
  const ROUNDS = 200;
  for (let r = 0; r < ROUNDS; r++) {
    for (const line of LINES) {
      const t = performance.now();
      checkCommandSync(line);
      perLine.push(performance.now() - t);
    }
  }
  report("parse and verdict per command line (median)", median(perLine) * 1000, undefined, "µs");
  report("parse and verdict per command line (p99)", percentile(perLine, 99) * 1000, undefined, "µs");
}

async function bigOutput(): Promise<void> {
  const root = mkdtempSync(path.join(os.tmpdir(), "tool-layer-bench-terminal-"));
  writeFileSync(path.join(root, "a.txt"), "a\n");
  const d = new BenchDaemon(root);
  await d.ready;
  const pid = d.child.pid!;
  await d.call("terminal_run", { command: "true" }); // the probe and the grammar are loaded
  const before = rssMb(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 20);
  const cpu = cpuMs(pid);
  const t = performance.now();
  const r = await d.call("terminal_run", { command: `yes 'a line of output, about forty bytes long' | head -c ${BIG_OUTPUT_BYTES}` });
  const ms = performance.now() - t;
  clearInterval(sampler);
  const after = rssMb(pid);
  const res = r.result;
  report("100 MB of output: terminal_run round trip", ms, undefined, "ms");
  report("  the daemon's CPU for it", cpuMs(pid) - cpu, undefined, "ms");
  console.log(`${"  daemon RSS before / peak / after".padEnd(48)} ${before.toFixed(0)} / ${peak.toFixed(0)} / ${after.toFixed(0)} MB`);
  console.log(`${"  output_bytes, output chars, truncated".padEnd(48)} ${res.output_bytes} / ${res.output.length} / ${res.truncated}`);
  await d.close();
  removeTree(root);
}

async function roundTrip(): Promise<void> {
  const root = mkdtempSync(path.join(os.tmpdir(), "tool-layer-bench-terminal-"));
  writeFileSync(path.join(root, "a.txt"), "a\n");
  const d = new BenchDaemon(root);
  await d.ready;
  await d.call("terminal_run", { command: "true" });
  const times = await latencies(() => d.call("terminal_run", { command: "true" }), RUNS);
  report("terminal_run `true` through the daemon (median)", median(times), undefined, "ms");
  console.log("  (includes waiting for the watcher to deliver the command's changes: its batch delay and window)");
  await d.close();
  removeTree(root);
}

export default async function main(): Promise<void> {
  await checkCost();
  await sandboxOverhead();
  await roundTrip();
  await bigOutput();
}
