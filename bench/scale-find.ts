/**
 * `npm run bench -- scale-find`: only the scale suite's find_file figures (and the daemon's RSS at ready), on the same
 * cached trees (BENCH_SCALE=100k, 1M or both, as for scale), without its floods: a quick loop while working on the
 * fuzzy index. The figures are the scale suite's own (the same queries), so they compare.
 * BENCH_CPU_PROF=DIR runs the daemon with --cpu-prof, its profile written to DIR when it exits. BENCH_BASELINE=FILE
 * (another build's dist/src/main.js) starts that daemon beside ours and times the queries on both, alternating query by
 * query (the order swapped each round), so both meet the same load: a before/after in one run.
 */
import { performance } from "node:perf_hooks";
import { TREES, type Tree, bigTree } from "./big-tree.js";
import { BenchDaemon, type Cleanup, Figures, fmt, load, middle as median, percentile, rssMb, timed, withCleanup } from "./lib.js";
import { findFile } from "./scale.js";
import { FIND_QUERIES, TYPO_QUERIES } from "./search-paths.js";

const cpuProf = process.env.BENCH_CPU_PROF;
const baseline = process.env.BENCH_BASELINE;
const ROUNDS = 3;

export default async function main(): Promise<void> {
  const scales = (process.env.BENCH_SCALE ?? "100k").split(",").map((s) => s.trim());
  for (const s of scales) if (!(s in TREES)) throw new Error(`BENCH_SCALE: ${s} is not one of ${Object.keys(TREES).join(", ")}`);
  const figures = new Figures();
  try {
    for (const scale of scales as (keyof typeof TREES)[]) {
      console.log(`\n### ${scale} files (load ${load()})`);
      const tree = await bigTree(TREES[scale]);
      try {
        await withCleanup(async (cleanup) => {
          const ours = await started(tree, scale, figures, cleanup, "", undefined);
          if (!baseline) return findFile(ours, tree, scale, figures);
          const base = await started(tree, scale, figures, cleanup, " (baseline)", baseline);
          await alternating(ours, base, scale, figures);
          figures.add({ scale, figure: "RSS after find_file", ours: rssMb(ours.child.pid!), peer: rssMb(base.child.pid!), peerName: "baseline", unit: "MB" });
        });
      } finally {
        await tree.release();
      }
    }
  } finally {
    figures.print(`scale-find: find_file figures from the caller's side (load = 1/5/15 min averages; ${new Date().toISOString()})`);
  }
}

/** A daemon on the tree, ready, its find_file index built by a first query; its time to ready and RSS reported. */
async function started(tree: Tree, scale: string, figures: Figures, cleanup: Cleanup, label: string, main: string | undefined): Promise<BenchDaemon> {
  const t0 = performance.now();
  const nodeArgs = cpuProf ? ["--cpu-prof", "--cpu-prof-dir", cpuProf] : [];
  const d = new BenchDaemon(tree.dir, [], { quiet: true, nodeArgs, main });
  cleanup.add(`daemon${label}`, () => d.close());
  await d.ready;
  figures.add({ scale, figure: `time to ready${label}`, ours: performance.now() - t0, unit: "ms" });
  figures.add({ scale, figure: `RSS at ready${label}`, ours: rssMb(d.child.pid!), unit: "MB" });
  await d.ok("find_file", { query: "usrsvc" });
  return d;
}

/** The scale suite's queries on both daemons, one query at a time on each, so a burst of load falls on both alike. */
async function alternating(ours: BenchDaemon, base: BenchDaemon, scale: string, figures: Figures): Promise<void> {
  const times = { ours: [] as number[], base: [] as number[] };
  for (let round = 0; round < ROUNDS; round++)
    for (const query of [...FIND_QUERIES, ...TYPO_QUERIES]) {
      const order = round % 2 ? (["base", "ours"] as const) : (["ours", "base"] as const);
      for (const side of order) times[side].push((await timed(() => (side === "ours" ? ours : base).ok("find_file", { query })))[0]);
    }
  figures.add({
    scale,
    figure: `find_file, ${FIND_QUERIES.length} queries + ${TYPO_QUERIES.length} typos, median`,
    ours: median(times.ours),
    peer: median(times.base),
    peerName: "baseline daemon, alternating",
    unit: "ms",
    note: `p90 ${fmt(percentile(times.ours, 90))} ms, baseline ${fmt(percentile(times.base, 90))} ms; ${ROUNDS} rounds`,
  });
}
