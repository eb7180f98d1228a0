/**
 * git tools: git_status on a generated 20,000-file repository (a few files modified) through the daemon vs
 * `git status --porcelain=v2` run directly; file_read latency (p50/p99) while one slow git_log (a path-limited walk of a
 * 60,000-commit history) runs through the same daemon; and, harsher, while git calls run back to back.
 */
import { execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { BenchDaemon, fmt, median, percentile, report, timed, removeTree } from "./lib.js";

const run = promisify(execFile);
/** The repository size. */
const FILES = 20_000;
/** Files per folder: a realistic fan-out, 200 folders. */
const PER_FOLDER = 100;
/** Files modified after the commit, and untracked ones added, so status has something to report. */
const MODIFIED = 5;
const UNTRACKED = 3;
/** Status runs per side, interleaved so both see the same cache state. */
const STATUS_SAMPLES = 30;
/** History for the slow git call: a path-limited log must walk all of it (about a second here). */
const HISTORY_COMMITS = 60_000;
/** Slow git_log calls, one after another, for the single-slow-call figure. */
const SLOW_ROUNDS = 4;
/** How long file_read is timed while git calls run back to back: several git_show rounds. */
const BUSY_MS = 3_000;
/** file_read calls timed on the idle daemon, for reference. */
const READ_SAMPLES = 1_000;
/** After ready the VFS still builds its index of the 20,000 files; measuring then would time that, not git. */
const SETTLE_MS = 5_000;

async function git(dir: string, ...args: string[]): Promise<string> {
  return (await run("git", args, { cwd: dir, maxBuffer: 256 * 1024 * 1024 })).stdout;
}

/** A git history of HISTORY_COMMITS commits, each changing one file under hist/, written with fast-import. */
function fastImport(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["fast-import", "--quiet"], { cwd: dir, stdio: ["pipe", "ignore", "inherit"] });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exited ${code}`))));
    const parts: string[] = [];
    for (let i = 1; i <= HISTORY_COMMITS; i++) {
      const msg = `history ${i}`;
      const body = `line ${i}\n`;
      parts.push(
        `commit refs/heads/history\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\ndata ${msg.length}\n${msg}\n` +
          `M 100644 inline hist/f${i % 50}.txt\ndata ${body.length}\n${body}\n`,
      );
    }
    child.stdin.end(parts.join(""));
  });
}

async function makeRepo(): Promise<string> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-bench-git-")));
  await git(dir, "init", "-q", "-b", "main");
  for (const [k, v] of [
    ["user.email", "bench@example.com"],
    ["user.name", "Bench"],
    ["commit.gpgsign", "false"],
  ])
    await git(dir, "config", k, v);
  for (let i = 0; i < FILES; i++) {
    const rel = `src/d${Math.floor(i / PER_FOLDER)}/f${i}.ts`;
    mkdirSync(path.join(dir, path.dirname(rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), `export const v${i} = ${i};\n`);
  }
  await git(dir, "add", "-A");
  await git(dir, "commit", "-qm", "tree");
  await fastImport(dir);
  for (let i = 0; i < MODIFIED; i++) writeFileSync(path.join(dir, `src/d${i * 7}/f${i * 7 * PER_FOLDER}.ts`), `export const changed = ${i};\n`);
  for (let i = 0; i < UNTRACKED; i++) writeFileSync(path.join(dir, `new-${i}.txt`), "new\n");
  return dir;
}

function timeDirectStatus(dir: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn("git", ["status", "--porcelain=v2"], { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.resume();
    child.on("exit", (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`git status exited ${code}`))));
  });
}

const timeCall = async (d: BenchDaemon, tool: string, params: Record<string, unknown>) => (await timed(() => d.ok(tool, params)))[0];

export default async function main(): Promise<void> {
  const t0 = performance.now();
  const dir = await makeRepo();
  console.log(`generated ${FILES} files + ${HISTORY_COMMITS}-commit history in ${fmt((performance.now() - t0) / 1000)} s`);
  const d = new BenchDaemon(dir);
  try {
    await d.ready;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const status = await d.call("git_status", {});
    if (!status.success || status.result.unstaged.length !== MODIFIED) throw new Error(`unexpected status: ${JSON.stringify(status.result).slice(0, 300)}`);
    for (let i = 0; i < 3; i++) await Promise.all([timeCall(d, "git_status", {}), timeDirectStatus(dir)]); // warm the caches

    const ours: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < STATUS_SAMPLES; i++) {
      direct.push(await timeDirectStatus(dir));
      ours.push(await timeCall(d, "git_status", {}));
    }
    report(`git_status, ${FILES} files (median of ${STATUS_SAMPLES})`, median(ours), median(direct), "ms", "git status --porcelain=v2");
    report(`git_status, ${FILES} files (p10: the least disturbed runs)`, percentile(ours, 10), percentile(direct, 10), "ms", "git status --porcelain=v2");

    const hasFileRead = (await d.call("list", {})).result.tools.some((t: { tool_id: string }) => t.tool_id === "file_read");
    const probe = hasFileRead ? (["file_read", { path: "src/d1/f100.ts" }] as const) : (["list", {}] as const);
    const idle: number[] = [];
    for (let i = 0; i < READ_SAMPLES; i++) idle.push(await timeCall(d, probe[0], probe[1]));

    // The figure: one slow git call in flight (a path-limited log over the whole history), reading until it
    // ends; SLOW_ROUNDS such calls one after another, so the p99 rests on enough reads.
    const single: number[] = [];
    const singleMs: number[] = [];
    const t1 = performance.now();
    for (let round = 0; round < SLOW_ROUNDS; round++) {
      let done = false;
      const slowCall = timeCall(d, "git_log", { ref: "history", path: "hist/f1.txt", limit: 500 }).then((ms) => (singleMs.push(ms), (done = true)));
      while (!done) single.push(await timeCall(d, probe[0], probe[1]));
      await slowCall;
    }
    console.log(
      `one slow call at a time: git_log over ${HISTORY_COMMITS} commits by path, median ${fmt(median(singleMs))} ms x${SLOW_ROUNDS}; ${single.length} ${probe[0]} calls meanwhile (${fmt(performance.now() - t1)} ms)`,
    );
    report(`${probe[0]} p50 while one slow git_log runs`, percentile(single, 50), percentile(idle, 50), "ms", "idle");
    report(`${probe[0]} p99 while one slow git_log runs (target < 5 ms)`, percentile(single, 99), percentile(idle, 99), "ms", "idle");

    // Harsher: git calls back to back (each starts 1 to 5 git processes), to show what every spawn costs the event loop.
    let stop = false;
    const logDurations: number[] = [];
    const showDurations: number[] = [];
    const slow = (async () => {
      while (!stop) {
        logDurations.push(await timeCall(d, "git_log", { ref: "main", limit: 200 }));
        // The 20,000-file commit: megabytes of patch and numstat for the daemon to read, split and cut.
        if (!stop) showDurations.push(await timeCall(d, "git_show", { ref: "main" }));
      }
    })();
    const busy: number[] = [];
    const until = performance.now() + BUSY_MS;
    while (performance.now() < until) busy.push(await timeCall(d, probe[0], probe[1]));
    stop = true;
    await slow;
    console.log(
      `back-to-back git calls during ${busy.length} reads: git_log -n200 (median ${fmt(median(logDurations))} ms, ${logDurations.length}x), git_show of the ${FILES}-file commit (median ${fmt(median(showDurations))} ms, ${showDurations.length}x)`,
    );
    report(`${probe[0]} p50 with git calls back to back`, percentile(busy, 50), percentile(idle, 50), "ms", "idle");
    report(`${probe[0]} p99 with git calls back to back`, percentile(busy, 99), percentile(idle, 99), "ms", "idle");
    if (!hasFileRead) console.log("(file_read is not registered: measured list round trips instead)");
  } finally {
    await d.close();
    removeTree(dir);
  }
}
