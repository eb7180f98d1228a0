/**
 * The live VFS, both engines in one run: change-to-event latency; on a generated 100,000-file tree in 5,000 folders the
 * time to ready, RSS, idle CPU, and a 10,000-file checkout (time until every path arrived, and in how many lines).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { BenchDaemon, cpuMs, fmt, median, rssMb, removeTree } from "./lib.js";

const run = promisify(execFile);
const ENGINES = ["parcel", "chokidar"] as const;
/** Edits timed one after another for the latency figure. */
const LATENCY_SAMPLES = 40;
/** The tree: 100,000 files in 5,000 folders (20 each, 50 top-level folders of 100). */
const TREE_FILES = 100_000;
const TREE_FOLDERS = 5_000;
/** Files that differ between the two branches of the checkout figure. */
const CHECKOUT_FILES = 10_000;
/** Idle CPU is sampled over this long after ready. */
const IDLE_MS = 2_000;
/** A change must arrive within this or the figure is reported as missing. */
const EVENT_TIMEOUT_MS = 60_000;

async function git(dir: string, ...args: string[]): Promise<void> {
  await run("git", args, { cwd: dir, maxBuffer: 256 * 1024 * 1024 });
}

async function repo(files: (write: (rel: string, content: string) => void) => void): Promise<string> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-bench-")));
  await git(dir, "init", "-q", "-b", "main");
  for (const [k, v] of [
    ["user.email", "bench@example.com"],
    ["user.name", "Bench"],
    ["commit.gpgsign", "false"],
  ])
    await git(dir, "config", k, v);
  files((rel, content) => {
    const abs = path.join(dir, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  });
  await git(dir, "add", "-A");
  await git(dir, "commit", "-qm", "tree");
  return dir;
}

const treeFile = (i: number) => {
  const folder = i % TREE_FOLDERS;
  return `d${Math.floor(folder / 100)}/d${folder}/f${i}.ts`;
};

