import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BenchDaemon, cpuMs, exec } from "./lib.js";

/**
 * The line-level git benchmarks' file (issue 11): 5,000 code-like lines and 60 changed ranges (modified, added and
 * deleted lines in turn), shared by line-git.ts and caller.ts.
 */
export const LINES = 5_000;
export const RANGES = 60;

/** Code-like lines, each unique enough that the diff is unambiguous, with blocks and blank lines like real code. */
export function source(): string[] {
  return Array.from({ length: LINES }, (_, i) => (i % 25 === 24 ? "" : i % 25 === 23 ? "}" : `  const value${i} = compute(${i}, "item ${i}"); // step ${i}`));
}

/** The file with range r (0..RANGES-1) changed when `pick(r)`: modified, added and deleted lines in turn. */
export function edited(base: string[], pick: (r: number) => boolean): string[] {
  const out: string[] = [];
  const every = Math.floor(LINES / RANGES);
  // One code line (not a blank or a brace) in the middle of each stretch of `every` lines.
  const targets = new Map<number, number>();
  for (let r = 0; r < RANGES; r++) {
    let t = r * every + Math.floor(every / 2);
    while (t % 25 >= 23) t++;
    targets.set(t, r);
  }
  for (let i = 0; i < base.length; i++) {
    const r = targets.get(i) ?? -1;
    const at = r >= 0 && pick(r);
    if (!at) {
      out.push(base[i]);
      continue;
    }
    const kind = r % 3;
    if (kind === 0) out.push(base[i].replace("compute", "computeFaster"));
    else if (kind === 1) out.push(base[i], `  log("after ${i}");`, `  check(value${i});`);
    // kind 2: the line is deleted
  }
  return out;
}

export const text = (lines: string[]) => `${lines.join("\n")}\n`;

/**
 * A repository whose big.ts is committed as `base` and has all RANGES ranges changed in the worktree (`work`), and the
 * patch that stages every other range (`halfPatch`, what `git apply --cached` takes for the same selection).
 */
export async function lineGitRepo(): Promise<{ dir: string; file: string; base: string[]; work: string; halfPatch: string }> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-bench-linegit-")));
  const git = async (...args: string[]) => (await exec("git", args, { cwd: dir })).stdout;
  const file = path.join(dir, "big.ts");
  const base = source();
  await git("init", "-q", "-b", "main");
  for (const [k, v] of [
    ["user.email", "bench@example.com"],
    ["user.name", "Bench"],
    ["commit.gpgsign", "false"],
  ])
    await git("config", k, v);
  writeFileSync(file, text(base));
  await git("add", "big.ts");
  await git("commit", "-qm", "base");
  const work = text(edited(base, () => true));
  writeFileSync(file, text(edited(base, (r) => r % 2 === 0)));
  const halfPatch = await git("diff", "--", "big.ts");
  writeFileSync(file, work);
  return { dir, file, base, work, halfPatch };
}

/**
 * `warmup + samples` rounds of `prepare` (untimed), ours (and the daemon's CPU for it), then git's: the times of both
 * after the warm-up, interleaved so both see the same load, and the daemon's CPU per call.
 */
export async function againstGit(
  d: BenchDaemon,
  warmup: number,
  samples: number,
  ours: () => Promise<number>,
  theirs: () => Promise<number>,
  prepare = async () => {},
) {
  const times = { ours: [] as number[], git: [] as number[] };
  let cpu = 0;
  for (let i = 0; i < warmup + samples; i++) {
    await prepare();
    const c0 = cpuMs(d.child.pid);
    const ms = await ours();
    const used = cpuMs(d.child.pid) - c0;
    const gitMs = await theirs();
    if (i < warmup) continue;
    times.ours.push(ms);
    times.git.push(gitMs);
    cpu += used;
  }
  return { ...times, cpuPerCall: cpu / samples };
}
