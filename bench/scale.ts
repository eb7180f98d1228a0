/**
 * `npm run bench -- scale` (issue 23): the daemon on large git workspaces, every figure timed from the caller's side
 * (this process, over the daemon's pipes) beside its peer in the same run, at 100,000 and 1,000,000 files
 * (BENCH_SCALE=100k skips the million; BENCH_SCALE=1M runs it alone). The trees come from big-tree.ts (cached). Per tree:
 * - time to ready and RSS: the daemon against @parcel/watcher subscribed alone on the same tree (raw-watcher.ts);
 * - cold search (the first search after the daemon starts): its answer or TIMEOUT, against rg alone;
 * - a 50,000-file `git checkout` made outside the daemon: from git's exit to the last path in fs.changed (the raw
 *   watcher's last path beside it), from HEAD moving to git.changed, and an unrelated edit made during the flood;
 * - git_status with nothing changed, and after 2,500 files were touched (mtime only), against `git status --porcelain=v2`;
 * - find_file over ordinary and typo queries against `fzf --filter`, and the first query after a file is added;
 * - (100k) file_read p99 while a slow git_log runs, against file_read on the idle daemon.
 * To iterate on the floods: BENCH_SCALE_PARTS=flood runs only those (and time to ready, RSS); BENCH_DAEMON_NODE_ARGS go
 * to the daemon's node ("--cpu-prof --cpu-prof-dir=/tmp/prof"); BENCH_SCALE_BEFORE_MAIN (another build's
 * dist/src/main.js) runs that daemon too, after this build's, in the same run (its figures marked "(before)").
 */
