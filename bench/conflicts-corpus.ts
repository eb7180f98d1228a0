/**
 * Conflicts (issue 12): how many conflict blocks auto-resolution settles on real conflicting merges, against what
 * `git merge-file` alone leaves, with every settled block checked against the real resolution where one exists; and
 * the pure core's share of git_conflicts / git_conflict_resolve on a 2,000-line file with 100 blocks.
 *
 * Two corpora. "history": this repository's own history, where two commits touched the same lines of a file: the later
 * one cherry-picked onto the version before the earlier one (base = the later commit's parent, ours = the version
 * before the earlier commit, theirs = the later commit's), which conflicts exactly where the two touched the same
 * lines; no real resolution exists for these. "merges": every two-parent merge commit of a real repository whose
 * parents conflict when merged again (git merge-tree, merge-ort), with the index stages merge-ort gives; the merge
 * commit's file is the real resolution each settled block is checked against.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { type AutoRule, autoResolve } from "../src/core/merge/auto-resolve.js";
import { renderSide, resolveKeep } from "../src/core/merge/keep-table.js";
import { locateBlocks } from "../src/core/merge/locate.js";
import { chooseMarkerSize, renderMerged } from "../src/core/merge/markers.js";
import { Interner } from "../src/core/sequence-diff.js";
import { type Lines, type MergeResult, mergeLines, mergeSequences } from "../src/core/merge/three-way.js";
import { splitText } from "../src/core/text.js";
import { fmt, median, removeTree } from "./lib.js";

/** Lines of settled context on each side that must surround a settled block's text in the real resolution. */
const CHECK_CONTEXT = 3;
/** How far (lines) from a block's place in the merged file its surroundings are looked for in the real resolution. */
const CHECK_WINDOW = 400;
/** The merges corpus stops after this long (re-merging 5,000 merges with merge-tree takes several minutes here). */
const MERGES_BUDGET_MS = 12 * 60_000;
/** Disagreements printed with their text, for a person to judge. */
const SHOWN_DISAGREEMENTS = 40;
/** Timing: runs per figure after warm-up. */
const TIMING_RUNS = 30;
/** A real repository with many merge commits, fetched for the lead's bench (git dirs, comma-separated, in this env). */
const DEFAULT_MERGE_REPOS = ["/work/.mirror/webpack+webpack/repo"];

interface CorpusFigures {
  corpus: string;
  /** Merges (or cherry-picks) with at least one conflicted text file. */
  merges: number;
  files: number;
  /** Blocks `git merge-file --diff3` leaves (Myers, 7-character markers). */
  mergeFileBlocks: number;
  /** Blocks of our merge (histogram diff, as merge-ort). */
  blocks: number;
  /** Files whose blocks equal merge-ort's own diff3 regions (merges corpus only). */
  sameAsOrt: number;
  settled: number;
  byRule: Record<AutoRule, number>;
  /**
   * Settled blocks checked against the real resolution: it has the same text there, the same apart from spacing and
   * line breaks (the merge commit re-formatted it), or something else (in a source file, or in a generated one).
   */
  agree: number;
  reformatted: number;
  disagree: number;
  disagreeGenerated: number;
  /** Settled blocks whose surroundings the real resolution no longer has (or no real resolution exists). */
  unchecked: number;
  /** The same check on git's own clean hunks (a change only one side made) in the same files: the baseline. */
  clean: { hunks: number; agree: number; reformatted: number; disagree: number; unchecked: number };
  /** Disagreeing source blocks where the merge commit has exactly ours or theirs there (it dropped the other side's change). */
  disagreeTookSide: number;
  /** Checked settled source blocks per top folder: [agree or reformatted, disagree]. */
  byFolder: Record<string, [number, number]>;
  disagreements: string[];
}

function emptyFigures(corpus: string): CorpusFigures {
  return {
    corpus,
    merges: 0,
    files: 0,
    mergeFileBlocks: 0,
    blocks: 0,
    sameAsOrt: 0,
    settled: 0,
    byRule: { identical: 0, "one-sided": 0, words: 0, whitespace: 0 },
    agree: 0,
    reformatted: 0,
    disagree: 0,
    disagreeGenerated: 0,
    unchecked: 0,
    clean: { hunks: 0, agree: 0, reformatted: 0, disagree: 0, unchecked: 0 },
    disagreeTookSide: 0,
    byFolder: {},
    disagreements: [],
  };
}

