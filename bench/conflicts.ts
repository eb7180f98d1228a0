/**
 * The conflict tools through the daemon (issue 12): a real `git merge` that leaves a 2,000-line file with 100 conflict
 * blocks, then git_conflicts (the bound: 100 ms) and one git_conflict_resolve (20 ms) after another, each with
 * the hash the previous one returned, as a model would call them. Also the merge itself with auto-resolution (half the
 * blocks are changes to different words), for scale. `npm run bench -- conflict-tools`; the corpus figures are the
 * `conflicts` suite.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { HUNDRED_BLOCKS, hundredBlocks } from "./conflicts-corpus.js";
import { BenchDaemon, cpuMs, fmt, median, percentile, removeTree } from "./lib.js";

const { lines: LINES, blocks: BLOCKS } = HUNDRED_BLOCKS;
/** git_conflicts calls timed after the first (which merges the stages; later ones find the merge cached). */
const LIST_RUNS = 30;
/** Resolutions timed, one block after another, each against the hash the previous one returned. */
const RESOLVE_RUNS = 60;

function git(dir: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
}

function makeRepo(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-bench-conflicts-")));
  git(dir, "init", "-q", "-b", "main");
  for (const [k, v] of [
    ["user.email", "bench@example.com"],
    ["user.name", "Bench"],
    ["commit.gpgsign", "false"],
  ])
    git(dir, "config", k, v);
  const { base, ours, theirs } = hundredBlocks();
  const commit = (text: string, message: string) => {
    writeFileSync(path.join(dir, "big.ts"), text);
    git(dir, "add", "big.ts");
    git(dir, "commit", "-q", "-m", message);
  };
  commit(base, "base");
  git(dir, "checkout", "-q", "-b", "topic");
  commit(theirs, "theirs");
  git(dir, "checkout", "-q", "main");
  commit(ours, "ours");
  return dir;
}

async function timedCall(d: BenchDaemon, tool: string, params: Record<string, unknown>, approved = true): Promise<{ ms: number; r: any }> {
  const t = performance.now();
  const r = await d.call(tool, params, "bench", approved);
  return { ms: performance.now() - t, r };
}

/** Wall-clock swings with the machine's load (git's processes included); the daemon's own CPU per call does less. */
function row(label: string, values: number[], cpu: number): void {
  console.log(
    `  ${label.padEnd(52)} median ${fmt(median(values)).padStart(8)} ms   p90 ${fmt(percentile(values, 90)).padStart(8)} ms   daemon CPU ${fmt(cpu / values.length)} ms/call`,
  );
}

export default async function conflictToolsBench(): Promise<void> {
  for (const auto of [false, true] as const) {
    const dir = makeRepo();
    const d = new BenchDaemon(dir);
    try {
      await d.ready;
      const merge = await timedCall(d, "git_merge", { ref: "topic", auto_resolve: auto });
      if (merge.r.result.code !== "CONFLICT") throw new Error(`the merge did not stop: ${JSON.stringify(merge.r.result).slice(0, 300)}`);
      const settled = merge.r.result.auto_resolved.length;
      console.log(`\n${LINES}-line file, ${BLOCKS} blocks, git_merge {auto_resolve:${auto}}: ${fmt(merge.ms)} ms (git merge, then ${settled} blocks settled)`);
      const first = await timedCall(d, "git_conflicts", {});
      const lists: number[] = [];
      let cpu = cpuMs(d.child.pid);
      for (let i = 0; i < LIST_RUNS; i++) lists.push((await timedCall(d, "git_conflicts", {})).ms);
      const listCpu = cpuMs(d.child.pid) - cpu;
      const blocks = first.r.result.files[0].blocks.length;
      console.log(`  git_conflicts first call (merges the stages)            ${fmt(first.ms).padStart(8)} ms   (${blocks} blocks listed)`);
      row(`git_conflicts (${LIST_RUNS} calls)`, lists, listCpu);
      let hash: string = first.r.result.files[0].hash;
      const resolves: number[] = [];
      cpu = cpuMs(d.child.pid);
      for (let i = 0; i < Math.min(RESOLVE_RUNS, blocks); i++) {
        const { ms, r } = await timedCall(d, "git_conflict_resolve", { path: "big.ts", hash, block: 1, keep: ["ours:1", { text: "  // merged by hand" }] });
        if (!r.success) throw new Error(`resolve failed: ${JSON.stringify(r.result).slice(0, 300)}`);
        hash = r.result.hash;
        resolves.push(ms);
      }
      row(`git_conflict_resolve, block 1 each time (${resolves.length} calls)`, resolves, cpuMs(d.child.pid) - cpu);
      const preview = await timedCall(d, "git_conflict_finalize", {}, false);
      console.log(
        `  git_conflict_finalize preview (${preview.r.result.code ?? "ok"}: ${blocks - resolves.length} blocks left)`.padEnd(56) +
          ` ${fmt(preview.ms).padStart(8)} ms`,
      );
    } finally {
      await d.close();
      removeTree(dir);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await conflictToolsBench();