import { type FSWatcher, utimesSync, watch, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { rgPath } from "@vscode/ripgrep";
import { RARE_IDENTIFIER, TREES, type Tree, bigTree, git } from "./big-tree.js";
import { BenchDaemon, type Cleanup, Figures, exec, fmt, load, middle as median, percentile, rssMb, timed, treeCpuMs, withCleanup } from "./lib.js";
import { FIND_QUERIES, TYPO_QUERIES } from "./search-paths.js";

const RAW_WATCHER = fileURLToPath(new URL("./raw-watcher.js", import.meta.url));
/** Flood checkouts per side (main -> flood, flood -> main, ...). */
const FLOOD_ROUNDS = { "100k": 4, "1M": 2 } as const;
/** A flood whose paths have not all arrived this long after git's exit is reported with the number missing. */
const FLOOD_TIMEOUT_MS = 90_000;
/**
 * ... or once nothing at all was reported for this long after git's exit: the raw watcher loses a few paths of most
 * floods, and waiting out the whole bound for them took 6 of the 100k tree's 17 minutes.
 */
const FLOOD_QUIET_MS = 30_000;
const STATUS_SAMPLES = { "100k": 10, "1M": 4 } as const;
const TOUCHED = 2_500;
const TOUCH_ROUNDS = { "100k": 4, "1M": 2 } as const;
const FIND_REPS = 3;
const ADD_REPS = 5;
/** Slow git_log calls, one after another, for the read p99 beside them. */
const SLOW_LOG_ROUNDS = 3;
const IDLE_READS = 500;
/** After ready: sampled again after this idle time (the VFS may still be building its index). */
const SETTLE_MS = 3_000;

export default async function main(): Promise<void> {
  const scales = (process.env.BENCH_SCALE ?? "100k,1M").split(",").map((s) => s.trim());
  for (const s of scales) if (!(s in TREES)) throw new Error(`BENCH_SCALE: ${s} is not one of ${Object.keys(TREES).join(", ")}`);
  const figures = new Figures();
  try {
    for (const scale of scales) {
      console.log(`\n### ${scale} files (load ${load()})`);
      const tree = await bigTree(TREES[scale as keyof typeof TREES]);
      try {
        await onTree(tree, scale as keyof typeof TREES, figures);
      } finally {
        await tree.release();
      }
    }
  } finally {
    figures.print(`scale: figures from the caller's side (load = 1/5/15 min averages when measured; ${new Date().toISOString()})`);
  }
}

async function onTree(tree: Tree, scale: keyof typeof TREES, figures: Figures): Promise<void> {
  const dir = tree.dir;
  figures.add({
    scale,
    figure: `git checkout of the whole tree (${tree.paths.length} files), when built`,
    ours: tree.checkoutMs,
    unit: "ms",
    note: `built ${tree.builtAt}`,
  });

  // The raw watcher alone first: its time to subscribe, its RSS, and how it sees the floods.
  const raw = await withCleanup(async (cleanup) => {
    const [readyMs, w] = await timed(() => RawWatcher.start(dir, cleanup));
    const rss = rssMb(w.pid);
    const floods = [];
    const cpuBefore = treeCpuMs(w.pid);
    for (let r = 0; r < FLOOD_ROUNDS[scale]; r++) floods.push(await flood(w, tree, r, false));
    return { readyMs, rss, rssAfter: rssMb(w.pid), floods, cpuPerFlood: (treeCpuMs(w.pid) - cpuBefore) / floods.length };
  });
  // Caches cannot be dropped here, and this machine reclaims idle page cache: a tree not read for a while is read from
  // the disk again. rg goes first and last, with the daemon's own search timeout, so each side meets what it meets.
  const rgBefore = await rg(dir);

  const parts = process.env.BENCH_SCALE_PARTS?.split(",").map((s) => s.trim());
  if (parts && parts.join() !== "flood") throw new Error("BENCH_SCALE_PARTS: only `flood` is known");
  const floodsOnly = parts !== undefined;
  const nodeArgs = process.env.BENCH_DAEMON_NODE_ARGS?.split(" ").filter(Boolean);
  const daemons: { label: string; main?: string }[] = [{ label: "" }];
  if (process.env.BENCH_SCALE_BEFORE_MAIN) daemons.push({ label: " (before)", main: process.env.BENCH_SCALE_BEFORE_MAIN });
  for (const { label, main } of daemons)
    await withCleanup(async (cleanup) => {
      const t0 = performance.now();
      const d = new BenchDaemon(dir, [], { quiet: process.env.TOOL_LAYER_TRACE_FLOOD !== "1", main, nodeArgs }); // the trace is on its stderr
      cleanup.add("daemon", () => d.close());
      await d.ready;
      const readyMs = performance.now() - t0;
      const pid = d.child.pid!;
      const rssReady = rssMb(pid);
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const rssSettled = rssMb(pid);
      figures.add({ scale, figure: `time to ready${label}`, ours: readyMs, peer: raw.readyMs, peerName: "raw parcel subscribe", unit: "ms" });
      figures.add({ scale, figure: `RSS at ready${label}`, ours: rssReady, peer: raw.rss, peerName: "raw parcel", unit: "MB" });
      figures.add({ scale, figure: `RSS ${SETTLE_MS / 1000} s after ready${label}`, ours: rssSettled, peer: raw.rss, peerName: "raw parcel", unit: "MB" });

      // Cold search: the first one this daemon runs, on a pattern only a few files hold (every file must be read).
      if (!floodsOnly) await coldSearch();
      async function coldSearch(): Promise<void> {
        const [coldMs, cold] = await timed(() => d.call("search", { pattern: RARE_IDENTIFIER }));
        const [warmMs] = await timed(() => d.call("search", { pattern: RARE_IDENTIFIER }));
        const rgAfter = await rg(dir);
        const answer = cold.success ? `${cold.result.total ?? "?"} lines${cold.result.truncated ? ", truncated" : ""}` : cold.result.code;
        const expected = tree.paths.filter((_, i) => i >= 2 && (i - 2) % 50_000 === 25_000).length;
        const rgNote = (r: { ms: number; timedOut: boolean }) => `${fmt(r.ms)} ms${r.timedOut ? " (stopped: TIMEOUT)" : ""}`;
        figures.add({
          scale,
          figure: "cold search, rare identifier (first search after start)",
          ours: coldMs,
          peer: median([rgBefore.ms, rgAfter.ms]),
          peerName: "rg --json",
          unit: "ms",
          note: `answer: ${answer} (${expected} files hold it); rg before the daemon ${rgNote(rgBefore)}, after ${rgNote(rgAfter)}; the same search again ${fmt(warmMs)} ms`,
        });
      }

      const floods = [];
      const cpuBefore = treeCpuMs(pid);
      for (let r = 0; r < FLOOD_ROUNDS[scale]; r++) floods.push(await flood(daemonObserver(d), tree, r, true));
      figures.add({
        scale,
        figure: `  CPU per flood (daemon and its watcher host)${label}`,
        ours: (treeCpuMs(pid) - cpuBefore) / floods.length,
        peer: raw.cpuPerFlood,
        peerName: "raw parcel's process",
        unit: "ms",
      });
      const ok = floods.filter((f) => f.lastPathMs !== undefined);
      const rawOk = raw.floods.filter((f) => f.lastPathMs !== undefined);
      const missing = (fs: FloodFigures[]) => fs.map((f) => f.missing).join(", ");
      const note = `${ok.length}/${floods.length} floods complete (raw ${rawOk.length}/${raw.floods.length}; paths never reported per flood: ours ${missing(floods)}, raw ${missing(raw.floods)}); git checkout itself median ${fmt(median(floods.map((f) => f.gitMs)))} ms; fs.changed lines per flood ${floods.map((f) => f.lines).join(", ")}; per flood ours ${floods.map((f) => (f.lastPathMs === undefined ? "never" : fmt(f.lastPathMs))).join(", ")} ms, raw ${raw.floods.map((f) => (f.lastPathMs === undefined ? "never" : fmt(f.lastPathMs))).join(", ")} ms (raw git ${raw.floods.map((f) => fmt(f.gitMs)).join(", ")} ms)`;
      figures.add({
        scale,
        figure: `${tree.params.flood}-file checkout: git exit -> last path in fs.changed${label}`,
        ours: median(ok.map((f) => f.lastPathMs!)),
        peer: median(rawOk.map((f) => f.lastPathMs!)),
        peerName: "raw parcel's last path",
        unit: "ms",
        note,
        compare: "difference",
      });
      figures.add({
        scale,
        figure: `  HEAD moved -> git.changed${label}`,
        ours: median(floods.filter((f) => f.gitChangedMs !== undefined).map((f) => f.gitChangedMs!)),
        unit: "ms",
        note: `per flood: ${floods.map((f) => (f.gitChangedMs === undefined ? "none" : fmt(f.gitChangedMs))).join(", ")} ms`,
      });
      const unrelated = (fs: FloodFigures[]) => median(fs.map((f) => f.unrelatedMs ?? NaN).filter((x) => !Number.isNaN(x)));
      const perFlood = (fs: FloodFigures[]) =>
        fs
          .map(
            (f) =>
              `${f.unrelatedMs === undefined ? "never" : fmt(f.unrelatedMs)} ms (written ${fmt(Math.abs(f.unrelatedWrittenMs))} ms ${f.unrelatedWrittenMs < 0 ? "before" : "after"} git's exit, reported ${f.unrelatedBeforeLast ? "before" : "after"} the flood's last path)`,
          )
          .join("; ");
      figures.add({
        scale,
        figure: `  unrelated edit during the flood -> its event${label}`,
        ours: unrelated(floods),
        peer: unrelated(raw.floods),
        peerName: "raw parcel",
        unit: "ms",
        note: `ours: ${perFlood(floods)}\n  raw: ${perFlood(raw.floods)}`,
      });
      figures.add({ scale, figure: `RSS after the floods${label}`, ours: rssMb(pid), peer: raw.rssAfter, peerName: "raw parcel after its floods", unit: "MB" });
      if (floodsOnly) return;

      // a section that fails (git_status past its time-out on a loaded machine) is reported, and the next still runs
      for (const [name, section] of [
        ["git_status", gitStatus],
        ["find_file", findFile],
      ] as const) {
        await section(d, tree, scale, figures).catch((e) =>
          figures.add({ scale, figure: `${name}: failed`, ours: NaN, unit: "", note: e instanceof Error ? e.message : String(e) }),
        );
      }
      if (tree.params.history) await readsDuringGitLog(d, tree, scale, figures);
    });
}

interface FloodFigures {
  gitMs: number;
  /** From git's exit to the last flood path reported; undefined when it never came. */
  lastPathMs?: number;
  /** From HEAD moving (its file replaced) to git.changed naming the branch; undefined when none came. */
  gitChangedMs?: number;
  /** Lines (fs.changed lines, or the raw watcher's batches) that carried the flood. */
  lines: number;
  /** The flood's paths never reported (by FLOOD_TIMEOUT_MS after git's exit, or FLOOD_QUIET_MS after the last report). */
  missing: number;
  /** From the unrelated edit's write to its report; undefined when it never came. */
  unrelatedMs?: number;
  /** When the edit was written, from git's exit (negative: while git ran). */
  unrelatedWrittenMs: number;
  unrelatedBeforeLast: boolean;
}

/** What one line told: the paths it reported, or the branch of a git.changed. */
interface Observed {
  paths: string[];
  branch?: string;
}

/** A source of lines, the daemon's events or the raw watcher's batches: waits for more, hands over what came. */
interface Observer {
  wait(ms: number): Promise<void>;
  take(): Observed[];
}

function daemonObserver(d: BenchDaemon): Observer {
  let seen = d.events.length;
  return {
    wait: (ms) => timeout(d.nextEvent(), ms),
    take: () => {
      const out: Observed[] = [];
      for (; seen < d.events.length; seen++) {
        const e = d.events[seen];
        if (e.event === "fs.changed") out.push({ paths: e.data.changes.map((c: { path: string }) => c.path) });
        else if (e.event === "git.changed") out.push({ paths: [], branch: e.data.branch });
      }
      return out;
    },
  };
}

/** `p` or `ms`, whichever first; never rejects on the time-out. */
async function timeout(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
}

const target = (round: number) => (round % 2 === 0 ? "flood" : "main");
const UNRELATED = "README.md";

/**
 * One checkout between main and flood made by git outside the daemon, watched through `observer`: when git exits, when
 * the last of the flood's paths is reported, when git.changed names the branch, and when an unrelated edit, written as
 * soon as the first line of the flood arrives (or at git's exit if none came before), is reported.
 */
async function flood(observer: Observer, tree: Tree, round: number, expectGitEvent: boolean): Promise<FloodFigures> {
  const branch = target(round);
  const left = new Set(tree.floodPaths);
  let lastPathAt: number | undefined;
  let unrelatedAt: number | undefined;
  let unrelatedSeenAt: number | undefined;
  let gitChangedAt: number | undefined;
  let gitDoneAt: number | undefined;
  let lines = 0;
  const writeUnrelated = () => {
    if (unrelatedAt !== undefined) return;
    unrelatedAt = performance.now();
    writeFileSync(path.join(tree.dir, UNRELATED), `# edited during flood ${round} at ${Date.now()}\n`);
  };
  observer.take(); // what came before
  const head = headMoved(tree.dir);
  const gitStart = performance.now();
  const gitRun = git(tree.dir, "checkout", "-q", branch).then(() => {
    gitDoneAt = performance.now();
    traceFlood(`git exit (round ${round})`);
    writeUnrelated();
  });
  try {
    const pending = () =>
      lastPathAt === undefined || unrelatedSeenAt === undefined || (expectGitEvent && gitChangedAt === undefined) || gitDoneAt === undefined;
    let heardAt = 0;
    const waiting = () => gitDoneAt === undefined || performance.now() < Math.min(gitDoneAt + FLOOD_TIMEOUT_MS, Math.max(gitDoneAt, heardAt) + FLOOD_QUIET_MS);
    while (pending() && waiting()) {
      await (gitDoneAt === undefined ? Promise.race([observer.wait(1000), gitRun]) : observer.wait(1000));
      for (const o of observer.take()) {
        const now = performance.now();
        heardAt = now;
        if (o.branch === branch) gitChangedAt ??= now;
        if (!o.paths.length) continue;
        lines++;
        if (unrelatedAt !== undefined && o.paths.includes(UNRELATED)) unrelatedSeenAt ??= now;
        writeUnrelated();
        for (const p of o.paths) left.delete(p);
        if (!left.size && lastPathAt === undefined) {
          lastPathAt = now;
          traceFlood(`last path seen (round ${round})`);
        }
      }
    }
    await gitRun;
  } finally {
    head.close();
  }
  const gitDone = gitDoneAt!;
  const headAt = head.at ?? gitDone;
  return {
    gitMs: gitDone - gitStart,
    lastPathMs: lastPathAt === undefined ? undefined : lastPathAt - gitDone,
    gitChangedMs: gitChangedAt === undefined ? undefined : gitChangedAt - headAt,
    lines,
    missing: left.size,
    unrelatedMs: unrelatedSeenAt === undefined ? undefined : unrelatedSeenAt - unrelatedAt!,
    unrelatedWrittenMs: unrelatedAt! - gitDone,
    unrelatedBeforeLast: unrelatedSeenAt !== undefined && (lastPathAt === undefined || unrelatedSeenAt <= lastPathAt),
  };
}

/** With TOOL_LAYER_TRACE_FLOOD=1 (the daemon's flood trace, pipeline.ts), the bench's own marks beside its lines. */
function traceFlood(what: string): void {
  if (process.env.TOOL_LAYER_TRACE_FLOOD === "1") process.stderr.write(`bench: flood-trace ${Date.now()} ${what}\n`);
}

/** The time git's HEAD file is replaced (the branch switch's last step), watched on the git folder. */
function headMoved(dir: string): { at?: number; close(): void } {
  const watcher: FSWatcher = watch(path.join(dir, ".git"), (_, file) => {
    if (file === "HEAD" && state.at === undefined) state.at = performance.now();
  });
  const state: { at?: number; close(): void } = { close: () => watcher.close() };
  return state;
}

/** @parcel/watcher alone in a process of its own (raw-watcher.ts), its batches as lines. */
export class RawWatcher implements Observer {
  private readonly batches: Observed[] = [];
  private wake?: () => void;
  private constructor(
    readonly child: ReturnType<typeof spawn>,
    readonly pid: number,
  ) {}

  static async start(dir: string, cleanup: Cleanup): Promise<RawWatcher> {
    const child = spawn(process.execPath, [RAW_WATCHER, dir], { stdio: ["pipe", "pipe", "inherit"] });
    const w = new RawWatcher(child, child.pid!);
    cleanup.add("raw watcher", () => w.close());
    await new Promise<void>((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`the raw watcher exited (${code}) before it was ready`)));
      createInterface({ input: child.stdout! }).on("line", (line) => {
        const msg = JSON.parse(line);
        if (msg.ready) return resolve();
        w.batches.push({ paths: msg.paths });
        w.wake?.();
      });
    });
    return w;
  }

  wait(ms: number): Promise<void> {
    return timeout(new Promise<void>((r) => (this.wake = r)), ms);
  }

  take(): Observed[] {
    return this.batches.splice(0);
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const gone = new Promise((r) => this.child.once("exit", r));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await gone;
    clearTimeout(timer);
  }
}

