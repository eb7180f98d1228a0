import { isUtf8 } from "node:buffer";
import { LRUCache } from "lru-cache";
import { tagOf } from "../core/hash.js";
import { type AutoResolution, type AutoRule, autoResolve } from "../core/merge/auto-resolve.js";
import { renderSide } from "../core/merge/keep-table.js";
import { type BlockLocation, locateBlocks } from "../core/merge/locate.js";
import { type MarkerRegion, chooseMarkerSize, parseMarkerRegions, renderBlocks } from "../core/merge/markers.js";
import { type LineEnd, type Lines, type MergeResult, mergeLines } from "../core/merge/three-way.js";
import { BINARY_SNIFF_BYTES, type Eol, dominantEol, hasBom, renderLine, splitText } from "../core/text.js";
import type { MergeAttributes, UnmergedPath } from "./conflicts-stages.js";

/**
 * Pure: what a conflicted path is (a text conflict with blocks, or a whole-file one), the merge of its index stages,
 * where that merge's blocks are in the worktree file, the blocks as git_conflicts shows them, and the worktree with
 * some blocks replaced by their resolutions.
 */

/** How a path conflicts; everything but "text" is settled whole (git_conflict_resolve without block). */
export type ConflictKind =
  | "text"
  | "deleted_by_us"
  | "deleted_by_them"
  | "added_by_us"
  | "added_by_them"
  | "deleted_by_both"
  | "binary"
  | "submodule"
  | "symlink"
  | "merge_driver"
  | "filtered"
  | "too_large";

/** What a kind means, for the text of git_conflicts and of an operation's answer. */
export const KIND_TEXT: Record<ConflictKind, string> = {
  text: "text conflict",
  deleted_by_us: "deleted on our side, modified on theirs",
  deleted_by_them: "modified on our side, deleted on theirs",
  added_by_us: "added on our side only (a rename conflict)",
  added_by_them: "added on their side only (a rename conflict)",
  deleted_by_both: "deleted on both sides (a rename conflict)",
  binary: "binary file changed on both sides",
  submodule: "submodule moved on both sides",
  symlink: "symlink changed on both sides",
  merge_driver: "merged by a driver of .gitattributes (merge=...), not line by line",
  filtered: "a filtered file (filter= in .gitattributes, e.g. git-lfs): its worktree is not its blob",
  too_large: "over the file tools' size limit",
};

export interface StageTexts {
  base: Lines;
  ours: Lines;
  theirs: Lines;
}

const EMPTY: Lines = { lines: [], eols: [] };

/** The text of a blob, or null when it is binary or not UTF-8 (git_conflicts then offers whole-file choices only). */
export function blobText(bytes: Buffer): Lines | null {
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) !== -1) return null;
  const bom = hasBom(bytes);
  if (!isUtf8(bom ? bytes.subarray(3) : bytes)) return null;
  return splitText(bytes.toString("utf8", bom ? 3 : 0));
}

/** The kind of an unmerged path that its stages' modes and attributes decide alone, or null when its blobs decide. */
export function kindOfEntry(entry: UnmergedPath, attrs: MergeAttributes): ConflictKind | null {
  const { base, ours, theirs } = entry;
  if (!ours && !theirs) return "deleted_by_both";
  if (!ours) return base ? "deleted_by_us" : "added_by_them";
  if (!theirs) return base ? "deleted_by_them" : "added_by_us";
  const modes = [base?.mode, ours.mode, theirs.mode];
  if (modes.includes("160000")) return "submodule";
  if (modes.includes("120000")) return "symlink";
  if (attrs.merge) return attrs.merge === "binary" || attrs.merge === "unset" ? "binary" : "merge_driver";
  if (attrs.filter) return "filtered";
  return null;
}

