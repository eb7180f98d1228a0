/**
 * What IgnoreRules costs (src/vfs/ignore-rules.ts), this build against BENCH_BASELINE's (another checkout's
 * dist/src/main.js), rounds interleaved: the 100k bench tree's paths judged as files by fresh rules (the listing walk,
 * every folder judged once) and again by the same rules (the event pipeline, folders cached), with a root .gitignore of
 * a typical project and one nested in every 100th folder; then listGit on the 100k git tree (big-tree.ts, cached under
 * BENCH_CACHE_DIR). Not a suite of bench/run.ts: `npm run build && node dist/bench/ignore-rules.js`.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { TREES, bigTree } from "./big-tree.js";
import { fmt, load, median, report } from "./lib.js";
import { generateTree } from "./search-paths.js";

type RulesModule = typeof import("../src/vfs/ignore-rules.js");
type ListingModule = typeof import("../src/vfs/listing.js");

const ROOT_GITIGNORE = [
  "node_modules/",
  "dist/",
  "build/",
  "coverage/",
  "*.log",
  ".env",
  ".env.*",
  "!.env.example",
  "*.tsbuildinfo",
  ".DS_Store",
  "/tmp",
  "**/__snapshots__/",
  "*.generated.ts",
  "*.css",
  "**/fixture/",
  "/vendor/",
  "",
].join("\n");
const NESTED_GITIGNORE = "*.local.json\n*.md\n!README.md\nmock/\n/out\n";
const ROUNDS = 15;
const LISTING_ROUNDS = 7;

async function modules(srcDir: string): Promise<{ rules: RulesModule; listing: ListingModule }> {
  const load = (rel: string) => import(pathToFileURL(path.join(srcDir, rel)).href);
  return { rules: await load("vfs/ignore-rules.js"), listing: await load("vfs/listing.js") };
}

/** ms to judge every path with fresh rules, then again with the same (warm) ones; and how many it ignored. */
function judge(m: RulesModule, paths: readonly string[], nested: readonly string[]): { fresh: number; warm: number; ignored: number } {
  let t = performance.now();
  const rules = new m.IgnoreRules(m.DEFAULT_IGNORES);
  rules.addFile("", ROOT_GITIGNORE);
  for (const dir of nested) rules.addFile(dir, NESTED_GITIGNORE);
  let ignored = 0;
  for (const p of paths) if (rules.ignores(p, false)) ignored++;
  const fresh = performance.now() - t;
  t = performance.now();
  for (const p of paths) rules.ignores(p, false);
  return { fresh, warm: performance.now() - t, ignored };
}

function gitReader(root: string) {
  return (args: string[]) =>
    new Promise<string>((resolve, reject) =>
      execFile(
        "git",
        ["-c", "core.fsmonitor=false", "-c", "core.quotePath=false", ...args],
        { cwd: root, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" }, maxBuffer: 1 << 29 },
        (err, out) => (err ? reject(err) : resolve(out)),
      ),
    );
}

export default async function main(): Promise<void> {
  const ours = await modules(path.join(import.meta.dirname, "../src"));
  const baseline = process.env.BENCH_BASELINE ? await modules(path.dirname(process.env.BENCH_BASELINE)) : undefined;
  const paths = generateTree(100_000, 4_400);
  const dirs = [...new Set(paths.map((p) => p.slice(0, p.lastIndexOf("/"))))];
  const nested = dirs.filter((_, i) => i % 100 === 0);
  console.log(`load ${load()}; ${paths.length} paths, ${dirs.length} folders, ${nested.length} nested .gitignore files`);
  const sides = { ours: ours.rules, ...(baseline ? { baseline: baseline.rules } : {}) };
  const times: Record<string, { fresh: number[]; warm: number[]; ignored: number }> = {};
  for (let r = 0; r < ROUNDS + 2; r++)
    for (const [name, m] of Object.entries(sides)) {
      const t = judge(m, paths, nested);
      times[name] ??= { fresh: [], warm: [], ignored: t.ignored };
      if (r >= 2) times[name].fresh.push(t.fresh), times[name].warm.push(t.warm); // two rounds of warm-up
    }
  const base = times.baseline;
  console.log(`ignored: ours ${times.ours.ignored}${base ? `, baseline ${base.ignored}` : ""}`);
  report("100k paths, fresh rules", median(times.ours.fresh), base && median(base.fresh), "ms", "baseline");
  report("100k paths, warm rules", median(times.ours.warm), base && median(base.warm), "ms", "baseline");

  const tree = await bigTree(TREES["100k"]);
  try {
    const listings = { ours: ours.listing, ...(baseline ? { baseline: baseline.listing } : {}) };
    const ms: Record<string, number[]> = {};
    const read = gitReader(tree.dir);
    for (let r = 0; r < LISTING_ROUNDS + 1; r++)
      for (const [name, m] of Object.entries(listings)) {
        const t = performance.now();
        const listing = await m.listGit(read, tree.dir, path.join(tree.dir, ".git"));
        const took = performance.now() - t;
        if (r > 0) (ms[name] ??= []).push(took);
        else console.log(`listGit ${name}: ${listing.files.length} files, ${listing.rules.ruleFiles} rules files, ${fmt(took)} ms cold`);
      }
    report("listGit, 100k git tree", median(ms.ours), ms.baseline && median(ms.baseline), "ms", "baseline");
  } finally {
    await tree.release();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