/** The daemon's own limit for a search (src/tools/search.ts): rg alone gets as long. */
const SEARCH_TIMEOUT_MS = 30_000;
const rg = (dir: string) => exec(rgPath, ["--json", "-e", RARE_IDENTIFIER], { cwd: dir, okCodes: [0, 1], keepOutput: false, timeoutMs: SEARCH_TIMEOUT_MS });

const gitStatusDirect = async (dir: string) => (await exec("git", ["status", "--porcelain=v2"], { cwd: dir, keepOutput: false })).ms;
const callMs = async (d: BenchDaemon, tool: string, params: Record<string, unknown>) => (await timed(() => d.ok(tool, params)))[0];

/** Every `n`th tracked file's mtime moved on by `round` seconds, its content left as it is: git must look at each again. */
function touch(tree: Tree, n: number, round: number): void {
  const at = new Date(Date.now() + (round + 1) * 1000);
  const every = Math.floor(tree.paths.length / n);
  for (let i = 0; i < n; i++) utimesSync(path.join(tree.dir, tree.paths[i * every + 1]), at, at);
}

async function gitStatus(d: BenchDaemon, tree: Tree, scale: keyof typeof TREES, figures: Figures): Promise<void> {
  const dir = tree.dir;
  for (let i = 0; i < 2; i++) await Promise.all([callMs(d, "git_status", {}), gitStatusDirect(dir)]); // warm both, and the index
  const ours: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < STATUS_SAMPLES[scale]; i++) {
    direct.push(await gitStatusDirect(dir));
    ours.push(await callMs(d, "git_status", {}));
  }
  figures.add({
    scale,
    figure: "git_status, nothing changed",
    ours: median(ours),
    peer: median(direct),
    peerName: "git status --porcelain=v2",
    unit: "ms",
    note: `median of ${STATUS_SAMPLES[scale]}; p10 ${fmt(percentile(ours, 10))} vs ${fmt(percentile(direct, 10))} ms`,
  });

  // Touched files: each side's call comes right after its own touch of the same files, so each finds them all stale.
  const oursTouched: number[] = [];
  const directTouched: number[] = [];
  for (let r = 0; r < TOUCH_ROUNDS[scale]; r++) {
    touch(tree, TOUCHED, 2 * r);
    oursTouched.push(await callMs(d, "git_status", {}));
    touch(tree, TOUCHED, 2 * r + 1);
    directTouched.push(await gitStatusDirect(dir));
  }
  figures.add({
    scale,
    figure: `git_status after ${TOUCHED} files touched (content equal)`,
    ours: median(oursTouched),
    peer: median(directTouched),
    peerName: "git status --porcelain=v2",
    unit: "ms",
    note: `median of ${TOUCH_ROUNDS[scale]}: ours ${oursTouched.map(fmt).join(", ")}; git ${directTouched.map(fmt).join(", ")}`,
  });
}