function git(gitDir: string, args: string[], input?: string): { status: number; stdout: string } {
  const r = spawnSync("git", [`--git-dir=${gitDir}`, ...args], { encoding: "utf8", input, maxBuffer: 512 * 1024 * 1024 });
  return { status: r.status ?? -1, stdout: r.stdout };
}

/** Reads many blobs ("rev:path" or an oid) through one `git cat-file --batch`; null for a missing or binary one. */
function readBlobs(gitDir: string, specs: string[]): Promise<(string | null)[]> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", [`--git-dir=${gitDir}`, "cat-file", "--batch"], { stdio: ["pipe", "pipe", "ignore"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => chunks.push(d));
    child.on("error", reject);
    child.on("close", () => {
      const buf = Buffer.concat(chunks);
      const out: (string | null)[] = [];
      let at = 0;
      for (let i = 0; i < specs.length; i++) {
        const nl = buf.indexOf(10, at);
        const header = buf.subarray(at, nl).toString();
        at = nl + 1;
        if (header.endsWith(" missing") || header.endsWith(" ambiguous")) {
          out.push(null);
          continue;
        }
        const size = Number(header.split(" ")[2]);
        const body = buf.subarray(at, at + size);
        at += size + 1;
        out.push(body.includes(0) ? null : body.toString("utf8"));
      }
      resolve(out);
    });
    child.stdin.end(specs.map((s) => `${s}\n`).join(""));
  });
}

