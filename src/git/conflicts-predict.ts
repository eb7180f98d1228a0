import type { AutoRule } from "../core/merge/auto-resolve.js";
import { renderMerged } from "../core/merge/markers.js";
import type { Lines } from "../core/merge/three-way.js";
import { serialize } from "../core/text.js";
import { type AutoMode, type ConflictKind, allowedBy, autoOf, classify } from "./conflicts-model.js";
import { autoLabel } from "./conflicts-read.js";
import { type UnmergedPath, mergeAttributes, readBlobs } from "./conflicts-stages.js";
import { type MergePrediction, PREVIEW_IDENTITY, type ReplayStep, predictMerge, replayCommits } from "./predict.js";
import type { RepoCtx } from "./repo.js";
import { git } from "./run.js";
import { withTempIndex } from "./temp-index.js";

/**
 * What auto-resolution would settle, for previews (SPEC 9): the merge is computed by `git merge-tree --write-tree`, which
 * touches no ref, index or file, and its conflicted files' stages are merged and resolved as the real run would.
 * Only unreferenced objects are written (merge-tree's trees, a rebase's throwaway commits and resolved blobs).
 */

export interface PredictedBlock {
  block: number;
  /** The rule that would settle it, or null: left for a person. */
  rule: AutoRule | null;
}

export interface PredictedFile {
  path: string;
  kind: ConflictKind;
  blocks: PredictedBlock[];
}

export interface AutoPrediction {
  mode: AutoMode;
  files: PredictedFile[];
  settled: number;
  /** Blocks left for a person; a whole-file conflict counts as one. */
  left: number;
  /** Blocks settled by word merges: with any, the operation stops before its next step for the caller to read them. */
  words: number;
  /** Nothing would be left and no word merge made: the operation would complete as a clean one does. */
  completes: boolean;
}

/** The prediction for these conflicted paths, and each fully settled text file's merged bytes (mode and content). */
export async function predictAuto(ctx: RepoCtx, entries: UnmergedPath[], mode: AutoMode) {
  const attrs = await mergeAttributes(
    ctx,
    entries.map((e) => e.path),
  );
  const blobs = await readBlobs(
    ctx,
    entries.flatMap((e) => [e.base?.oid, e.ours?.oid, e.theirs?.oid]).filter((o): o is string => !!o),
    ctx.repo.maxFileBytes,
  );
  const prediction: AutoPrediction = { mode, files: [], settled: 0, left: 0, words: 0, completes: true };
  const resolved = new Map<string, { mode: string; text: string }>();
  for (const e of entries) {
    const a = attrs.get(e.path)!;
    const c = classify(e, a, blobs);
    if (c.kind !== "text") {
      prediction.files.push({ path: e.path, kind: c.kind, blocks: [] });
      prediction.left++;
      prediction.completes = false;
      continue;
    }
    const sm = ctx.repo.merges.merge(e, c.texts!, a.markerSize);
    const resolutions: (Lines | null)[] = [];
    const blocks = sm.merge.blocks.map((b, i): PredictedBlock => {
      const auto = autoOf(sm, b.index);
      const ok = !!auto && mode !== "off" && allowedBy(mode, auto.rule);
      resolutions[i] = ok ? auto : null;
      return { block: i + 1, rule: ok ? auto!.rule : null };
    });
    // git conflicted where this merge has no block (another diff would): its markers match nothing, a person looks.
    const left = blocks.length ? blocks.filter((b) => !b.rule).length : 1;
    prediction.settled += blocks.length - (blocks.length ? left : 0);
    prediction.left += left;
    prediction.words += blocks.filter((b) => b.rule === "words").length;
    if (left || prediction.words) prediction.completes = false;
    if (!left) {
      const out = renderMerged(sm.merge, {
        markerSize: sm.markerSize,
        labels: { ours: "ours", base: "base", theirs: "theirs" },
        eol: sm.stageEol,
        resolutions,
      });
      resolved.set(e.path, {
        mode: e.ours!.mode === e.base?.mode ? e.theirs!.mode : e.ours!.mode,
        text: serialize({ bom: false, lines: out.lines, eols: out.eols }).toString("utf8"),
      });
    }
    prediction.files.push({ path: e.path, kind: c.kind, blocks });
  }
  return { prediction, resolved };
}

/** The text a preview shows for a prediction; `completes`: what the operation would then do. */
export function predictionText(p: AutoPrediction, completes: string, stops = "it would stop there for you"): string {
  if (!p.files.length) return "";
  if (p.mode === "off") return `auto_resolve is false: no block would be touched; ${stops}`;
  const settled = p.files.flatMap((f) => f.blocks.filter((b) => b.rule).map((b) => `${f.path} block ${b.block} (${autoLabel(b.rule!, true)})`));
  const left = p.files.flatMap((f) => {
    if (f.kind !== "text") return [`${f.path} (${f.kind.replaceAll("_", " ")}: whole file)`];
    if (!f.blocks.length) return [`${f.path} (git's markers match no block here: look at it)`];
    return f.blocks.filter((b) => !b.rule).map((b) => `${f.path} block ${b.block}`);
  });
  const lines = [
    `auto-resolution${p.mode === "safe" ? " (safe: no word merges)" : ""} would settle ${p.settled} of ${p.settled + p.left} block${p.settled + p.left === 1 ? "" : "s"}${settled.length ? `: ${settled.join(", ")}` : ""}`,
  ];
  if (left.length) lines.push(`left for you: ${left.join(", ")}${stops ? `; ${stops}` : ""}`);
  else if (p.words)
    lines.push(
      `${p.words} of them by word merge${p.words === 1 ? "" : "s"}: it would stop before going on, for you to read ${p.words === 1 ? "it" : "them"}; git_conflict_finalize then goes on`,
    );
  else if (completes) lines.push(completes);
  return lines.join("\n");
}