/** The kind of an unmerged path, and its three texts when it is a text conflict. `blobs`: null for an unreadable blob. */
export function classify(entry: UnmergedPath, attrs: MergeAttributes, blobs: ReadonlyMap<string, Buffer | null>): { kind: ConflictKind; texts?: StageTexts } {
  const whole = kindOfEntry(entry, attrs);
  if (whole) return { kind: whole };
  const read = (oid: string | undefined) => (oid === undefined ? EMPTY : blobs.get(oid));
  const raw = [read(entry.base?.oid), read(entry.ours!.oid), read(entry.theirs!.oid)];
  if (raw.some((b) => b === null || b === undefined)) return { kind: "too_large" };
  const texts = raw.map((b) => (b === EMPTY ? EMPTY : blobText(b as Buffer)));
  if (texts.some((t) => t === null)) return { kind: "binary" };
  return { kind: "text", texts: { base: texts[0]!, ours: texts[1]!, theirs: texts[2]! } };
}

/** The merge of a path's stages, with what is derived from it alone; the same blobs always give the same merge. */
export interface StageMerge {
  texts: StageTexts;
  merge: MergeResult;
  /** The marker size the daemon writes this file's markers with (longer than any marker-like run in the stages). */
  markerSize: number;
  /** The line ending the stages mostly have. */
  stageEol: Eol;
  autos: (AutoResolution | null | undefined)[];
}

/** Merges kept per repository: an index holds few conflicted files, and a re-listing must not merge again. */
const MERGE_CACHE_ENTRIES = 64;

const cacheKey = (entry: UnmergedPath, gitMarkerSize: number) => `${entry.base?.oid ?? ""}:${entry.ours?.oid}:${entry.theirs?.oid}:${gitMarkerSize}`;

/** The merges of stages a repository had, by their blob ids (content addresses, so no entry is ever stale). */
export class StageMerges {
  private readonly cache = new LRUCache<string, StageMerge>({ max: MERGE_CACHE_ENTRIES });

  /** The merge of these stages if they were merged before: then their blobs need not be read again. */
  cached(entry: UnmergedPath, gitMarkerSize: number): StageMerge | null {
    return this.cache.get(cacheKey(entry, gitMarkerSize)) ?? null;
  }

  /** The merge of these stages, merged once. */
  merge(entry: UnmergedPath, texts: StageTexts, gitMarkerSize: number): StageMerge {
    const known = this.cached(entry, gitMarkerSize);
    if (known) return known;
    const sm = stageMerge(texts, gitMarkerSize);
    this.cache.set(cacheKey(entry, gitMarkerSize), sm);
    return sm;
  }
}

/** The merge of three stage texts, with what is derived from it alone. */
export function stageMerge(texts: StageTexts, gitMarkerSize: number): StageMerge {
  const merge = mergeLines(texts.base, texts.ours, texts.theirs);
  return {
    texts,
    merge,
    markerSize: chooseMarkerSize([texts.base.lines, texts.ours.lines, texts.theirs.lines], gitMarkerSize),
    stageEol: dominantEol([...texts.ours.eols, ...texts.theirs.eols]),
    autos: new Array(merge.blocks.length),
  };
}

export function autoOf(sm: StageMerge, block: number): AutoResolution | null {
  let a = sm.autos[block];
  if (a === undefined) a = sm.autos[block] = autoResolve(sm.merge.blocks[block]);
  return a;
}

/** Which resolutions auto-resolution may apply: "all" (SPEC 9's four rules), "safe" (no word merge), "off". */
export type AutoMode = "all" | "safe" | "off";

/** The param `auto_resolve` of the operations, as a mode. */
export function autoModeOf(param: boolean | "safe" | undefined): AutoMode {
  return param === false ? "off" : param === "safe" ? "safe" : "all";
}

export function allowedBy(mode: AutoMode, rule: AutoRule): boolean {
  return mode === "all" || (mode === "safe" && rule !== "words");
}

/** Where the merge's blocks are in the worktree, and what is left of them. */
export interface Located {
  /** In file order. */
  located: BlockLocation[];
  /** Runs (by their first line) found with git's marker size where the daemon's differs: git wrote them, the daemon did not. */
  foreign: Set<number>;
  /** Blocks no marker region holds any more (resolved in the worktree). */
  resolved: number[];
  unmatched: MarkerRegion[];
  stray: number[];
  /** The labels of the first marker region (git's "HEAD", "topic", ...), to write new regions like it. */
  labels: { ours: string; base: string | null; theirs: string } | null;
}

