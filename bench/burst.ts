/**
 * Bursts (issue 19): many calls in one write to a daemon on a one-file repository, as a Gateway flushing a backlog sends
 * them. Wall time until the last answer, the daemon's RSS peak (sampled from /proc), the answers by error code, and the
 * processes the daemon started (the supervisor's counter, through `info git_status`):
 * - the mixed burst: 10,000 calls, 1 in 4 git_status, 1 in 50 search, the rest file_read and list;
 * - 3,000 read-only calls, git_status with 1 in 10 a search;
 * - 2,500 git_status at once: how many git processes they start.
 */
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { BenchDaemon, fmt, rssMb, removeTree } from "./lib.js";

/** How often the daemon's RSS is read while a burst runs. */
const RSS_SAMPLE_MS = 50;

type Call = { tool_id: string; params: Record<string, unknown> };

function oneFileRepo(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-bench-burst-")));
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir });
  git("init", "-q", "-b", "main");
  git("config", "user.email", "bench@example.com");
  git("config", "user.name", "Bench");
  writeFileSync(path.join(dir, "a.txt"), "one\ntwo\nthree\n");
  git("add", "-A");
  git("commit", "-q", "-m", "initial");
  return dir;
}

export function mixedBurst(n: number): Call[] {
  return Array.from({ length: n }, (_, i) => {
    if (i % 4 === 0) return { tool_id: "git_status", params: {} };
    if (i % 50 === 1) return { tool_id: "search", params: { pattern: "two" } };
    return i % 2 ? { tool_id: "file_read", params: { path: "a.txt" } } : { tool_id: "list", params: {} };
  });
}

export function readOnlyBurst(n: number): Call[] {
  return Array.from({ length: n }, (_, i) => (i % 10 === 1 ? { tool_id: "search", params: { pattern: "two" } } : { tool_id: "git_status", params: {} }));
}

async function processesStarted(daemon: BenchDaemon): Promise<number> {
  const info = await daemon.ok("info", { tool_id: "git_status" });
  return info.state.processes.started as number;
}

async function measure(label: string, calls: Call[]): Promise<void> {
  const dir = oneFileRepo();
  const daemon = new BenchDaemon(dir);
  try {
    await daemon.ready;
    const startedBefore = await processesStarted(daemon);
    const pid = daemon.child.pid!;
    let peak = rssMb(pid);
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), RSS_SAMPLE_MS);
    const t = performance.now();
    const answers = await daemon.burst(calls);
    const wall = performance.now() - t;
    clearInterval(sampler);
    const started = (await processesStarted(daemon)) - startedBefore - 1; // the second info's own rev-parse
    const codes = new Map<string, number>();
    for (const a of answers) {
      const code = a.success ? "ok" : String(a.result.code);
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    console.log(`${label.padEnd(48)} wall ${fmt(wall / 1000)} s, RSS peak ${fmt(peak)} MB, processes started ${started}`);
    console.log(`${"  answers".padEnd(48)} ${[...codes].map(([k, v]) => `${k} ${v}`).join(", ")}`);
  } finally {
    await daemon.close();
    removeTree(dir);
  }
}

export default async function main(): Promise<void> {
  const only = process.env.BURST_ONLY; // one of mixed, read-only, status: to measure one case alone
  if (!only || only === "mixed") await measure("10,000 mixed calls in one write", mixedBurst(10_000));
  if (!only || only === "read-only") await measure("3,000 git_status/search in one write", readOnlyBurst(3_000));
  if (!only || only === "status")
    await measure(
      "2,500 git_status in one write",
      Array.from({ length: 2_500 }, () => ({ tool_id: "git_status", params: {} })),
    );
}