function mergeFileBlocks(scratch: string, base: string, ours: string, theirs: string): number {
  for (const [name, text] of Object.entries({ base, ours, theirs })) writeFileSync(path.join(scratch, name), text);
  const r = spawnSync("git", ["merge-file", "-p", "--diff3", "ours", "base", "theirs"], { cwd: scratch, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  return r.status ?? 0;
}

/** The [ours, base, theirs] parts of a diff3-style text with 7-character markers. */
function diff3Blocks(text: string): string[][][] {
  const blocks: string[][][] = [];
  let current: string[][] | null = null;
  let part = 0;
  for (const line of splitText(text).lines) {
    const run = (ch: string) => line.startsWith(ch.repeat(7)) && (line.length === 7 || line[7] === " ");
    if (run("<")) (current = [[], [], []]), (part = 0);
    else if (current && run("|")) part = 1;
    else if (current && run("=")) part = 2;
    else if (current && run(">")) blocks.push(current), (current = null);
    else if (current) current[part].push(line);
  }
  return blocks;
}

const sameSeq = (a: readonly (string | null)[], ai: number, b: readonly string[]) => b.every((x, k) => a[ai + k] === x);

/**
 * The merged file as settled text with one null per conflict block, and where each block and each clean hunk (a
 * change only one side made) sits in it: xmerge.c's output walk over the hunks mergeLines uses.
 */
function layout(base: Lines, ours: Lines, theirs: Lines) {
  const interner = new Interner();
  const key = (d: Lines) => Int32Array.from(d.lines, (l, i) => interner.id(l + d.eols[i]));
  const hunks = mergeSequences(key(base), key(ours), key(theirs));
  const out: (string | null)[] = [];
  const clean: { from: number; to: number }[] = [];
  const blocks: number[] = [];
  const copy = (d: Lines, from: number, to: number) => {
    for (let k = from; k < to; k++) out.push(d.lines[k]);
  };
  let i = 0;
  for (const m of hunks) {
    copy(ours, i, m.i1);
    if (m.mode === 0) {
      blocks.push(out.length);
      out.push(null);
    } else {
      const from = out.length;
      if (m.mode === 1) copy(ours, m.i1, m.i1 + m.chg1);
      else copy(theirs, m.i2, m.i2 + m.chg2);
      clean.push({ from, to: out.length });
    }
    i = m.i1 + m.chg1;
  }
  copy(ours, i, ours.lines.length);
  return { out, clean, blocks };
}

/** Up to CHECK_CONTEXT settled lines before `from` and from `to` on, and whether the file's start or end is there. */
function contextAt(out: readonly (string | null)[], from: number, to: number) {
  const before: string[] = [];
  let p = from - 1;
  for (; p >= 0 && before.length < CHECK_CONTEXT && out[p] !== null; p--) before.unshift(out[p]!);
  const after: string[] = [];
  let q = to;
  for (; q < out.length && after.length < CHECK_CONTEXT && out[q] !== null; q++) after.push(out[q]!);
  return { before, after, atStart: before.length === from, atEnd: after.length === out.length - to };
}

/** Generated files (test snapshots, lockfiles): a merge commit regenerates them rather than merging their text. */
const GENERATED = /(__snapshots__|\.snap$|lock\.(json|yaml)$|yarn\.lock$|\.min\.)/;

const compact = (lines: readonly string[]) => lines.join("").replace(/\s+/g, "");

type Verdict = { verdict: "agree" | "reformatted" | "disagree" | "unchecked"; real?: string[] };

/**
 * Whether the real file has `settled` between its surroundings near where it sits in the merge (or the same text apart
 * from spacing and line breaks), has other text of a comparable length there, or no longer has the surroundings.
 */
function check(out: readonly (string | null)[], from: number, to: number, settled: readonly string[], real: readonly string[]): Verdict {
  const { before, after, atStart, atEnd } = contextAt(out, from, to);
  if (!before.length && !atStart) return { verdict: "unchecked" }; // a block right before: no settled surroundings
  if (!after.length && !atEnd) return { verdict: "unchecked" };
  // At the file's start (end) the surroundings must start (end) the real file too.
  const starts: number[] = [];
  const first = atStart ? 0 : Math.max(0, from - before.length - CHECK_WINDOW);
  const last = atStart ? 0 : Math.min(real.length - before.length, from + CHECK_WINDOW);
  for (let p = first; p <= last; p++) if (sameSeq(real, p, before)) starts.push(p + before.length);
  starts.sort((x, y) => Math.abs(x - from) - Math.abs(y - from));
  const endsWell = (e: number) => sameSeq(real, e, after) && (!atEnd || e + after.length === real.length);
  for (const s of starts) if (sameSeq(real, s, settled) && endsWell(s + settled.length)) return { verdict: "agree" };
  const longest = 2 * settled.length + 20;
  for (const s of starts) {
    const ends: number[] = [];
    for (let e = s; e <= Math.min(real.length - after.length, s + longest); e++) if (endsWell(e)) ends.push(e);
    if (ends.some((e) => compact(real.slice(s, e)) === compact(settled))) return { verdict: "reformatted" };
    if (ends.length && ends[0] - s <= longest) return { verdict: "disagree", real: real.slice(s, ends[0]) };
  }
  return { verdict: "unchecked" };
}

function tally(fig: CorpusFigures, docs: [Lines, Lines, Lines], merge: MergeResult, label: string, real: readonly string[] | null): void {
  const { out, clean, blocks } = layout(...docs);
  if (blocks.length !== merge.blocks.length) throw new Error(`${label}: layout and mergeLines disagree`);
  fig.blocks += merge.blocks.length;
  if (real && !GENERATED.test(label)) {
    for (const h of clean) {
      fig.clean.hunks++;
      fig.clean[check(out, h.from, h.to, out.slice(h.from, h.to) as string[], real).verdict]++;
    }
  }
  for (const block of merge.blocks) {
    const auto = autoResolve(block);
    if (!auto) continue;
    fig.settled++;
    fig.byRule[auto.rule]++;
    const at = blocks[block.index];
    const { verdict, real: there } = real ? check(out, at, at + 1, auto.lines, real) : ({ verdict: "unchecked" } as Verdict);
    if (verdict === "disagree" && GENERATED.test(label)) fig.disagreeGenerated++;
    else fig[verdict]++;
    const same = (x: readonly string[]) => !!there && x.length === there.length && x.every((l, k) => l === there[k]);
    if (verdict === "disagree" && !GENERATED.test(label) && (same(block.ours.lines) || same(block.theirs.lines))) fig.disagreeTookSide++;
    if (!GENERATED.test(label) && verdict !== "unchecked") {
      const folder = /^\S+ ([^/]+)\//.exec(label)?.[1] ?? "(top)";
      const row = (fig.byFolder[folder] ??= [0, 0]);
      row[verdict === "disagree" ? 1 : 0]++;
    }
    if (verdict === "disagree" && !GENERATED.test(label) && fig.disagreements.length < SHOWN_DISAGREEMENTS) {
      const show = (name: string, lines: readonly string[]) => `    ${name}:\n${lines.map((l) => `      |${l}`).join("\n")}`;
      const parts = [
        show("ours", block.ours.lines),
        show("base", block.base.lines),
        show("theirs", block.theirs.lines),
        show("settled", auto.lines),
        show("merge commit", there!),
      ];
      fig.disagreements.push(`  ${label} block ${block.index + 1} (${auto.rule}):\n${parts.join("\n")}`);
    }
  }
}

/** The "history" corpus: later commits cherry-picked onto the version before the previous commit to the same file. */
async function historyCorpus(gitDir: string): Promise<CorpusFigures> {
  const fig = emptyFigures(`history (${gitDir})`);
  const scratch = mkdtempSync(path.join(tmpdir(), "tool-layer-bench-conflicts-"));
  try {
    const log = git(gitDir, ["log", "--reverse", "--format=%x00%H", "--name-only", "--no-renames", "HEAD"]).stdout;
    const byPath = new Map<string, string[]>();
    for (const entry of log.split("\0").slice(1)) {
      const [commit, ...files] = entry.trim().split("\n");
      for (const f of files) if (f) byPath.set(f, [...(byPath.get(f) ?? []), commit]);
    }
    const triples: { path: string; c: string[] }[] = [];
    for (const [p, commits] of byPath) for (let i = 0; i + 2 < commits.length; i++) triples.push({ path: p, c: commits.slice(i, i + 3) });
    const blobs = await readBlobs(
      gitDir,
      triples.flatMap((t) => t.c.map((c) => `${c}:${t.path}`)),
    );
    triples.forEach((t, i) => {
      const [v0, v1, v2] = blobs.slice(3 * i, 3 * i + 3);
      if (v0 === null || v1 === null || v2 === null) return;
      const docs: [Lines, Lines, Lines] = [splitText(v1), splitText(v0), splitText(v2)];
      const mf = mergeFileBlocks(scratch, v1, v0, v2);
      const merge = mergeLines(...docs);
      if (!merge.blocks.length && !mf) return;
      fig.merges++;
      fig.files++;
      fig.mergeFileBlocks += mf;
      tally(fig, docs, merge, `${t.path} @${t.c[2].slice(0, 9)}`, null);
    });
  } finally {
    removeTree(scratch);
  }
  return fig;
}

/** The "merges" corpus: real merge commits re-merged with merge-ort; settled blocks checked against each merge commit. */
async function mergesCorpus(mirror: string, budgetMs = MERGES_BUDGET_MS): Promise<CorpusFigures & { scanned: number; complete: boolean }> {
  const fig = { ...emptyFigures(`merges (${mirror})`), scanned: 0, complete: true };
  // merge-tree writes objects: into a throwaway clone that borrows the mirror's objects, never into the mirror.
  const scratch = mkdtempSync(path.join(tmpdir(), "tool-layer-bench-conflicts-"));
  const gitDir = path.join(scratch, "repo.git");
  try {
    spawnSync("git", ["clone", "-q", "--bare", "--shared", mirror, gitDir]);
    const merges = git(gitDir, ["log", "--merges", "--format=%H %P", "HEAD"])
      .stdout.trim()
      .split("\n")
      .map((l) => l.split(" "));
    const t0 = performance.now();
    for (const [commit, ...parents] of merges) {
      if (performance.now() - t0 > budgetMs) {
        fig.complete = false;
        break;
      }
      if (parents.length !== 2) continue;
      fig.scanned++;
      const r = git(gitDir, ["-c", "merge.conflictStyle=diff3", "merge-tree", "--write-tree", parents[0], parents[1]]);
      if (r.status !== 1) continue;
      const [tree, ...rest] = r.stdout.split("\n");
      const stages = new Map<string, string[]>();
      for (const line of rest) {
        const m = /^\d+ ([0-9a-f]+) ([123])\t(.*)$/.exec(line);
        if (!m) break;
        const s = stages.get(m[3]) ?? [];
        s[Number(m[2])] = m[1];
        stages.set(m[3], s);
      }
      const files = [...stages].filter(([, s]) => s[1] && s[2] && s[3]);
      if (!files.length) continue;
      const blobs = await readBlobs(
        gitDir,
        files.flatMap(([p, s]) => [s[1], s[2], s[3], `${commit}:${p}`, `${tree}:${p}`]),
      );
      let counted = false;
      files.forEach(([p], i) => {
        const [base, ours, theirs, real, ort] = blobs.slice(5 * i, 5 * i + 5);
        if (base === null || ours === null || theirs === null) return;
        counted = true;
        fig.files++;
        fig.mergeFileBlocks += mergeFileBlocks(scratch, base, ours, theirs);
        const docs: [Lines, Lines, Lines] = [splitText(base), splitText(ours), splitText(theirs)];
        const merge = mergeLines(...docs);
        tally(fig, docs, merge, `${commit.slice(0, 9)} ${p}`, real === null ? null : splitText(real).lines);
        if (ort !== null && JSON.stringify(diff3Blocks(ort)) === JSON.stringify(merge.blocks.map((b) => [b.ours.lines, b.base.lines, b.theirs.lines])))
          fig.sameAsOrt++;
      });
      if (counted) fig.merges++;
    }
  } finally {
    removeTree(scratch);
  }
  return fig;
}

/** The issue's file: 2,000 lines, 100 blocks (every 20th line changed on both sides). */
export const HUNDRED_BLOCKS = { lines: 2000, blocks: 100 };

/** The issue's file and its two sides: half the blocks change the same word on both (no resolution), half different words (a word merge settles them). */
export function hundredBlocks(): { base: string; ours: string; theirs: string } {
  const base: string[] = [];
  for (let i = 0; i < HUNDRED_BLOCKS.lines; i++) base.push(`  const value${i} = compute(${i}, "label ${i}", options.limit);`);
  const ours = [...base];
  const theirs = [...base];
  for (let k = 0; k < HUNDRED_BLOCKS.blocks; k++) {
    const i = 10 + 20 * k;
    ours[i] = `  const value${i} = compute(${i + 1}, "label ${i}", options.limit);`;
    theirs[i] = k % 2 ? `  const value${i} = compute(${i + 2}, "label ${i}", options.limit);` : `  const value${i} = compute(${i}, "label ${i}", options.max);`;
  }
  const join = (l: string[]) => l.join("\n") + "\n";
  return { base: join(base), ours: join(ours), theirs: join(theirs) };
}

function timed(fn: () => void): number {
  for (let i = 0; i < 5; i++) fn();
  const runs: number[] = [];
  for (let i = 0; i < TIMING_RUNS; i++) {
    const t = performance.now();
    fn();
    runs.push(performance.now() - t);
  }
  return median(runs);
}

/** The pure core's part of git_conflicts (merge the stages, map onto the worktree, auto proposals, render sides) and of one resolve. */
function conflictTimings(): Record<string, number> {
  const { base, ours, theirs } = hundredBlocks();
  const docs = [splitText(base), splitText(ours), splitText(theirs)] as const;
  const first = mergeLines(...docs);
  const labels = { ours: "HEAD", base: "base", theirs: "topic" };
  const worktree = renderMerged(first, { markerSize: 7, labels, eol: "\n" });
  const figures: Record<string, number> = { blocks: first.blocks.length, "auto-settled": first.blocks.filter((b) => autoResolve(b)).length };
  figures["merge stages (ms)"] = timed(() => mergeLines(...docs));
  figures["auto-resolve 100 blocks (ms)"] = timed(() => {
    for (const b of first.blocks) autoResolve(b);
  });
  figures["locate in worktree (ms)"] = timed(() => locateBlocks(first, worktree.lines, 7));
  figures["git_conflicts core (ms)"] = timed(() => {
    const m = mergeLines(...docs);
    const size = chooseMarkerSize(docs.map((d) => d.lines));
    const { located } = locateBlocks(m, worktree.lines, size);
    for (const l of located) {
      const b = m.blocks[l.block];
      renderSide(b.ours), renderSide(b.base), renderSide(b.theirs), autoResolve(b);
    }
  });
  figures["git_conflict_resolve core (ms)"] = timed(() => {
    const m = mergeLines(...docs);
    const { located } = locateBlocks(m, worktree.lines, 7);
    const at = located[50];
    const r = resolveKeep(m.blocks[at.block], ["ours:1", { text: "  // merged" }], { eol: "\n", atEnd: false });
    const lines = [...worktree.lines];
    lines.splice(at.start, at.end - at.start + 1, ...r.lines);
  });
  return figures;
}

function print(f: CorpusFigures & { scanned?: number; complete?: boolean }): void {
  console.log(`\n### ${f.corpus}`);
  if (f.scanned !== undefined) console.log(`merge commits scanned: ${f.scanned}${f.complete ? "" : " (time budget reached)"}`);
  console.log(`conflicting merges: ${f.merges}, conflicted text files: ${f.files}`);
  console.log(`blocks git merge-file leaves: ${f.mergeFileBlocks}; blocks of our merge: ${f.blocks}`);
  if (f.scanned !== undefined) console.log(`files whose blocks equal merge-ort's diff3 regions: ${f.sameAsOrt}/${f.files}`);
  const pct = f.blocks ? ((100 * f.settled) / f.blocks).toFixed(1) : "0";
  console.log(
    `settled by auto-resolution: ${f.settled}/${f.blocks} (${pct}%): ${Object.entries(f.byRule)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  );
  console.log(
    `settled blocks against the real resolution: agree ${f.agree}, agree apart from formatting ${f.reformatted}, disagree ${f.disagree} ` +
      `(and ${f.disagreeGenerated} in generated files), unchecked ${f.unchecked}`,
  );
  console.log(`  of the disagreements, the merge commit took one side as it was: ${f.disagreeTookSide}`);
  const folders = Object.entries(f.byFolder).sort((a, b) => b[1][0] + b[1][1] - a[1][0] - a[1][1]);
  if (folders.length) console.log(`  checked per folder (agree/disagree): ${folders.map(([k, [a, d]]) => `${k} ${a}/${d}`).join(", ")}`);
  const c = f.clean;
  if (c.hunks) {
    console.log(
      `baseline, git's clean hunks in the same source files: ${c.hunks}: agree ${c.agree}, apart from formatting ${c.reformatted}, ` +
        `disagree ${c.disagree}, unchecked ${c.unchecked}`,
    );
  }
  if (f.disagreements.length) console.log(`disagreements (first ${f.disagreements.length}):\n${f.disagreements.join("\n")}`);
}

export default async function conflictsBench(): Promise<void> {
  const timings = conflictTimings();
  console.log("2,000-line file, 100 conflict blocks (pure core only; git and the write path come on top):");
  for (const [k, v] of Object.entries(timings)) console.log(`  ${k.padEnd(36)} ${k.includes("ms") ? fmt(v) : v}`);
  const own = spawnSync("git", ["rev-parse", "--absolute-git-dir"], { encoding: "utf8" }).stdout.trim();
  if (own) print(await historyCorpus(own));
  const repos = process.env.BENCH_CONFLICT_REPOS?.split(",") ?? DEFAULT_MERGE_REPOS;
  for (const repo of repos) {
    if (!existsSync(repo)) {
      console.log(`\n(merges corpus: ${repo} is not here; fetch a repository with merge commits and name its git dir in BENCH_CONFLICT_REPOS)`);
      continue;
    }
    print(await mergesCorpus(repo));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await conflictsBench();