/**
 * Finds the blocks with the daemon's marker size, then those still missing with git's, where it differs (the file has
 * git's markers until the daemon rewrites it). At git's size the content's own marker-like lines can form regions, so
 * there only regions that read as a block count, and only where no daemon region is.
 */
export function locate(sm: StageMerge, worktree: readonly string[], gitMarkerSize: number): Located {
  const own = locateBlocks(sm.merge, worktree, sm.markerSize);
  const first = parseMarkerRegions(worktree, sm.markerSize).regions[0];
  const loc: Located = {
    located: own.located,
    foreign: new Set(),
    resolved: own.resolved,
    unmatched: own.unmatched,
    stray: own.stray,
    labels: first?.labels ?? null,
  };
  if (sm.markerSize === gitMarkerSize) return loc;
  const found = new Set(own.located.map((l) => l.block));
  const overlaps = (l: BlockLocation) => own.located.some((o) => l.start <= o.end && o.start <= l.end);
  const git = locateBlocks(sm.merge, worktree, gitMarkerSize).located.filter((l) => !found.has(l.block) && !l.edited && !overlaps(l));
  if (!git.length) return loc;
  for (const l of git) loc.foreign.add(l.start);
  loc.located = [...own.located, ...git].sort((a, b) => a.start - b.start || a.block - b.block);
  const now = new Set(loc.located.map((l) => l.block));
  loc.resolved = sm.merge.blocks.map((b) => b.index).filter((i) => !now.has(i));
  loc.labels ??= parseMarkerRegions(worktree, gitMarkerSize).regions.find((r) => r.start === git[0].start)?.labels ?? null;
  return loc;
}

/** The first marker line (0-based) still in the worktree, or null: what git_conflict_finalize refuses on. */
export function firstMarkerLeft(sm: StageMerge, worktree: readonly string[], gitMarkerSize: number): number | null {
  const own = parseMarkerRegions(worktree, sm.markerSize);
  const at = [...own.regions.map((r) => r.start), ...own.stray];
  // At git's smaller size the content itself has marker-like lines: only regions that read as a block count (a region
  // "edited by hand" there may be the content's own lines).
  if (gitMarkerSize < sm.markerSize)
    at.push(
      ...locateBlocks(sm.merge, worktree, gitMarkerSize)
        .located.filter((l) => !l.edited)
        .map((l) => l.start),
    );
  return at.length ? Math.min(...at) : null;
}

/** An automatic resolution as an answer shows it: its rule and its lines, numbered within the block. */
export interface AutoView {
  rule: AutoRule;
  taken?: "ours" | "theirs";
  lines: string[];
}

/** One block as git_conflicts lists it. */
export interface BlockView {
  block: number;
  /** The marker region in the worktree, 1-based, inclusive. */
  lines: [number, number];
  ours: string[];
  base: string[];
  theirs: string[];
  auto: AutoView | null;
  /** Its region was edited by hand: resolving it replaces the whole region, edits included. */
  edited?: true;
  /** Other blocks git wrote into the same marker region (its "merge" style joins blocks three lines or fewer apart). */
  shares_region_with?: number[];
}

export function autoView(a: AutoResolution | null): AutoView | null {
  return a ? { rule: a.rule, ...(a.taken ? { taken: a.taken } : {}), lines: renderSide(a) } : null;
}

/** The blocks left in the worktree, numbered 1..k in file order. */
export function blockViews(sm: StageMerge, loc: Located): BlockView[] {
  const numberOf = new Map(loc.located.map((l, i) => [l.block, i + 1]));
  return loc.located.map((l, i) => {
    const b = sm.merge.blocks[l.block];
    const view: BlockView = {
      block: i + 1,
      lines: [l.start + 1, l.end + 1],
      ours: renderSide(b.ours),
      base: renderSide(b.base),
      theirs: renderSide(b.theirs),
      auto: autoView(autoOf(sm, l.block)),
    };
    if (l.edited) view.edited = true;
    const others = l.group
      .filter((g) => g !== l.block)
      .map((g) => numberOf.get(g))
      .filter((n): n is number => n !== undefined);
    if (others.length) view.shares_region_with = others;
    return view;
  });
}

