import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { supervisedSpawn } from "../src/mcp/child-transport.js";
import { parseMcpConfig } from "../src/mcp/config.js";
import { type McpToolInfo, ServerConnection } from "../src/mcp/server-connection.js";
import { Supervisor } from "../src/platform/supervisor.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { BenchDaemon, fmt, interleaved, median, percentile, report, removeTree } from "./lib.js";

/**
 * The MCP passthrough's cost (issue 15): ServerConnection (the daemon's own stdio transport over a child it spawns)
 * against the SDK's own Client over StdioClientTransport, both on the test server, in the same run.
 * `node dist/bench/mcp.js`, or as the `mcp` suite of bench/run.ts.
 */

const FIXTURE = fileURLToPath(new URL("../../test/fixtures/mcp-test-server.mjs", import.meta.url));
const STARTS = 5;
const CALLS = 2_000;
const BIG_CALLS = 200;
/** An echo of this size: a large read result, where framing and parsing show. */
const BIG_TEXT = "x".repeat(100_000);
const LIST_CHANGES = 20;
/** The servers' owner, as the daemon's supervisor is. */
const processes = new Supervisor();

function connection(onToolsChanged?: (t: McpToolInfo[]) => void): ServerConnection {
  const entry = parseMcpConfig(JSON.stringify({ mcpServers: { bench: { command: process.execPath, args: [FIXTURE] } } }), {
    source: "mcp-config",
    file: null,
    root: process.cwd(),
    env: {},
  }).servers[0];
  return new ServerConnection(entry, { spawn: supervisedSpawn(processes, "mcp bench"), onToolsChanged });
}

async function sdkClient(): Promise<Client> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE], stderr: "ignore" }));
  await client.listTools();
  return client;
}

export default async function main(): Promise<void> {
  // Spawn + initialize + the first tools/list, alternating so both see the same machine.
  const oursStart: number[] = [];
  const sdkStart: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    let t = performance.now();
    const c = connection();
    await c.start();
    oursStart.push(performance.now() - t);
    await c.close();
    t = performance.now();
    const s = await sdkClient();
    sdkStart.push(performance.now() - t);
    await s.close();
  }
  report("spawn + initialize + tools/list (median)", median(oursStart), median(sdkStart), "ms", "SDK StdioClientTransport");

  const ours = connection();
  await ours.start();
  const sdk = await sdkClient();
  for (const [label, n, text] of [
    ["tools/call echo, small (median)", CALLS, "hello"],
    ["tools/call echo, 100 KB (median)", BIG_CALLS, BIG_TEXT],
  ] as const) {
    const { a, b } = await interleaved({ a: () => ours.callTool("echo", { text }), b: () => sdk.callTool({ name: "echo", arguments: { text } }) }, n);
    report(label, median(a), median(b), "ms", "SDK client");
    console.log(
      `${"  p90 ours / SDK".padEnd(48)} ${fmt(percentile(a, 90))} / ${fmt(percentile(b, 90))} ms; overhead per call ${fmt(median(a) - median(b))} ms`,
    );
  }
  await ours.close();
  await sdk.close();

  // tools/list_changed: from the add_tool answer (the server sent the notification before it) to the callback.
  let resolveChanged!: () => void;
  const watched = connection(() => resolveChanged());
  await watched.start();
  const latencies: number[] = [];
  for (let i = 0; i < LIST_CHANGES; i++) {
    const changed = new Promise<void>((r) => (resolveChanged = r));
    await watched.callTool("add_tool", { name: `added_${i}` });
    const t = performance.now();
    await changed;
    latencies.push(performance.now() - t);
  }
  await watched.close();
  report("tools/list_changed to callback (median)", median(latencies), undefined, "ms");
  console.log(`${"  max".padEnd(48)} ${fmt(Math.max(...latencies))} ms (includes the 10 ms debounce and a tools/list)`);
  await processes.stop();
  await throughTheDaemon();
}

/**
 * The figures of issue 15 as a Gateway sees them: a passthrough call through the daemon (JSON lines in, the server
 * called, the answer out) against the same server called directly by an SDK client, and the time from a server's
 * tools/list_changed to the daemon's tools.changed line.
 */
async function throughTheDaemon(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-bench-mcp-"));
  const config = path.join(dir, "servers.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { bench: { command: process.execPath, args: [FIXTURE] } } }));
  const d = new BenchDaemon(dir, ["--mcp-config", config]);
  await d.ready;
  const added = (id: string) => (e: any) => e.event === "tools.changed" && e.data.added.includes(id);
  await d.waitFor(added("bench_echo"));
  const sdk = await sdkClient();
  const { a, b } = await interleaved(
    { a: () => d.call("bench_echo", { text: "hello" }), b: () => sdk.callTool({ name: "echo", arguments: { text: "hello" } }) },
    CALLS,
  );
  report("daemon passthrough call, small (median)", median(a), median(b), "ms", "SDK client direct");
  console.log(`${"  overhead per call (median)".padEnd(48)} ${fmt(median(a) - median(b))} ms; p90 ${fmt(percentile(a, 90))} / ${fmt(percentile(b, 90))} ms`);
  const changed: number[] = [];
  for (let i = 0; i < LIST_CHANGES; i++) {
    const from = d.events.length;
    const t = performance.now();
    await d.call("bench_add_tool", { name: `later_${i}` });
    await d.waitFor(added(`bench_later_${i}`), from);
    changed.push(performance.now() - t);
  }
  report("add_tool call to tools.changed line (median)", median(changed), undefined, "ms");
  console.log(`${"  max".padEnd(48)} ${fmt(Math.max(...changed))} ms (the call's own round trip included)`);
  await sdk.close();
  await d.close();
  removeTree(dir);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
