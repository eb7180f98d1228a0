/**
 * search and find_file against their peers (`npm run bench -- search`):
 * - search through the daemon vs `rg --json` run directly with the same pattern flags (what a tool reading rg's JSON
 *   runs), on a generated 20,000-file tree that includes a minified file of one 4 MB line (target: median ratio <= 1.2x),
 *   and vs rg with the daemon's own arguments killed at the cap (the floor for any capped reader);
 * - find_file's matcher over 100,000 generated paths in-process, on ordinary queries and on typos that bring the typo
 *   fallback into play (target: median <= 15 ms, p90 <= 40 ms, index <= 80 MB), against the matcher before the typo
 *   fallback (commit BEFORE_COMMIT, transpiled from git when the history is there) and `fzf --filter`, in the same run;
 *   and through the daemon on a 100,000-file tree.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { rgPath } from "@vscode/ripgrep";
import { FuzzyIndex } from "../src/search/fuzzy.js";
import { DEFAULT_MAX_RESULTS as DEFAULT_CAP } from "../src/tools/search.js";
import { ignoreArgs, patternArgs, ripgrepArgs, writeDefaultIgnoreFile } from "../src/search/ripgrep.js";
import { BenchDaemon, fmt, interleaved, median, percentile, removeTree } from "./lib.js";
import { FIND_QUERIES, TYPO_QUERIES, generatePaths, rng } from "./search-paths.js";

/** The last commit before the typo fallback and the separator rule: find_file's "before" figures. */
const BEFORE_COMMIT = "06f3bc8";

/** Repetitions per query: enough for a stable median on a shared machine without making the suite slow. */
const SEARCH_REPS = 10;
const FIND_REPS = 5;
const SEARCH_FILES = 20_000;
const FIND_PATHS = 100_000;
/** The minified file: one line this long, with the common tokens sprinkled through it. */
const MINIFIED_BYTES = 4 * 1024 * 1024;

const SEARCH_QUERIES: { label: string; params: Record<string, unknown> }[] = [
  { label: "rare identifier", params: { pattern: "handleRefundWebhook" } },
  { label: "common word (capped at 100)", params: { pattern: "return" } },
  { label: "regex", params: { pattern: "function \\w+Service\\(" } },
  { label: "common word, minified file too", params: { pattern: "setState" } },
  { label: "only in the 4 MB minified line", params: { pattern: "function\\(b\\)" } },
  { label: "fixed string, ignore case", params: { pattern: "TODO(", fixed_strings: true, case_sensitive: false } },
  { label: "glob *.ts, context 2", params: { pattern: "import .* from", glob: ["*.ts"], context: 2 } },
];

export default async function run(): Promise<void> {
  await benchSearch();
  await benchFindFile();
}

function codeLine(r: () => number, words: string[]): string {
  const w = () => words[Math.floor(r() * words.length)];
  const kinds = [
    () => `import { ${w()} } from "./${w()}.js";`,
    () => `export function ${w()}Service(${w()}: string) {`,
    () => `  const ${w()} = await ${w()}.${w()}(${w()});`,
    () => `  return ${w()} ?? ${w()};`,
    () => `  // TODO(${w()}): ${w()} ${w()} ${w()}`,
    () => `  if (${w()}.length > ${Math.floor(r() * 100)}) this.setState({ ${w()} });`,
    () => "}",
  ];
  return kinds[Math.floor(r() * kinds.length)]();
}