/** `label` follows each figure's name (scale-find's baseline daemon). */
export async function findFile(d: BenchDaemon, tree: Tree, scale: keyof typeof TREES, figures: Figures, label = ""): Promise<void> {
  const first = await d.call("find_file", { query: "usrsvc" });
  if (!first.success) {
    console.log(`find_file: skipped (${first.result.code}: ${first.result.message})`);
    return;
  }
  const times: number[] = [];
  for (let rep = 0; rep < FIND_REPS; rep++) for (const q of [...FIND_QUERIES, ...TYPO_QUERIES]) times.push(await callMs(d, "find_file", { query: q }));

  const peer: number[] = [];
  if (spawnSync("fzf", ["--version"]).status === 0) {
    const input = tree.paths.join("\n");
    for (const q of FIND_QUERIES) peer.push((await exec("fzf", ["--filter", q], { input, okCodes: [0, 1], keepOutput: false })).ms); // exit 1: no match
  }
  figures.add({
    scale,
    figure: `find_file, ${FIND_QUERIES.length} queries + ${TYPO_QUERIES.length} typos, median${label}`,
    ours: median(times),
    peer: peer.length ? median(peer) : undefined,
    peerName: "fzf --filter (a process per query)",
    unit: "ms",
    note: `p90 ${fmt(percentile(times, 90))} ms${peer.length ? "" : "; fzf is not installed (apt-get install -y fzf): no peer"}`,
  });

  const afterAdd: number[] = [];
  const normal: number[] = [];
  for (let k = 0; k < ADD_REPS; k++) {
    const stem = `NewlyAddedBench${k}${label ? "Baseline" : ""}`; // a new file for each daemon
    const rel = `src/${stem}.ts`;
    const from = d.events.length;
    writeFileSync(path.join(tree.dir, rel), "export {};\n");
    await d.waitFor((e) => e.event === "fs.changed" && e.data.changes.some((c: { path: string }) => c.path === rel), from);
    const [ms, found] = await timed(() => d.ok("find_file", { query: stem.toLowerCase() }));
    afterAdd.push(ms);
    if (found.paths?.[0] !== rel) console.log(`  (the new file was not found first: ${JSON.stringify(found.paths)})`);
    normal.push(await callMs(d, "find_file", { query: stem.toLowerCase() }));
  }
  figures.add({
    scale,
    figure: `find_file, first query after a file is added${label}`,
    ours: median(afterAdd),
    peer: median(normal),
    peerName: "the same query again",
    unit: "ms",
  });
}

