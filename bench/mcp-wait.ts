import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BenchDaemon, fmt, interleaved, load, median, percentile, report } from "./lib.js";

/**
 * Issue 22: a call to a passthrough tool may wait for its server's start; once the server is up the wait must cost
 * nothing. A passthrough call's round trip, client side, through this build's daemon against another build's (before
 * the change), both on the same test server, calls interleaved. `BENCH_BEFORE_MAIN=/path/to/dist/src/main.js` names
 * the other build; without it the suite says so and stops. `npm run bench -- mcp-wait`.
 */

const FIXTURE = fileURLToPath(new URL("../../test/fixtures/mcp-test-server.mjs", import.meta.url));
const CALLS = 2_000;
const WARMUP = 200;

export default async function main(): Promise<void> {
  const before = process.env.BENCH_BEFORE_MAIN;
  if (!before) {
    console.log("mcp-wait: set BENCH_BEFORE_MAIN to the daemon (dist/src/main.js) of a build before issue 22");
    return;
  }
  const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-bench-mcp-wait-"));
  const config = path.join(dir, "servers.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { bench: { command: process.execPath, args: [FIXTURE] } } }));
  const root = (name: string) => mkdtempSync(path.join(dir, `${name}-`));
  const args = ["--mcp-config", config];
  const daemons = {
    after: new BenchDaemon(root("after"), args, { quiet: true }),
    before: new BenchDaemon(root("before"), args, { quiet: true, main: before }),
  };
  try {
    for (const d of Object.values(daemons)) {
      await d.ready;
      await d.waitFor((e) => e.event === "tools.changed" && e.data.added.includes("bench_echo"));
    }
    const call = (d: BenchDaemon) => () => d.ok("bench_echo", { text: "hello" });
    // Each order half the time: the case that goes first in a round must not carry a bias of its own.
    const one = await interleaved({ after: call(daemons.after), before: call(daemons.before) }, CALLS / 2, WARMUP);
    const other = await interleaved({ before: call(daemons.before), after: call(daemons.after) }, CALLS / 2, WARMUP);
    const times = { after: [...one.after, ...other.after], before: [...one.before, ...other.before] };
    report("passthrough call, server up (median)", median(times.after), median(times.before), "ms", "before issue 22");
    console.log(
      `${"  ratio after / before (median)".padEnd(48)} ${(median(times.after) / median(times.before)).toFixed(3)}; p90 ${fmt(percentile(times.after, 90))} / ${fmt(percentile(times.before, 90))} ms; load ${load()}`,
    );
  } finally {
    await Promise.all(Object.values(daemons).map((d) => d.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
