/**
 * `npm run bench -- rss` (issue 23): the daemon's RSS at ready against @parcel/watcher subscribed alone on the same tree
 * (raw-watcher.ts), each started alone, one after the other, ROUNDS rounds (BENCH_BASELINE=FILE, another build's
 * dist/src/main.js, adds that daemon to each round, the order turned each round), on the cached trees of big-tree.ts
 * (BENCH_SCALE: 100k by default, 1M or both). Per side, medians of:
 * - the process's own RSS (what `scale` reports): the daemon's process alone, without its children;
 * - its anonymous memory (RssAnon): without the pages of node's binary, about 42 MB that every Node process maps and
 *   shares;
 * - the process tree's RSS (the daemon, its watcher host, which holds parcel's own memory, its watchdog, and the
 *   sandbox probe's bwrap while it runs), and the same 3 s later;
 * - the tree's PSS (each page divided among the processes that map it, smaps_rollup): the tree's RSS counts node's
 *   binary once per Node process, which the three processes share.
 */
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { TREES, bigTree } from "./big-tree.js";
import { BenchDaemon, type Cleanup, Figures, load, middle as median, timed, withCleanup } from "./lib.js";
import { RawWatcher } from "./scale.js";

const ROUNDS = 3;
const SETTLE_MS = 3_000;
const baseline = process.env.BENCH_BASELINE;

/** One line of /proc/PID/status in MB (VmRSS, RssAnon, ...); 0 once the process is gone. */
function statusMb(pid: number, field: string): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The process's proportional set size in MB (/proc/PID/smaps_rollup); 0 once it is gone. */
function pssMb(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function descendants(pid: number): number[] {
  let kids: number[] = [];
  try {
    kids = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {}
  return kids.flatMap((k) => [k, ...descendants(k)]);
}

interface Sample {
  readyMs: number;
  own: number;
  anon: number;
  tree: number;
  treePss: number;
  treeLater: number;
}

function sample(pid: number): Omit<Sample, "treeLater" | "readyMs"> {
  const all = [pid, ...descendants(pid)];
  const tree = all.reduce((sum, p) => sum + statusMb(p, "VmRSS"), 0);
  const treePss = all.reduce((sum, p) => sum + pssMb(p), 0);
  return { own: statusMb(pid, "VmRSS"), anon: statusMb(pid, "RssAnon"), tree, treePss };
}

const later = async (pid: number) => (
  await new Promise((r) => setTimeout(r, SETTLE_MS)), [pid, ...descendants(pid)].reduce((s, p) => s + statusMb(p, "VmRSS"), 0)
);

async function raw(dir: string): Promise<Sample> {
  return withCleanup(async (cleanup: Cleanup) => {
    const [readyMs, w] = await timed(() => RawWatcher.start(dir, cleanup));
    const s = sample(w.pid);
    return { readyMs, ...s, treeLater: await later(w.pid) };
  });
}

async function daemon(dir: string, main?: string): Promise<Sample> {
  return withCleanup(async (cleanup: Cleanup) => {
    const t0 = performance.now();
    const d = new BenchDaemon(dir, [], { quiet: true, main });
    cleanup.add("daemon", () => d.close());
    await d.ready;
    const readyMs = performance.now() - t0;
    const s = sample(d.child.pid!);
    return { readyMs, ...s, treeLater: await later(d.child.pid!) };
  });
}

export default async function main(): Promise<void> {
  const scales = (process.env.BENCH_SCALE ?? "100k").split(",").map((s) => s.trim());
  for (const s of scales) if (!(s in TREES)) throw new Error(`BENCH_SCALE: ${s} is not one of ${Object.keys(TREES).join(", ")}`);
  const figures = new Figures();
  try {
    for (const scale of scales as (keyof typeof TREES)[]) {
      console.log(`\n### ${scale} files (load ${load()})`);
      const tree = await bigTree(TREES[scale]);
      try {
        const sides: Record<string, () => Promise<Sample>> = { raw: () => raw(tree.dir), ours: () => daemon(tree.dir) };
        if (baseline) sides.baseline = () => daemon(tree.dir, baseline);
        const got: Record<string, Sample[]> = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
        for (let round = 0; round < ROUNDS; round++) {
          const order = Object.keys(sides);
          if (round % 2) order.reverse();
          for (const side of order) got[side].push(await sides[side]());
        }
        const m = (side: string, k: keyof Sample) => median(got[side].map((s) => s[k]));
        for (const side of baseline ? ["ours", "baseline"] : ["ours"]) {
          const label = side === "ours" ? "" : " (baseline)";
          const each = (k: keyof Sample) => got[side].map((s) => s[k].toFixed(1)).join(", ");
          figures.add({
            scale,
            figure: `RSS at ready, the daemon's process${label}`,
            ours: m(side, "own"),
            peer: m("raw", "own"),
            peerName: "raw parcel",
            unit: "MB",
            note: `rounds ${each("own")}; raw ${got.raw.map((s) => s.own.toFixed(1)).join(", ")}`,
          });
          figures.add({ scale, figure: `  anonymous (RssAnon)${label}`, ours: m(side, "anon"), peer: m("raw", "anon"), peerName: "raw parcel", unit: "MB" });
          figures.add({
            scale,
            figure: `  its process tree (with the watcher host)${label}`,
            ours: m(side, "tree"),
            peer: m("raw", "tree"),
            peerName: "raw parcel",
            unit: "MB",
          });
          figures.add({
            scale,
            figure: `  its process tree's PSS${label}`,
            ours: m(side, "treePss"),
            peer: m("raw", "treePss"),
            peerName: "raw parcel",
            unit: "MB",
          });
          figures.add({
            scale,
            figure: `  the tree ${SETTLE_MS / 1000} s after ready${label}`,
            ours: m(side, "treeLater"),
            peer: m("raw", "treeLater"),
            peerName: "raw parcel",
            unit: "MB",
          });
          figures.add({
            scale,
            figure: `time to ready${label}`,
            ours: m(side, "readyMs"),
            peer: m("raw", "readyMs"),
            peerName: "raw parcel subscribe",
            unit: "ms",
            note: `rounds ${each("readyMs")}`,
          });
        }
      } finally {
        await tree.release();
      }
    }
  } finally {
    figures.print(`rss: RSS at ready from /proc, medians of ${ROUNDS} rounds (load = 1/5/15 min averages; ${new Date().toISOString()})`);
  }
}