async function benchSearch(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-bench-search-"));
  try {
    const r = rng(7);
    const words = "user order cart item price total state props value data result error config options event handler".split(" ");
    for (const rel of generatePaths(SEARCH_FILES, 7)) {
      const lines = Array.from({ length: 10 + Math.floor(r() * 60) }, () => codeLine(r, words));
      if (r() < 0.0005) lines.push("export async function handleRefundWebhook(event) {}");
      mkdirSync(path.join(dir, path.dirname(rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), `${lines.join("\n")}\n`);
    }
    const chunk = "var a=function(b){return b&&this.setState({x:b}),null};";
    writeFileSync(path.join(dir, "vendor/bundle.min.js"), `${chunk.repeat(Math.ceil(MINIFIED_BYTES / chunk.length))}\n`, { flag: "w" });
    console.log(`search: ${SEARCH_FILES} files + a ${MINIFIED_BYTES >> 20} MB one-line minified file; ${SEARCH_REPS} runs per query, median ms`);

    const daemon = new BenchDaemon(dir);
    await daemon.ready;
    const ignores = writeDefaultIgnoreFile();
    const ratios: number[] = [];
    const floorRatios: number[] = [];
    for (const q of SEARCH_QUERIES) {
      const p = q.params;
      const options = {
        pattern: p.pattern as string,
        rel: "",
        glob: p.glob as string[] | undefined,
        caseSensitive: p.case_sensitive as boolean | undefined,
        fixedStrings: p.fixed_strings as boolean | undefined,
        context: (p.context as number | undefined) ?? 0,
        git: false, // a plain temp folder, as the daemon sees it
        defaultIgnores: ignores?.file,
      };
      const context = options.context ? [`--context=${options.context}`] : [];
      const globs = (options.glob ?? []).map((g) => `--glob=${g}`);
      const jsonArgs = ["--json", ...patternArgs(options), ...ignoreArgs(options), ...context, ...globs, "--glob=!.git", "-e", options.pattern, "--", "./"];
      const ownArgs = ripgrepArgs(options);
      let answer: any;
      let peerBytes = 0;
      const { ours, peer, floor } = await interleaved(
        {
          ours: async () => (answer = await daemon.call("search", p)),
          peer: async () => (peerBytes = await rgDirect(jsonArgs, dir)),
          floor: () => rgDirect(ownArgs, dir, DEFAULT_CAP + 1),
        },
        SEARCH_REPS,
        1, // the first of each is a warm-up, not counted
      );
      if (!answer.success) throw new Error(`search failed: ${JSON.stringify(answer.result)}`);
      const ratio = median(ours) / median(peer);
      ratios.push(ratio);
      console.log(
        `  ${q.label.padEnd(30)} ours ${fmt(median(ours)).padStart(7)} (p90 ${fmt(percentile(ours, 90)).padStart(7)})  ` +
          `rg --json ${fmt(median(peer)).padStart(7)} (p90 ${fmt(percentile(peer, 90)).padStart(7)})  ratio ${ratio.toFixed(2)}x  ` +
          `[${answer.result.total} lines returned${answer.result.truncated ? ", truncated" : ""}; rg printed ${(peerBytes / 1024).toFixed(0)} KB]`,
      );
      floorRatios.push(median(ours) / median(floor));
      console.log(
        `  ${"".padEnd(30)} vs rg (our arguments) killed at match ${DEFAULT_CAP + 1} (the least any capped reader can do): ${fmt(median(floor))} ms, ratio ${(median(ours) / median(floor)).toFixed(2)}x`,
      );
    }
    console.log(
      `  median ratio over ${ratios.length} queries: ${median(ratios).toFixed(2)}x vs rg --json to the end (target <= 1.2x); ${median(floorRatios).toFixed(2)}x vs rg stopped at the cap`,
    );
    await daemon.close();
  } finally {
    removeTree(dir);
  }
}

/**
 * The peer: rg itself, its whole output read; with `stopAt`, killed once that many match records went by (in rg's
 * standard output with --null, a record `PATH\0LINE:`; counted without parsing), the floor for any reader that caps.
 */
function rgDirect(args: string[], cwd: string, stopAt = Infinity): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(rgPath, args, { cwd, stdio: ["ignore", "pipe", "ignore"] });
    let bytes = 0;
    let matches = 0;
    child.stdout.on("data", (d: Buffer) => {
      bytes += d.length;
      if (stopAt === Infinity) return;
      for (let at = d.indexOf(0); at >= 0; at = d.indexOf(0, at + 1)) {
        let k = at + 1;
        while (d[k] >= 48 && d[k] <= 57) k++;
        if (d[k] === 58 && ++matches >= stopAt) {
          child.kill("SIGKILL");
          child.stdout.destroy();
          break;
        }
      }
    });
    child.on("error", reject);
    child.on("close", () => resolve(bytes));
  });
}