export interface RewriteOptions {
  labels: { ours: string; base: string; theirs: string };
  eol: Eol;
  lineEols: "keep" | "file";
}

/** "file" when the worktree's line endings are not the stages' (core.autocrlf, `eol` attributes): new lines take the worktree's. */
export function lineEolsFor(sm: StageMerge, worktreeEols: readonly string[]): "keep" | "file" {
  return dominantEol(worktreeEols) !== sm.stageEol ? "file" : "keep";
}

/** Where a resolved block landed in the rewritten worktree: 0-based, [start, end). */
export interface Landed {
  block: number;
  start: number;
  end: number;
}

/**
 * The worktree with `resolutions` (by block index) in place of their blocks. Each marker run that holds a resolved block
 * is rewritten as the daemon writes it (the run's other blocks as diff3 regions with the daemon's marker size); when the
 * file's markers are not of that size, every run is, so the file never mixes two sizes. An edited region with a
 * resolution is replaced whole; other edited regions stay as they are.
 */
export function rewriteWorktree(
  sm: StageMerge,
  worktree: Lines,
  loc: Located,
  resolutions: ReadonlyMap<number, Lines>,
  opts: RewriteOptions,
): { lines: string[]; eols: LineEnd[]; landed: Landed[]; rewritten: Rewritten[] } {
  const runs: BlockLocation[][] = [];
  for (const l of loc.located) {
    const last = runs[runs.length - 1];
    if (last && last[0].start === l.start) last.push(l);
    else runs.push([l]);
  }
  // git's runs are rewritten with the daemon's size whenever a file is: it never mixes two sizes for long.
  const allRuns = loc.foreign.size > 0;
  const render = { markerSize: sm.markerSize, labels: opts.labels, eol: opts.eol, lineEols: opts.lineEols };
  const pieces: { start: number; end: number; lines: string[]; eols: LineEnd[]; landed: Landed[] }[] = [];
  for (const run of runs) {
    const { start, end } = run[0];
    const touched = run.some((l) => resolutions.has(l.block));
    if (run[0].edited) {
      const r = resolutions.get(run[0].block);
      if (r) pieces.push({ start, end, ...withEols(r, opts), landed: [{ block: run[0].block, start: 0, end: r.lines.length }] });
      continue;
    }
    if (!touched && !allRuns) continue;
    pieces.push({
      start,
      end,
      ...renderRun(
        sm.merge,
        run.map((l) => l.block),
        resolutions,
        render,
      ),
    });
  }
  const lines = [...worktree.lines];
  const eols = [...worktree.eols];
  for (const p of [...pieces].reverse()) {
    lines.splice(p.start, p.end - p.start + 1, ...p.lines);
    eols.splice(p.start, p.end - p.start + 1, ...p.eols);
  }
  // A run that ended without a terminator and is no longer last gets one.
  for (let i = 0; i < eols.length - 1; i++) if (eols[i] === "") eols[i] = opts.eol;
  const landed: Landed[] = [];
  const rewritten: Rewritten[] = [];
  let shift = 0;
  for (const p of pieces) {
    for (const l of p.landed) landed.push({ block: l.block, start: p.start + shift + l.start, end: p.start + shift + l.end });
    rewritten.push({ start: p.start, end: p.end, newStart: p.start + shift, newEnd: p.start + shift + p.lines.length });
    shift += p.lines.length - (p.end - p.start + 1);
  }
  return { lines, eols, landed, rewritten };
}

/** A marker run rewritten: its old lines [start, end] and its new ones [newStart, newEnd), 0-based. */
export interface Rewritten {
  start: number;
  end: number;
  newStart: number;
  newEnd: number;
}

function withEols(r: Lines, opts: RewriteOptions): { lines: string[]; eols: LineEnd[] } {
  return { lines: [...r.lines], eols: r.eols.map((e) => (opts.lineEols === "file" && e !== "" ? opts.eol : e)) };
}

