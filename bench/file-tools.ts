/**
 * `npm run bench -- files`: file_read round trips and throughput (1 and 8 sessions) against the MCP filesystem server's
 * read_text_file on the same file in the same run, and a 10-edit file_write batch on a 10,000-line file.
 */
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { initHash, tagOf } from "../src/core/hash.js";
import { BenchDaemon, type Call, StdioJsonRpc, compareThroughput, cpuMs, fmt, latencies, median, percentile, report, removeTree } from "./lib.js";

const MCP_SERVER = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url));
/** Round trips timed one after the other, for p50/p99. */
const LATENCY_CALLS = 2000;
/** Calls for a throughput figure: enough for a steady state of a few hundred ms. */
const THROUGHPUT_CALLS = 6000;
/** Requests each session keeps in flight (pipelined), as a Gateway with several agents would. */
const IN_FLIGHT_PER_SESSION = 8;
/** Discarded first calls: JIT warm-up and the page cache. */
const WARMUP_CALLS = 300;
/** Timed 10-edit batches. */
const WRITE_BATCHES = 200;
const BIG_LINES = 10_000;
/** Throughput runs per side, alternating with the peer's; the median is reported, so one noisy run does not decide. */
const RUNS = 5;

/** Median calls/s and CPU per call of each side with `sessions` callers, each keeping IN_FLIGHT_PER_SESSION requests in flight. */
function compareSessions(sides: { callFor: (session: number) => Call; pid: number | undefined }[], sessions: number) {
  const perLane = sides.map((s) => ({ callFor: (lane: number) => s.callFor(Math.floor(lane / IN_FLIGHT_PER_SESSION)), pid: s.pid }));
  return compareThroughput(perLane, sessions * IN_FLIGHT_PER_SESSION, RUNS, THROUGHPUT_CALLS);
}

function check(ok: boolean, what: string, r: unknown): void {
  if (!ok) throw new Error(`${what} failed: ${JSON.stringify(r).slice(0, 300)}`);
}

export default async function main(): Promise<void> {
  await initHash();
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-bench-files-")));
  const small = Array.from({ length: 150 }, (_, i) => `    const value${i} = compute(${i}, "some text to make a realistic line"); // ${i}`);
  writeFileSync(path.join(dir, "read150.ts"), small.join("\n") + "\n");
  const big = Array.from({ length: BIG_LINES }, (_, i) => `  line ${i}: ${"lorem ipsum dolor sit amet ".repeat(2)}`);
  writeFileSync(path.join(dir, "big.txt"), big.join("\n") + "\n");

  const ours = new BenchDaemon(dir);
  const mcp = new StdioJsonRpc(process.execPath, [MCP_SERVER, dir]);
  try {
    await ours.ready;
    await mcp.init();
    const readOurs =
      (session: number): Call =>
      async () => {
        const r = await ours.call("file_read", { path: "read150.ts" }, `s${session}`);
        check(r.success, "file_read", r);
      };
    const readMcp = (): Call => async () => {
      const r = await mcp.request("tools/call", { name: "read_text_file", arguments: { path: path.join(dir, "read150.ts") } });
      check(!r.error && !r.result?.isError, "read_text_file", r);
    };

    await latencies(readOurs(0), WARMUP_CALLS);
    await latencies(readMcp(), WARMUP_CALLS);
    const oursLat = await latencies(readOurs(0), LATENCY_CALLS);
    const mcpLat = await latencies(readMcp(), LATENCY_CALLS);
    const sides = [
      { callFor: readOurs, pid: ours.child.pid },
      { callFor: readMcp, pid: mcp.child.pid },
    ];
    const [ours1, mcp1] = await compareSessions(sides, 1);
    const [ours8, mcp8] = await compareSessions(sides, 8);

    console.log(
      `file_read of a 150-line file (${LATENCY_CALLS} sequential round trips; throughput: median of ${RUNS} runs of ${THROUGHPUT_CALLS} calls alternating with the peer, ${IN_FLIGHT_PER_SESSION} in flight per session)`,
    );
    report("read p50 round trip (target <= 1 ms)", median(oursLat), median(mcpLat), "ms", "MCP read_text_file");
    report("read p99 round trip", percentile(oursLat, 99), percentile(mcpLat, 99), "ms", "MCP read_text_file");
    report("reads/s, 1 session", ours1.perSecond, mcp1.perSecond, "/s", "MCP");
    report("reads/s, 8 sessions (target >= 5000, >= 2x MCP)", ours8.perSecond, mcp8.perSecond, "/s", "MCP");
    report("server CPU per read, 8 sessions", ours8.cpuPerCall, mcp8.cpuPerCall, "ms", "MCP");

    // A 10-edit batch on 10,000 lines: ten one-line replacements spread through the file, by line:tag anchors.
    let hash = (await ours.call("file_read", { path: "big.txt", lines: [1] })).result.hash as string;
    const times: number[] = [];
    let writeCpu0 = 0;
    for (let i = 0; i < WARMUP_CALLS / 10 + WRITE_BATCHES; i++) {
      const edits = Array.from({ length: 10 }, (_, k) => {
        const line = k * (BIG_LINES / 10) + 1 + (i % 50);
        const content = `  edited ${i} ${k}`;
        const edit = { type: "replace", startline: `${line}:${tagOf(big[line - 1])}`, content };
        big[line - 1] = content;
        return edit;
      });
      if (i === WARMUP_CALLS / 10) writeCpu0 = cpuMs(ours.child.pid);
      const t = performance.now();
      const r = await ours.call("file_write", { path: "big.txt", hash, edits });
      const ms = performance.now() - t;
      check(r.success, "file_write", r);
      hash = r.result.hash;
      if (i >= WARMUP_CALLS / 10) times.push(ms);
    }
    report(`10-edit file_write on ${BIG_LINES} lines p50 (target <= 10 ms)`, median(times), undefined, "ms");
    report(`10-edit file_write on ${BIG_LINES} lines p99`, percentile(times, 99), undefined, "ms");
    report("daemon CPU per 10-edit write", (cpuMs(ours.child.pid) - writeCpu0) / WRITE_BATCHES, undefined, "ms");
    console.log(`(figures in ms and calls/s; ratio = ours / MCP; reads: ours p50 ${fmt(median(oursLat))} ms vs MCP ${fmt(median(mcpLat))} ms)`);
  } finally {
    await mcp.close();
    await ours.close();
    removeTree(dir);
  }
}
