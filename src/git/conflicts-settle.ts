import type { AutoRule } from "../core/merge/auto-resolve.js";
import { ToolError } from "../errors.js";
import type { Lines } from "../core/merge/three-way.js";
import { type TextDoc, dominantEol, serialize } from "../core/text.js";
import {
  type AutoMode,
  type RewriteOptions,
  type StageMerge,
  allowedBy,
  autoOf,
  lineEolsFor,
  locate,
  renderLanded,
  renderWhole,
  rewriteWorktree,
} from "./conflicts-model.js";
import { type FileState, type FileView, fileView, isSettled, readConflicts } from "./conflicts-read.js";
import type { Located } from "./conflicts-model.js";
import { addPaths } from "./stage.js";
import type { GitStep } from "./step.js";

/**
 * Auto-resolution after an operation stopped on conflicts (SPEC 9): every block the mode allows is settled in the
 * worktree through the one versioned write, and a file with nothing left is staged. Runs inside the operation's
 * worktree step, which holds the whole worktree.
 */

/** A block auto-resolution settled, as the operation's answer lists it. */
export interface SettledBlock {
  path: string;
  rule: AutoRule;
  /** For one-sided and whitespace rules: the side whose change was kept. */
  taken?: "ours" | "theirs";
  /** Where its lines are now in the worktree, 1-based, inclusive; null when the resolution has no lines. */
  lines: [number, number] | null;
  /** For an empty resolution: the worktree line it follows (0 for the top). */
  after?: number;
  /** Its lines as they are now in the worktree, `N|TAG content`. */
  result: string[];
  /** The commit being replayed when it was settled (rebase, cherry-pick, revert). */
  commit?: string;
}

export interface SettleReport {
  settled: SettledBlock[];
  /** Conflicted files still needing a person, after auto-resolution, as git_conflicts lists them. */
  left: FileView[];
  /** Files auto-resolution staged (nothing was left in them). */
  staged: string[];
  /**
   * Files it settled whole with a word merge among their blocks: not staged, and the operation does not go on by itself
   * (a word merge is right most of the time, not always): the caller reads them, then git_conflict_finalize stages them.
   */
  review: string[];
}

/** Labels for regions the daemon writes: git's, read off the file's own markers, else these. */
export function rewriteOptions(sm: StageMerge, loc: Located, doc: Pick<TextDoc, "eols">, fallback: { ours: string; theirs: string }): RewriteOptions {
  const labels = loc.labels
    ? { ours: loc.labels.ours, base: loc.labels.base ?? "base", theirs: loc.labels.theirs }
    : { ours: fallback.ours, base: "base", theirs: fallback.theirs };
  return { labels, eol: dominantEol(doc.eols), lineEols: lineEolsFor(sm, doc.eols) };
}

/** The context the worktree step's writes go through: it holds the worktree, so a file's own lock would wait for it. */
export function holdingTree<C extends GitStep>(ctx: C): C {
  return { ...ctx, lockFile: (_real, work) => work() };
}

/** Settles what `mode` allows in every conflicted file, stages the files left with nothing, and says what is left. */
export async function settleConflicts(ctx: GitStep, mode: AutoMode, fallbackLabels: { ours: string; theirs: string }, commit?: string): Promise<SettleReport> {
  const report: SettleReport = { settled: [], left: [], staged: [], review: [] };
  const states = await readConflicts(ctx);
  const inner = holdingTree(ctx);
  let wrote = false;
  for (const s of states) {
    if (mode !== "off" && s.kind === "text" && s.sm && s.loc && s.file && s.target) {
      const ambiguous = s.sm.markerSize !== s.attrs.markerSize && s.sm.merge.blocks.length > 0;
      const picks = pick(s, mode, ambiguous);
      if (picks.size || ambiguous) {
        const { sm } = s;
        let landed: { block: number; start: number; end: number }[] = [];
        let newLines: string[] = [];
        const written = await ctx.files
          .write(inner, {
            target: s.target,
            expected: s.file.hash,
            produce: (current) => {
              // The same bytes as read above (the step holds the worktree); located again on them all the same.
              const doc = current!.doc;
              const loc = locate(sm, doc.lines, s.attrs.markerSize);
              const opts = rewriteOptions(sm, loc, doc, fallbackLabels);
              // git's markers are ambiguous where the content has marker-like lines: write the whole merge anew (git has
              // just written this file from these stages, and the step holds the worktree, so nobody edited it).
              const out = ambiguous ? renderWhole(sm, picks, opts) : rewriteWorktree(sm, doc, loc, picks, opts);
              landed = out.landed;
              newLines = out.lines;
              return { bytes: serialize({ bom: doc.bom, lines: out.lines, eols: out.eols }) };
            },
          })
          .catch((e: unknown) => {
            // Written anew as it already was: nothing to settle here.
            if (e instanceof ToolError && e.code === "NO_CHANGE") return null;
            throw e;
          });
        if (!written) continue;
        wrote = true;
        for (const l of landed) {
          const a = autoOf(sm, l.block)!;
          report.settled.push({
            path: s.path,
            rule: a.rule,
            ...(a.taken ? { taken: a.taken } : {}),
            lines: l.end > l.start ? [l.start + 1, l.end] : null,
            ...(l.end > l.start ? {} : { after: l.start }),
            result: renderLanded(newLines, l.start, l.end),
            ...(commit ? { commit } : {}),
          });
        }
      }
    }
  }
  // Read again: what the writes left, numbered as git_conflicts will number it for the new hashes. Right after git
  // stopped, a text file with no marker left is one auto-resolution finished.
  const after = wrote ? await readConflicts(ctx) : states;
  const worded = new Set(report.settled.filter((b) => b.rule === "words").map((b) => b.path));
  for (const s of after) {
    const v = fileView(s);
    if (mode === "off" || !isSettled(v)) report.left.push(v);
    else if (worded.has(s.path)) report.review.push(s.path);
    else report.staged.push(s.path);
  }
  await addPaths(ctx, report.staged);
  return report;
}

/**
 * The blocks `mode` lets auto-resolution settle, with their resolutions: every block of the merge when git's markers are
 * ambiguous (`whole`: the file is written anew), else those located in the worktree (edited regions are the user's).
 */
function pick(s: FileState, mode: AutoMode, whole: boolean): Map<number, Lines> {
  const blocks = whole ? s.sm!.merge.blocks.map((b) => b.index) : s.loc!.located.filter((l) => !l.edited).map((l) => l.block);
  const picks = new Map<number, Lines>();
  for (const b of blocks) {
    const a = autoOf(s.sm!, b);
    if (a && allowedBy(mode, a.rule)) picks.set(b, a);
  }
  return picks;
}
