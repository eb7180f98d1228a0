import { type MarkerRegion, type RenderOptions, parseMarkerRegions, renderBlocks } from "./markers.js";
import type { LineEnd, Lines, MergeResult } from "./three-way.js";

/**
 * Maps the blocks of a merge of the index stages onto the marker regions of the worktree file, whoever wrote it: the
 * daemon (diff3 style, one region per block) or git in any conflict style. git's "merge" style (the default) trims the
 * lines both sides share off a conflict, splits it where they share lines in the middle, and joins conflicts three
 * lines or fewer apart into one region; zdiff3 trims too. So a block's place in the worktree is the run of lines that
 * reads as the block's ours side when every region in it is replaced by its ours part, and as its theirs side with
 * theirs parts; where git joined blocks, the run holds the group, with the settled lines between them.
 */

export interface BlockLocation {
  /** Index into MergeResult.blocks. */
  block: number;
  /** 0-based, inclusive: the worktree lines that hold the block (the whole run when it shares it with its group). */
  start: number;
  end: number;
  /** The blocks that share this run, in order: just this one, unless git joined several into one region. */
  group: number[];
  /** How many marker regions the block spans (more than one where git split it). */
  regions: number;
  /** The region no longer reads as the block (edited by hand); start/end are that region's markers. */
  edited: boolean;
}

export interface WorktreeBlocks {
  /** In file order. */
  located: BlockLocation[];
  /** Blocks with no marker region left: resolved in the worktree. */
  resolved: number[];
  /** Marker regions that match no block (and could not be paired with one as edited). */
  unmatched: MarkerRegion[];
  /** 0-based marker lines of this size outside any complete region. */
  stray: number[];
}

const same = (a: readonly string[], ai: number, b: readonly string[], bi: number, n: number) => {
  for (let k = 0; k < n; k++) if (a[ai + k] !== b[bi + k]) return false;
  return true;
};

type Span = { start: number; end: number; lastRegion: number };

/**
 * If regions[r] begins a run that reads as O (ours) and T (theirs) in `lines`, that run: first the shared prefix git
 * moved out of the conflict (k lines, alike on both sides), then regions and shared lines until both are complete.
 * "short" when the run needs more lines than O and T have (it may hold the next block too), null on a mismatch.
 */
function matchSpan(
  lines: readonly string[],
  regions: readonly MarkerRegion[],
  r: number,
  O: readonly string[],
  T: readonly string[],
  B: readonly string[] | null,
  floor: number,
): Span | "short" | null {
  const first = regions[r];
  const len = (x: { from: number; to: number }) => x.to - x.from;
  if (first.base && (!B || len(first.base) !== B.length || !same(lines, first.base.from, B, 0, B.length))) return null;
  let short = false;
  for (let k = 0; ; k++) {
    if (k > 0 && (k > O.length || k > T.length || O[k - 1] !== T[k - 1] || first.start - k < floor)) break;
    if (k + len(first.ours) > O.length || k + len(first.theirs) > T.length) {
      short = true;
      break;
    }
    if (!same(lines, first.start - k, O, 0, k)) continue;
    if (!same(lines, first.ours.from, O, k, len(first.ours)) || !same(lines, first.theirs.from, T, k, len(first.theirs))) continue;
    let po = k + len(first.ours);
    let pt = k + len(first.theirs);
    let j = first.end + 1;
    let last = r;
    for (;;) {
      if (po === O.length && pt === T.length) return { start: first.start - k, end: j - 1, lastRegion: last };
      const next = regions[last + 1];
      if (next && next.start === j) {
        // Only git's "merge" style splits or joins blocks, and its regions have no base part.
        if (next.base) break;
        if (po + len(next.ours) > O.length || pt + len(next.theirs) > T.length) {
          short = true;
          break;
        }
        if (!same(lines, next.ours.from, O, po, len(next.ours)) || !same(lines, next.theirs.from, T, pt, len(next.theirs))) break;
        po += len(next.ours);
        pt += len(next.theirs);
        j = next.end + 1;
        last++;
      } else if (j < lines.length && (po === O.length || pt === T.length)) {
        short = true;
        break;
      } else if (j < lines.length && lines[j] === O[po] && lines[j] === T[pt]) {
        po++;
        pt++;
        j++;
      } else break;
    }
  }
  return short ? "short" : null;
}

/** The settled lines between block b and block b+1. */
function settledAfter(merge: MergeResult, b: number): readonly string[] {
  const at = merge.chunks.indexOf(merge.blocks[b]);
  const next = merge.chunks[at + 1];
  return next?.kind === "stable" ? next.lines : [];
}