/** file_read while one slow git_log (a path-limited walk of the history branch) runs, against reads on the idle daemon. */
async function readsDuringGitLog(d: BenchDaemon, tree: Tree, scale: keyof typeof TREES, figures: Figures): Promise<void> {
  const probe = { path: tree.paths[2] };
  const idle: number[] = [];
  for (let i = 0; i < IDLE_READS; i++) idle.push(await callMs(d, "file_read", probe));
  const during: number[] = [];
  const logMs: number[] = [];
  for (let r = 0; r < SLOW_LOG_ROUNDS; r++) {
    let done = false;
    const slow = callMs(d, "git_log", { ref: "history", path: "hist/f1.txt", limit: 500 }).then((ms) => (logMs.push(ms), (done = true)));
    while (!done) during.push(await callMs(d, "file_read", probe));
    await slow;
  }
  figures.add({
    scale,
    figure: "file_read p99 while a slow git_log runs",
    ours: percentile(during, 99),
    peer: percentile(idle, 99),
    peerName: "idle daemon p99",
    unit: "ms",
    note: `${during.length} reads during ${SLOW_LOG_ROUNDS} git_log calls of median ${fmt(median(logMs))} ms over ${tree.params.history} commits; p50 ${fmt(median(during))} vs idle ${fmt(median(idle))} ms`,
  });
}