/** One run's blocks and the settled lines between them, block by block, noting where each resolution lands. */
function renderRun(merge: MergeResult, blocks: number[], resolutions: ReadonlyMap<number, Lines>, render: Parameters<typeof renderBlocks>[3]) {
  const byIndex: (Lines | undefined)[] = [];
  for (const [b, r] of resolutions) byIndex[b] = r;
  const lines: string[] = [];
  const eols: LineEnd[] = [];
  const landed: Landed[] = [];
  const push = (part: { lines: readonly string[]; eols: readonly LineEnd[] }) => {
    if (eols.length && eols[eols.length - 1] === "" && part.lines.length) eols[eols.length - 1] = render.eol;
    lines.push(...part.lines);
    eols.push(...part.eols.map((e) => (render.lineEols === "file" && e !== "" ? render.eol : e)));
  };
  blocks.forEach((b, k) => {
    const at = lines.length;
    push(renderBlocks(merge, b, b, { ...render, resolutions: byIndex }));
    if (byIndex[b]) landed.push({ block: b, start: at, end: lines.length });
    if (k < blocks.length - 1) {
      const next = merge.chunks[merge.chunks.indexOf(merge.blocks[b]) + 1];
      if (next?.kind === "stable") push(next);
    }
  });
  return { lines, eols, landed };
}

/**
 * The whole file from its stages, as the daemon writes it: `resolutions` in place of their blocks, the other blocks as
 * diff3 regions with the daemon's marker size. For a file git has just written and nobody has edited, whose markers are
 * ambiguous (its content has marker-like lines of git's size): the same merge, written unambiguously.
 */
export function renderWhole(
  sm: StageMerge,
  resolutions: ReadonlyMap<number, Lines>,
  opts: RewriteOptions,
): { lines: string[]; eols: LineEnd[]; landed: Landed[] } {
  const { merge } = sm;
  const render = { markerSize: sm.markerSize, labels: opts.labels, eol: opts.eol, lineEols: opts.lineEols };
  if (!merge.blocks.length) return { ...renderBlocksOf(merge, render), landed: [] };
  const lead = merge.chunks[0].kind === "stable" ? merge.chunks[0] : null;
  const tail = merge.chunks[merge.chunks.length - 1];
  const body = renderRun(
    merge,
    merge.blocks.map((b) => b.index),
    resolutions,
    render,
  );
  const lines = [...(lead?.lines ?? [])];
  const eols: LineEnd[] = (lead?.eols ?? []).map((e) => (opts.lineEols === "file" && e !== "" ? opts.eol : e));
  const shift = lines.length;
  lines.push(...body.lines);
  eols.push(...body.eols);
  if (tail.kind === "stable" && merge.chunks.length > 1) {
    lines.push(...tail.lines);
    eols.push(...tail.eols.map((e) => (opts.lineEols === "file" && e !== "" ? opts.eol : e)));
  }
  for (let i = 0; i < eols.length - 1; i++) if (eols[i] === "") eols[i] = opts.eol;
  return { lines, eols, landed: body.landed.map((l) => ({ block: l.block, start: l.start + shift, end: l.end + shift })) };
}

function renderBlocksOf(merge: MergeResult, render: Parameters<typeof renderBlocks>[3]): { lines: string[]; eols: LineEnd[] } {
  const lines = merge.chunks.flatMap((c) => (c.kind === "stable" ? c.lines : []));
  const eols = merge.chunks.flatMap((c) => (c.kind === "stable" ? c.eols : [])).map((e) => (render.lineEols === "file" && e !== "" ? render.eol : e));
  return { lines, eols };
}

/** Lines of a rewritten worktree as an answer shows them: `N|TAG content` with worktree line numbers. */
export function renderLanded(lines: readonly string[], from: number, to: number): string[] {
  const out: string[] = [];
  for (let i = from; i < to; i++) out.push(renderLine(i + 1, tagOf(lines[i]), lines[i]));
  return out;
}
