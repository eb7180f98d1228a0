/**
 * `npm run bench -- scale-find`: only the scale suite's find_file figures (and the daemon's RSS at ready), on the same
 * cached trees (BENCH_SCALE=100k, 1M or both, as for scale), without its floods: a quick loop while working on the
 * fuzzy index. The figures are the scale suite's own (the same queries, the same peer), so they compare.
 * BENCH_CPU_PROF=DIR runs the daemon with --cpu-prof, its profile written to DIR when it exits. BENCH_BASELINE=FILE
 * (another build's dist/src/main.js) runs the same figures on that daemon too, after ours, for a before/after in one run.
 */
import { performance } from "node:perf_hooks";
import { TREES, bigTree } from "./big-tree.js";
import { BenchDaemon, Figures, load, rssMb, withCleanup } from "./lib.js";
import { findFile } from "./scale.js";

const cpuProf = process.env.BENCH_CPU_PROF;
const baseline = process.env.BENCH_BASELINE;

export default async function main(): Promise<void> {
  const scales = (process.env.BENCH_SCALE ?? "100k").split(",").map((s) => s.trim());
  for (const s of scales) if (!(s in TREES)) throw new Error(`BENCH_SCALE: ${s} is not one of ${Object.keys(TREES).join(", ")}`);
  const figures = new Figures();
  try {
    for (const scale of scales as (keyof typeof TREES)[]) {
      console.log(`\n### ${scale} files (load ${load()})`);
      const tree = await bigTree(TREES[scale]);
      try {
        for (const [label, main] of [
          ["", undefined],
          [" (baseline)", baseline],
        ] as const) {
          if (label && !main) continue;
          await withCleanup(async (cleanup) => {
            const t0 = performance.now();
            const nodeArgs = cpuProf ? ["--cpu-prof", "--cpu-prof-dir", cpuProf] : [];
            const d = new BenchDaemon(tree.dir, [], { quiet: true, nodeArgs, main });
            cleanup.add("daemon", () => d.close());
            await d.ready;
            figures.add({ scale, figure: `time to ready${label}`, ours: performance.now() - t0, unit: "ms" });
            figures.add({ scale, figure: `RSS at ready${label}`, ours: rssMb(d.child.pid!), unit: "MB" });
            await findFile(d, tree, scale, figures, label);
            figures.add({ scale, figure: `RSS after find_file${label}`, ours: rssMb(d.child.pid!), unit: "MB" });
          });
        }
      } finally {
        await tree.release();
      }
    }
  } finally {
    figures.print(`scale-find: find_file figures from the caller's side (load = 1/5/15 min averages; ${new Date().toISOString()})`);
  }
}
