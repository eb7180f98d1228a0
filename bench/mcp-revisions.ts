import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type Call, MAIN, StdioJsonRpc, cpuMs, fmt, interleaved, load, median, report } from "./lib.js";

/**
 * MCP mode's two revisions (issue 22): the same tools/call (file_read of a 150-line file) as a 2026-07-28 stateless
 * request, its revision and capabilities in `_meta`, against a 2025-11-25 one on an initialized connection; one call at a
 * time, the two taking turns, timed from the client's side. Twice: over bare JSON lines (the daemon's cost and the pipes)
 * and through the SDK's Client (what an MCP host pays). Each connection is its own daemon.
 */
const CALLS = 3000;
const WARMUP = 300;
const MODERN = "2026-07-28";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "tool-layer-bench", version: "0" },
};
const ARGS = { name: "file_read", arguments: { path: "read150.ts" } };

/** Not exactly StdioClientTransport: the SDK then probes the revision on this daemon instead of spawning another. */
class InPlaceStdio extends StdioClientTransport {}

export default async function main(): Promise<void> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-bench-mcp-revisions-")));
  const lines = Array.from({ length: 150 }, (_, i) => `    const value${i} = compute(${i}, "some text to make a realistic line"); // ${i}`);
  writeFileSync(path.join(dir, "read150.ts"), lines.join("\n") + "\n");
  const daemon = ["--mcp", "--root", dir, "--mcp-confirm", "none"];
  const rawLegacy = new StdioJsonRpc(process.execPath, [MAIN, ...daemon]);
  const rawModern = new StdioJsonRpc(process.execPath, [MAIN, ...daemon]);
  const sdkLegacy = new Client({ name: "tool-layer-bench", version: "0" });
  const sdkModern = new Client({ name: "tool-layer-bench", version: "0" }, { versionNegotiation: { mode: { pin: MODERN } } });
  const legacyTransport = new InPlaceStdio({ command: process.execPath, args: [MAIN, ...daemon] });
  const modernTransport = new InPlaceStdio({ command: process.execPath, args: [MAIN, ...daemon] });
  try {
    await Promise.all([rawLegacy.init(), sdkLegacy.connect(legacyTransport), sdkModern.connect(modernTransport)]);
    const suites = [
      {
        label: "bare JSON lines",
        pids: [rawLegacy.child.pid, rawModern.child.pid],
        legacy: checked(
          () => rawLegacy.request("tools/call", ARGS),
          (r) => r.result && !r.result.isError && r.result.resultType === undefined,
        ),
        modern: checked(
          () => rawModern.request("tools/call", { ...ARGS, _meta: ENVELOPE }),
          (r) => r.result?.resultType === "complete" && !r.result.isError,
        ),
      },
      {
        label: "the SDK's Client",
        pids: [legacyTransport.pid ?? undefined, modernTransport.pid ?? undefined],
        legacy: checked(
          () => sdkLegacy.callTool(ARGS),
          (r) => !r.isError && sdkLegacy.getProtocolEra() === "legacy",
        ),
        modern: checked(
          () => sdkModern.callTool(ARGS),
          (r) => !r.isError && sdkModern.getProtocolEra() === "modern",
        ),
      },
    ];
    console.log(`tools/call file_read of 150 lines, one at a time, the revisions taking turns: median of ${CALLS} calls each (load ${load()})`);
    for (const s of suites) {
      const before = s.pids.map(cpuMs);
      const times = await interleaved({ legacy: s.legacy, modern: s.modern }, CALLS, WARMUP);
      const cpu = s.pids.map((pid, k) => (cpuMs(pid) - before[k]) / (CALLS + WARMUP));
      report(`${s.label}: 2026-07-28 call (target <= 1.05x)`, median(times.modern), median(times.legacy), "ms", "2025-11-25");
      console.log(`${`${s.label}: daemon CPU per call`.padEnd(48)} ${fmt(cpu[1]).padStart(10)} ms (2026-07-28) vs ${fmt(cpu[0])} ms (2025-11-25)`);
    }
    console.log(`(load after: ${load()})`);
  } finally {
    await Promise.all([rawLegacy.close(), rawModern.close(), sdkLegacy.close(), sdkModern.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A call whose first answer is checked: a figure of failing calls would be a figure of nothing. */
function checked<T>(call: () => Promise<T>, ok: (r: T) => unknown): Call {
  let first = true;
  return async () => {
    const r = await call();
    if (first && !ok(r)) throw new Error(`unexpected answer: ${JSON.stringify(r).slice(0, 300)}`);
    first = false;
  };
}