/** The blocks from `b` on that regions[r] begins (one, or several git joined), and their run. */
function matchGroup(merge: MergeResult, lines: readonly string[], regions: readonly MarkerRegion[], r: number, b: number, floor: number) {
  const blocks = merge.blocks;
  const O = [...blocks[b].ours.lines];
  const T = [...blocks[b].theirs.lines];
  for (let last = b; ; ) {
    const span = matchSpan(lines, regions, r, O, T, last === b ? blocks[b].base.lines : null, floor);
    if (span !== "short") return span && { ...span, group: blocks.slice(b, last + 1).map((x) => x.index) };
    if (++last >= blocks.length) return null;
    const between = settledAfter(merge, last - 1);
    O.push(...between, ...blocks[last].ours.lines);
    T.push(...between, ...blocks[last].theirs.lines);
  }
}

/**
 * Where each block of `merge` is in the worktree `lines` (contents, no terminators) with markers of `markerSize`.
 * Regions are taken in order, each by the first later block that reads exactly as it does, so blocks skipped on the
 * way were resolved in the worktree. Two blocks that read the same are interchangeable here (same sides; in git's
 * "merge" style, which shows no base, they could differ in base only), so taking the first never skips a block that
 * is still there.
 */
export function locateBlocks(merge: MergeResult, lines: readonly string[], markerSize: number): WorktreeBlocks {
  const { regions, stray } = parseMarkerRegions(lines, markerSize);
  const blocks = merge.blocks;
  const located: BlockLocation[] = [];
  const unmatchedAt: number[] = [];
  let nextBlock = 0;
  let floor = 0;
  for (let r = 0; r < regions.length; ) {
    let pick: ReturnType<typeof matchGroup> = null;
    for (let b = nextBlock; b < blocks.length && !pick; b++) pick = matchGroup(merge, lines, regions, r, b, floor);
    if (!pick) {
      unmatchedAt.push(r);
      floor = regions[r].end + 1;
      r++;
      continue;
    }
    for (const block of pick.group) {
      located.push({ block, start: pick.start, end: pick.end, group: pick.group, regions: pick.lastRegion - r + 1, edited: false });
    }
    nextBlock = pick.group[pick.group.length - 1] + 1;
    floor = pick.end + 1;
    r = pick.lastRegion + 1;
  }
  pairEdited(located, unmatchedAt, regions, blocks.length);
  const taken = new Set(located.map((l) => l.block));
  const unmatched = unmatchedAt.filter((r) => r >= 0).map((r) => regions[r]);
  const resolved = blocks.map((b) => b.index).filter((i) => !taken.has(i));
  return { located, resolved, unmatched, stray };
}

/**
 * A region edited by hand matches no block; when it is the only such region between two located blocks and exactly one
 * block is missing there, it is that block's region (its markers are still in the file). Marks paired entries -1.
 */
function pairEdited(located: BlockLocation[], unmatchedAt: number[], regions: readonly MarkerRegion[], blockCount: number): void {
  if (!unmatchedAt.length) return;
  const sorted = [...located];
  const added: BlockLocation[] = [];
  for (let g = 0; g <= sorted.length; g++) {
    const lo = g === 0 ? -1 : sorted[g - 1].end;
    const hi = g === sorted.length ? Infinity : sorted[g].start;
    if (g > 0 && g < sorted.length && sorted[g - 1].start === sorted[g].start) continue; // one group's run
    const firstBlock = g === 0 ? 0 : sorted[g - 1].block + 1;
    const lastBlock = g === sorted.length ? blockCount - 1 : sorted[g].block - 1;
    const inGap = unmatchedAt.map((r, k) => ({ r, k })).filter(({ r }) => r >= 0 && regions[r].start > lo && regions[r].end < hi);
    if (inGap.length === 1 && lastBlock === firstBlock) {
      const { r, k } = inGap[0];
      added.push({ block: firstBlock, start: regions[r].start, end: regions[r].end, group: [firstBlock], regions: 1, edited: true });
      unmatchedAt[k] = -1;
    }
  }
  located.push(...added);
  located.sort((a, b) => a.start - b.start || a.block - b.block);
}

/**
 * The worktree with every located run (edited ones excepted) written as the daemon writes it: `opts.resolutions` in
 * place of their blocks, the other blocks as diff3 regions with `opts.markerSize`, one region per block. Lines outside
 * the runs (what the user already resolved) stay as they are. Applying a resolution this way also works inside a group
 * git joined into one region, and leaves no mix of git's and the daemon's marker sizes.
 */
export function rewriteRuns(merge: MergeResult, worktree: Lines, located: readonly BlockLocation[], opts: RenderOptions): { lines: string[]; eols: LineEnd[] } {
  const lines = [...worktree.lines];
  const eols = [...worktree.eols];
  const runs = located.filter((l, i) => !l.edited && (i === 0 || located[i - 1].start !== l.start));
  for (const run of [...runs].reverse()) {
    const out = renderBlocks(merge, run.group[0], run.group[run.group.length - 1], opts);
    lines.splice(run.start, run.end - run.start + 1, ...out.lines);
    eols.splice(run.start, run.end - run.start + 1, ...out.eols);
  }
  // A run that ended without a terminator and is no longer last gets one.
  for (let i = 0; i < eols.length - 1; i++) if (eols[i] === "") eols[i] = opts.eol;
  return { lines, eols };
}