/** Resolves when every path in `want` has arrived in an fs.changed line; counts those lines. */
async function collect(d: BenchDaemon, want: Set<string>): Promise<{ lastAt: number; lines: number }> {
  const left = new Set(want);
  let seen = d.events.length;
  let lines = 0;
  const deadline = performance.now() + EVENT_TIMEOUT_MS;
  while (left.size) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${left.size} of ${want.size} paths never arrived`)), deadline - performance.now());
    });
    await Promise.race([d.nextEvent(), timeout]).finally(() => clearTimeout(timer));
    // Several lines can arrive in one read: scan everything since the last look, not just the line that woke us.
    for (; seen < d.events.length; seen++) {
      const e = d.events[seen];
      if (e.event !== "fs.changed") continue;
      lines++;
      for (const c of e.data.changes) left.delete(c.path);
    }
  }
  return { lastAt: performance.now(), lines };
}

async function latency(engine: string): Promise<number> {
  const dir = await repo((write) => write("a.txt", "0\n"));
  const d = new BenchDaemon(dir, ["--watcher", engine]);
  await d.ready;
  const samples: number[] = [];
  for (let i = 1; i <= LATENCY_SAMPLES; i++) {
    const arrived = collect(d, new Set(["a.txt"]));
    const t0 = performance.now();
    writeFileSync(path.join(dir, "a.txt"), `${i}\n`);
    samples.push((await arrived).lastAt - t0);
  }
  await d.close();
  removeTree(dir);
  return median(samples);
}

interface TreeFigures {
  readyMs: number;
  rssMb: number;
  /** The watcher host's (parcel runs there): 0 for chokidar, which runs in the daemon. */
  hostRssMb: number;
  idleCpuPct: number;
  checkoutMs: number;
  gitMs: number;
  checkoutLines: number;
}

async function tree(dir: string, engine: string): Promise<TreeFigures> {
  const t0 = performance.now();
  const d = new BenchDaemon(dir, ["--watcher", engine]);
  await d.ready;
  const readyMs = performance.now() - t0;
  const pid = d.child.pid!;
  const hostPid: number | null = (await d.ok("info", { tool_id: "file_read" })).state.host_pid ?? null;
  const hostRss = () => (hostPid ? rssMb(hostPid) : 0);
  const cpuBoth = () => cpuMs(pid) + (hostPid ? cpuMs(hostPid) : 0);
  const before = cpuBoth();
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const idleCpuPct = ((cpuBoth() - before) / IDLE_MS) * 100;
  const idleRss = rssMb(pid);
  const idleHostRss = hostRss();

  const want = new Set(Array.from({ length: CHECKOUT_FILES }, (_, i) => treeFile(i * (TREE_FILES / CHECKOUT_FILES))));
  const arrived = collect(d, want);
  const t1 = performance.now();
  await git(dir, "checkout", "-q", "other");
  const gitMs = performance.now() - t1;
  const { lastAt, lines } = await arrived;
  const rss = Math.max(idleRss, rssMb(pid));
  const host = Math.max(idleHostRss, hostRss());
  await d.close();
  await git(dir, "checkout", "-q", "main");
  return { readyMs, rssMb: rss, hostRssMb: host, idleCpuPct, checkoutMs: lastAt - t1, gitMs, checkoutLines: lines };
}

export default async function main(): Promise<void> {
  const lat: Record<string, number> = {};
  for (const engine of ENGINES) lat[engine] = await latency(engine);

  const t = performance.now();
  const dir = await repo((write) => {
    for (let i = 0; i < TREE_FILES; i++) write(treeFile(i), `export const v${i} = ${i};\n`);
  });
  await git(dir, "checkout", "-q", "-b", "other");
  for (let i = 0; i < CHECKOUT_FILES; i++) writeFileSync(path.join(dir, treeFile(i * (TREE_FILES / CHECKOUT_FILES))), `export const changed = ${i};\n`);
  await git(dir, "commit", "-qam", "other");
  await git(dir, "checkout", "-q", "main");
  console.log(
    `generated ${TREE_FILES} files in ${TREE_FOLDERS} folders (git repo, 2 branches ${CHECKOUT_FILES} files apart) in ${fmt(performance.now() - t)} ms`,
  );

  const figures: Record<string, TreeFigures> = {};
  try {
    for (const engine of ENGINES) figures[engine] = await tree(dir, engine);
  } finally {
    removeTree(dir);
  }

  const rows: [string, (e: string) => string, string][] = [
    ["change-to-event latency, median (ms)", (e) => fmt(lat[e]), "<= 100"],
    ["100k files: time to ready (ms)", (e) => fmt(figures[e].readyMs), "<= 2000"],
    ["100k files: RSS, daemon + watcher host (MB)", (e) => fmt(figures[e].rssMb + figures[e].hostRssMb), "<= 250"],
    ["  of which the watcher host (MB)", (e) => fmt(figures[e].hostRssMb), ""],
    ["100k files: CPU while idle over 2 s, both (%)", (e) => figures[e].idleCpuPct.toFixed(1), "~0"],
    ["10k-file checkout: all paths arrived (ms)", (e) => fmt(figures[e].checkoutMs), "<= 2000"],
    ["  of which git checkout itself (ms)", (e) => fmt(figures[e].gitMs), ""],
    ["10k-file checkout: fs.changed lines", (e) => String(figures[e].checkoutLines), "<= 50"],
  ];
  console.log(`${"figure".padEnd(44)} ${"parcel".padStart(10)} ${"chokidar".padStart(10)}  target`);
  for (const [label, value, target] of rows) console.log(`${label.padEnd(44)} ${value("parcel").padStart(10)} ${value("chokidar").padStart(10)}  ${target}`);
  console.log(
    `ratio chokidar/parcel: ready ${(figures.chokidar.readyMs / figures.parcel.readyMs).toFixed(1)}x, RSS ${(figures.chokidar.rssMb / figures.parcel.rssMb).toFixed(1)}x`,
  );
}