function gcNow(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

interface Matcher {
  search(query: string, limit: number): unknown;
}

/**
 * find_file's matcher as it was at BEFORE_COMMIT, transpiled into dist/bench (where its imports resolve), or undefined
 * when git or the commit is not at hand (a shallow clone).
 */
async function matcherBefore(): Promise<(new (paths: readonly string[]) => Matcher) | undefined> {
  try {
    const source = execFileSync("git", ["show", `${BEFORE_COMMIT}:src/search/fuzzy.ts`], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const ts = (await import("typescript")).default;
    const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    const file = fileURLToPath(new URL("./fuzzy-before.generated.js", import.meta.url));
    writeFileSync(file, js);
    return (await import(pathToFileURL(file).href)).FuzzyIndex;
  } catch {
    return undefined;
  }
}

/** Per-query times of `index` over `queries`, FIND_REPS passes, interleaved by the caller with the other matchers. */
function timeQueries(index: Matcher, queries: readonly string[], into: number[]): void {
  for (const q of queries) {
    const t = performance.now();
    index.search(q, 20);
    into.push(performance.now() - t);
  }
}

const stats = (xs: number[]) => `median ${fmt(median(xs))} ms, p90 ${fmt(percentile(xs, 90))} ms`;

async function benchFindFile(): Promise<void> {
  const paths = generatePaths(FIND_PATHS);
  const gc = gcNow();
  const all = [...FIND_QUERIES, ...TYPO_QUERIES];
  console.log(`find_file: ${FIND_PATHS} generated paths, ${FIND_QUERIES.length} ordinary queries and ${TYPO_QUERIES.length} typos x ${FIND_REPS}, limit 20`);

  const Before = await matcherBefore();
  const before = Before ? new Before(paths) : undefined; // built first: the heap figure below is ours alone
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  let t = performance.now();
  const index = new FuzzyIndex(paths);
  const buildMs = performance.now() - t;
  const ours = { ordinary: [] as number[], typos: [] as number[] };
  const theirs = { ordinary: [] as number[], typos: [] as number[] };
  const cold: number[] = [];
  for (let rep = 0; rep < FIND_REPS; rep++) {
    timeQueries(index, FIND_QUERIES, ours.ordinary);
    timeQueries(index, TYPO_QUERIES, ours.typos);
    if (rep === 0) cold.push(...ours.ordinary);
  }
  gc();
  const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
  // the worst case for the bounded cache of prepared targets: scattered abbreviations with a large limit
  for (const q of ["srvc", "ctrl", "mdl", "tst", "cfg", "hndlr", "rsp", "qry", "evt", "btn"]) index.search(q, 1000);
  gc();
  const worstMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
  // then the matcher before, and ours again: on a shared machine the load moves between phases, so ours is measured on both sides
  for (let rep = 0; rep < FIND_REPS && before; rep++) {
    timeQueries(before, FIND_QUERIES, theirs.ordinary);
    timeQueries(before, TYPO_QUERIES, theirs.typos);
  }
  for (let rep = 0; rep < FIND_REPS && before; rep++) {
    timeQueries(index, FIND_QUERIES, ours.ordinary);
    timeQueries(index, TYPO_QUERIES, ours.typos);
  }
  if (index.search("keep the index alive until measured", 1).total < 0 || before?.search("x", 1) === null) console.log("unreachable");
  const mixed = [...ours.ordinary, ...ours.typos];
  console.log(
    `  in-process matcher: build ${fmt(buildMs)} ms; all ${all.length} queries ${stats(mixed)} (target <= 15 / 40); ordinary ${stats(ours.ordinary)} (first pass alone: ${stats(cold)}); typos ${stats(ours.typos)}`,
  );
  console.log(
    `  index heap ${heapMb.toFixed(1)} MB after all queries, ${worstMb.toFixed(1)} MB after 10 scattered queries with limit 1000 (prepared-target cache filled)`,
  );
  if (before) {
    console.log(
      `  before (${BEFORE_COMMIT}, no typo fallback, same run): all ${stats([...theirs.ordinary, ...theirs.typos])}; ordinary ${stats(theirs.ordinary)}; typos ${stats(theirs.typos)}`,
    );
    const found = TYPO_QUERIES.map((q) => `${q} -> ${(index.search(q, 1) as { hits: { path: string }[] }).hits[0]?.path ?? "nothing"}`);
    console.log(`  typos' first hit now: ${found.join("; ")}`);
  } else console.log(`  before: skipped (git show ${BEFORE_COMMIT} is not available here)`);

  const fzf = spawnSync("fzf", ["--version"], { encoding: "utf8" });
  if (fzf.status === 0) {
    const input = paths.join("\n");
    const peer: number[] = [];
    const peerTypos: number[] = [];
    let typoHits = 0;
    for (const [queries, into] of [
      [FIND_QUERIES, peer],
      [TYPO_QUERIES, peerTypos],
    ] as const) {
      for (const q of queries) {
        t = performance.now();
        const r = spawnSync("fzf", ["--filter", q], { input, maxBuffer: 1 << 26, stdio: ["pipe", "pipe", "ignore"] }); // exit 1: no match
        into.push(performance.now() - t);
        if (queries === TYPO_QUERIES && r.status === 0) typoHits++;
      }
    }
    console.log(
      `  fzf --filter ${fzf.stdout.trim()} (a process per query, as a tool would run it): all ${stats([...peer, ...peerTypos])}; ordinary ${stats(peer)}, ratio of medians ${(median(ours.ordinary) / median(peer)).toFixed(2)}x; typos: fzf found something for ${typoHits} of ${TYPO_QUERIES.length}`,
    );
  } else {
    console.log("  fzf is not installed (apt-get install -y fzf): peer skipped");
  }

  const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-bench-find-"));
  try {
    const folders = new Set(paths.map((p) => path.dirname(p)));
    for (const f of folders) mkdirSync(path.join(dir, f), { recursive: true });
    for (const p of paths) writeFileSync(path.join(dir, p), "");
    const daemon = new BenchDaemon(dir);
    t = performance.now();
    await daemon.ready;
    const readyMs = performance.now() - t;
    const first = await daemon.call("find_file", { query: "usrsvc" });
    if (!first.success) {
      console.log(`  through the daemon: skipped (${first.result.code}: ${first.result.message})`);
    } else {
      const over: number[] = [];
      for (let rep = 0; rep < FIND_REPS; rep++) {
        for (const q of FIND_QUERIES) {
          t = performance.now();
          await daemon.call("find_file", { query: q });
          over.push(performance.now() - t);
        }
      }
      console.log(
        `  through the daemon (${FIND_PATHS} files on disk, ready in ${fmt(readyMs)} ms): round trip median ${fmt(median(over))} ms, p90 ${fmt(percentile(over, 90))} ms`,
      );
      const afterChange: number[] = [];
      for (let k = 0; k < FIND_REPS; k++) {
        const changed = daemon.nextEvent();
        writeFileSync(path.join(dir, `src/NewlyAdded${k}.ts`), "");
        await changed;
        t = performance.now();
        const found = await daemon.call("find_file", { query: `newlyadded${k}` });
        afterChange.push(performance.now() - t);
        if (found.result.paths?.[0] !== `src/NewlyAdded${k}.ts`) console.log(`  (the new file was not found first: ${JSON.stringify(found.result.paths)})`);
      }
      console.log(`  first query after a file is added (the matcher is rebuilt for the new generation): median ${fmt(median(afterChange))} ms`);
    }
    await daemon.close();
  } finally {
    removeTree(dir);
  }
}
