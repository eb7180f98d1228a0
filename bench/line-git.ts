/**
 * Line-level git (SPEC 8, issue 11) on a 5,000-line file with 60 changed ranges, against git itself in the same run:
 * git_line_status through the daemon (target 20 ms); git_word_diff against `git diff --word-diff=porcelain` of the file
 * (target 1.5x); git_stage_lines of half the ranges against `git apply --cached` of the equivalent patch (target 1.5x);
 * and changelist remapping after an edit (target 5 ms), measured in-process on the tracker's own step (read the file,
 * diff it against the marked version, carry the marks), since no call waits for it.
 */
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { initHash } from "../src/core/hash.js";
import { EventBus } from "../src/platform/bus.js";
import { Supervisor } from "../src/platform/supervisor.js";
import { Workspace } from "../src/workspace.js";
import { BenchDaemon, exec, fmt, median, report, timed, removeTree } from "./lib.js";
import { LINES, RANGES, againstGit, edited, lineGitRepo, text } from "./line-git-fixture.js";

/** Timed runs per figure, ours and git's interleaved so both see the same load. */
const SAMPLES = 30;
/** Untimed runs first: the daemon's caches and git's page cache warm up. */
const WARMUP = 3;

const run = async (dir: string, args: string[], input?: string) => {
  const r = await exec("git", args, { cwd: dir, input });
  return { ms: r.ms, out: r.stdout };
};
const git = async (dir: string, ...args: string[]) => (await run(dir, args)).out;

export default async function main(): Promise<void> {
  const { dir, file, base, work, halfPatch } = await lineGitRepo();
  const d = new BenchDaemon(dir);
  try {
    await d.ready;
    const status = await d.ok("git_line_status", { path: "big.ts" });
    const hash = status.hash as string;
    const ranges = status.ranges as { range: number }[];
    if (ranges.length !== RANGES) throw new Error(`expected ${RANGES} ranges, got ${ranges.length}`);
    const half = ranges.filter((r) => r.range % 2 === 1).map((r) => r.range);

    const call = (tool: string, params: Record<string, unknown>) => async () => (await timed(() => d.ok(tool, params)))[0];
    const gitRun = (args: string[], input?: string) => async () => (await run(dir, args, input)).ms;

    // git_line_status: the figure is absolute; git diff of the file beside it for scale.
    const st = await againstGit(d, WARMUP, SAMPLES, call("git_line_status", { path: "big.ts" }), gitRun(["diff", "--", "big.ts"]));
    report(`git_line_status, ${LINES} lines, ${RANGES} ranges (target 20 ms)`, median(st.ours), median(st.git), "ms", "git diff");
    console.log(`  daemon CPU per call: ${fmt(st.cpuPerCall)} ms (10 ms clock ticks, averaged)`);

    const wd = await againstGit(d, WARMUP, SAMPLES, call("git_word_diff", { path: "big.ts" }), gitRun(["diff", "--word-diff=porcelain", "--", "big.ts"]));
    report("git_word_diff (target 1.5x)", median(wd.ours), median(wd.git), "ms", "git diff --word-diff=porcelain");
    console.log(`  daemon CPU per call: ${fmt(wd.cpuPerCall)} ms`);

    // Staging half the ranges: each run starts from an index equal to HEAD (the reset is not timed).
    const reset = async () => void (await git(dir, "reset", "-q", "--", "big.ts"));
    const sg = await againstGit(
      d,
      WARMUP,
      SAMPLES,
      call("git_stage_lines", { path: "big.ts", hash, ranges: half }),
      async () => {
        const staged = await git(dir, "diff", "--cached", "--", "big.ts");
        await reset();
        const ms = await gitRun(["apply", "--cached", "-"], halfPatch)();
        if (staged !== (await git(dir, "diff", "--cached", "--", "big.ts")))
          throw new Error("git_stage_lines staged something else than git apply of the same ranges");
        return ms;
      },
      reset,
    );
    await reset();
    report(`git_stage_lines of ${half.length} ranges (target 1.5x)`, median(sg.ours), median(sg.git), "ms", "git apply --cached");
    console.log(`  daemon CPU per call: ${fmt(sg.cpuPerCall)} ms; git runs once (update-index), as git apply does`);
  } finally {
    await d.close();
  }

  // Remapping, in-process: the tracker's step for one file after an edit.
  await initHash();
  const processes = new Supervisor();
  const ws = new Workspace({ root: dir }, processes, new EventBus(), () => undefined);
  try {
    const svc = ws.git;
    svc.start();
    await svc.changelists.ready();
    const loaded = await svc.lines.load({ repo: svc }, "big.ts");
    const ids = loaded.versions.headToWorktree.ranges.filter((r) => r.id % 2 === 0).map((r) => r.id);
    await svc.changelists.mark(loaded, { ranges: ids }, "feature");
    const variants = [work, text(["// a new first line", ...edited(base, () => true)])];
    const remap: number[] = [];
    let remapCpu = 0;
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      writeFileSync(file, variants[(i + 1) % 2]);
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      await svc.changelists.followDisk("big.ts");
      const c = process.cpuUsage(c0);
      if (i >= WARMUP) remap.push(performance.now() - t0), (remapCpu += (c.user + c.system) / 1000);
    }
    report("changelist remapping after an edit (target 5 ms)", median(remap), undefined, "ms");
    console.log(`  CPU per remap: ${fmt(remapCpu / SAMPLES)} ms`);
    const after = await svc.lines.load({ repo: svc }, "big.ts");
    const marks = await svc.changelists.marksFor(after);
    const kept = new Set(marks.lines.values());
    console.log(`  (${marks.lines.size} marked lines after ${SAMPLES + WARMUP} edits, lists: ${[...kept].join(", ")})`);
  } finally {
    await ws.dispose();
    await processes.stop();
    removeTree(dir);
  }
  console.log(`medians of ${SAMPLES} runs each`);
}