/** `tree` with each resolved file in place of its markers: the tree a fully auto-resolved step leaves. */
async function resolvedTree(ctx: RepoCtx, tree: string, resolved: Map<string, { mode: string; text: string }>): Promise<string> {
  if (!resolved.size) return tree;
  return withTempIndex(ctx, { tree }, async (onTree) => {
    const info: string[] = [];
    for (const [p, f] of resolved) {
      const oid = (await git(ctx, ["hash-object", "-w", "--stdin"], { input: f.text })).stdout.trim();
      info.push(`${f.mode} ${oid}\t${p}\0`);
    }
    await git(onTree, ["update-index", "-z", "--index-info"], { input: info.join("") });
    return (await git(onTree, ["write-tree"])).stdout.trim();
  });
}

/** What auto-resolution would settle of a predicted merge's conflicts, or null when it has none. */
export async function predictMergeAuto(ctx: RepoCtx, merged: MergePrediction | null, mode: AutoMode): Promise<AutoPrediction | null> {
  return merged?.entries.length ? (await predictAuto(ctx, merged.entries, mode)).prediction : null;
}

/**
 * A stash apply is a merge of the stash into the index, with the stash's parent as base. merge-tree (git 2.39) takes no
 * base, so the index becomes a throwaway commit on that parent: their merge base is then exactly it.
 */
export async function predictStashAuto(ctx: RepoCtx, stash: string, mode: AutoMode): Promise<AutoPrediction | null> {
  const indexTree = await withTempIndex(ctx, "copy", async (onCopy) => (await git(onCopy, ["write-tree"])).stdout.trim());
  const parent = (await git(ctx, ["rev-parse", `${stash}^1`])).stdout.trim();
  const ours = (await git(ctx, ["commit-tree", indexTree, "-p", parent, "-m", "tool-layer stash preview"], { env: PREVIEW_IDENTITY })).stdout.trim();
  return predictMergeAuto(ctx, await predictMerge(ctx, ours, stash), mode);
}

export interface AutoReplayStep extends ReplayStep {
  auto?: AutoPrediction;
  /** The rebase would stop at this commit for a person. */
  stops?: boolean;
}

/**
 * simulateRebase (predict.ts) with auto-resolution: each conflicting step is settled as the real rebase would settle it,
 * and the next step replays onto the settled tree. After the first step that would stop, the rest is predicted from
 * merge-tree's tree (with markers), as the person's resolution is not known.
 */
export function predictReplay(ctx: RepoCtx, onto: string, head: string, mode: AutoMode): Promise<AutoReplayStep[]> {
  let stopped = false;
  return replayCommits(ctx, onto, head, async (ours, c) => {
    const { tree, entries, conflicts } = await predictMerge(ctx, ours, c.sha);
    const step: AutoReplayStep = { ...c, conflicts, simulated: true };
    if (!entries.length) return { step, tree };
    const { prediction, resolved } = await predictAuto(ctx, entries, mode);
    step.auto = prediction;
    // A stop to read word merges has a known resolution: the steps after it are predicted on the settled tree.
    if (!stopped && !prediction.left) {
      if (prediction.words) step.stops = true;
      return { step, tree: await resolvedTree(ctx, tree, resolved) };
    }
    if (!stopped) step.stops = stopped = true;
    return { step, tree };
  });
}

/** Per replayed commit that conflicts: whether auto-resolution settles it or the rebase would stop there. */
export function replayText(steps: readonly ReplayStep[]): string {
  const lines: string[] = [];
  for (const s of steps as AutoReplayStep[]) {
    if (!s.auto) continue;
    const what = `${s.short} ${s.subject}`;
    const blocks = s.auto.settled + s.auto.left;
    if (s.auto.completes) lines.push(`  ${what}: auto-resolution would settle all ${blocks} block${blocks === 1 ? "" : "s"} and go on`);
    else if (s.stops && !s.auto.left)
      lines.push(
        `  ${what}: auto-resolution would settle all ${blocks} block${blocks === 1 ? "" : "s"}, ${s.auto.words} by word merge${s.auto.words === 1 ? "" : "s"}: the rebase would STOP here for you to read them (git_conflict_finalize goes on)`,
      );
    else if (s.stops)
      lines.push(
        `  ${what}: the rebase would STOP here for you\n${predictionText(s.auto, "", "")
          .split("\n")
          .map((l) => `    ${l}`)
          .join("\n")}`,
      );
    else lines.push(`  ${what}: conflicts (after the stop above; predicted on the unresolved tree)`);
  }
  return lines.length ? `auto-resolution${(steps as AutoReplayStep[]).find((s) => s.auto)?.auto?.mode === "safe" ? " (safe)" : ""}:\n${lines.join("\n")}` : "";
}
