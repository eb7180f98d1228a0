import { describe, expect, it } from "vitest";
import { type DaemonClient, type Response, daemonForSuite, startDaemon } from "../helpers/daemon.js";
import { rssMb } from "../helpers/process.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";

type Call = { tool_id: string; params?: Record<string, unknown> };
const status: Call = { tool_id: "git_status" };
const search: Call = { tool_id: "search", params: { pattern: "two" } };
const read: Call = { tool_id: "file_read", params: { path: "a.txt" } };
const list: Call = { tool_id: "list" };

/** The mixed burst: 1 in 4 git_status, 1 in 50 search, the rest cheap reads. */
const mixed = (n: number) => Array.from({ length: n }, (_, i) => (i % 4 === 0 ? status : i % 50 === 1 ? search : i % 2 ? read : list));
/** Read-only calls that start processes: git_status, 1 in 10 a search. */
const processCalls = (n: number) => Array.from({ length: n }, (_, i) => (i % 10 === 1 ? search : status));

/** How many answers had each outcome: `{ok: N}` when all succeeded. */
function outcomes(answers: Response[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const key = a.success ? "ok" : String(a.result.code);
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** A daemon's resident memory at its highest while `work` runs, read from /proc. */
async function peakRss<T>(pid: number, work: () => Promise<T>): Promise<[T, number]> {
  let peak = rssMb(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
  try {
    return [await work(), peak];
  } finally {
    clearInterval(sampler);
  }
}

describe("bursts: thousands of calls in one write, on a one-file repository", () => {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "one\ntwo\nthree\n" } });
  git(ws.dir, "add", "-A");
  git(ws.dir, "commit", "-qm", "initial");
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));
  /** The supervisor's count of processes started so far. */
  const started = async () => (await d.ok("info", { tool_id: "git_status" })).state.processes.started as number;

  it("3,000 git_status and search calls: every one gets its answer, none TIMEOUT, and they start a few processes, not thousands", async () => {
    const before = await started();
    const answers = await d.burst(processCalls(3_000));
    expect(outcomes(answers)).toEqual({ ok: 3_000 });
    expect((await started()) - before).toBeLessThan(150);
  }, 300_000);

  it("10,000 mixed calls: every one gets its answer, none TIMEOUT, and the daemon's memory stays bounded", async () => {
    const before = await started();
    const [answers, peak] = await peakRss(d.child.pid!, () => d.burst(mixed(10_000)));
    expect(outcomes(answers)).toEqual({ ok: 10_000 });
    expect((await started()) - before).toBeLessThan(500);
    expect(peak).toBeLessThan(300);
  }, 300_000);
});

describe("a burst, then stdin closed", () => {
  it("every call of the burst is answered before the daemon exits", async () => {
    const ws = tmpWorkspace({ files: { "a.txt": "one\ntwo\nthree\n" } });
    const d = await startDaemon(ws.dir);
    const answers = d.burst(Array.from({ length: 3_000 }, (_, i) => (i % 2 ? read : list)));
    d.child.stdin.end();
    expect(outcomes(await answers)).toEqual({ ok: 3_000 });
    expect(await d.exited).toEqual({ code: 0, signal: null });
    ws.cleanup();
  }, 120_000);
});
