import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BenchDaemon, MAIN, StdioJsonRpc, compareThroughput, fmt, report, throughput, removeTree } from "./lib.js";

/**
 * MCP server mode (issue 16): file_read of a 150-line file through `tool-layer --mcp` against the MCP filesystem
 * server's read_text_file on the same file, 8 requests in flight, both on the same SDK (the JSON-lines fast path does
 * not apply in MCP mode); and MCP mode's cost per call over JSON-lines mode.
 */
const MCP_FILESYSTEM = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url));
const IN_FLIGHT = 8;
const CALLS = 4000;
const RUNS = 5;
const WARMUP = 500;

export default async function main(): Promise<void> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-bench-mcp-server-")));
  const lines = Array.from({ length: 150 }, (_, i) => `    const value${i} = compute(${i}, "some text to make a realistic line"); // ${i}`);
  writeFileSync(path.join(dir, "read150.ts"), lines.join("\n") + "\n");
  const file = path.join(dir, "read150.ts");
  const ours = new StdioJsonRpc(process.execPath, [MAIN, "--mcp", "--root", dir]);
  const peer = new StdioJsonRpc(process.execPath, [MCP_FILESYSTEM, dir]);
  const jsonl = new BenchDaemon(dir);
  try {
    await Promise.all([ours.init(), peer.init(), jsonl.ready]);
    const sides = [
      { name: "tool-layer --mcp", pid: ours.child.pid, call: () => ours.request("tools/call", { name: "file_read", arguments: { path: "read150.ts" } }) },
      { name: "MCP filesystem server", pid: peer.child.pid, call: () => peer.request("tools/call", { name: "read_text_file", arguments: { path: file } }) },
      { name: "tool-layer JSON lines", pid: jsonl.child.pid, call: () => jsonl.call("file_read", { path: "read150.ts" }) },
    ];
    for (const s of sides) {
      const r = await s.call();
      if (r.error || r.result?.isError || r.success === false) throw new Error(`${s.name}: ${JSON.stringify(r).slice(0, 300)}`);
      await throughput(() => s.call, IN_FLIGHT, WARMUP);
    }
    const [mcp, filesystem, jsonLines] = await compareThroughput(
      sides.map((s) => ({ callFor: () => s.call, pid: s.pid })),
      IN_FLIGHT,
      RUNS,
      CALLS,
    );
    console.log(`file_read of 150 lines, ${IN_FLIGHT} in flight: median of ${RUNS} runs of ${CALLS} calls, sides alternating`);
    report("reads/s, MCP mode (target >= 1.5x the peer)", mcp.perSecond, filesystem.perSecond, "/s", "MCP filesystem server");
    report("server CPU per read, MCP mode (target <= 0.6x)", mcp.cpuPerCall, filesystem.cpuPerCall, "ms", "MCP filesystem server");
    report("reads/s, MCP mode vs JSON lines", mcp.perSecond, jsonLines.perSecond, "/s", "JSON lines");
    console.log(
      `${"  MCP mode's CPU over JSON lines, per call".padEnd(48)} ${fmt(mcp.cpuPerCall - jsonLines.cpuPerCall)} ms (${fmt(mcp.cpuPerCall)} vs ${fmt(jsonLines.cpuPerCall)})`,
    );
  } finally {
    await Promise.all([ours.close(), peer.close(), jsonl.close()]);
    removeTree(dir);
  }
}
