import { splitText } from "../text.js";
import { Interner } from "./sequence-diff.js";
import { type ConflictBlock, type LineEnd, type Lines, type MergeHunk, mergeSequences, walkMerge } from "./three-way.js";

/**
 * Auto-resolution of one conflict block (SPEC 9), in this order: both sides made the same change; only one side
 * changed it; the sides' changes touch different words (a three-way merge of the block's words, JetBrains'
 * MergeResolveUtil "resolve simple conflicts"); one side changed only whitespace inside or at the end of a line, never
 * indentation, which means something in Python, YAML and Makefiles.
 */

export type AutoRule = "identical" | "one-sided" | "words" | "whitespace";

/** How a report names each rule: "block 2: resolved (identical changes)". */
export const AUTO_RULE_TEXT: Record<AutoRule, string> = {
  identical: "identical changes",
  "one-sided": "only one side changed",
  words: "changes to different words",
  whitespace: "one side changed only whitespace",
};

export interface AutoResolution extends Lines {
  lines: string[];
  eols: LineEnd[];
  rule: AutoRule;
  /** For "one-sided" and "whitespace": the side whose change was taken. */
  taken?: "ours" | "theirs";
}

/**
 * A block's word merge is skipped past this many tokens per side (about 10,000 lines of code): the diff is then slower
 * than a model reading the block, and so large a block is rarely a simple one.
 */
export const MAX_WORD_MERGE_TOKENS = 100_000;

/** Words (letters, digits, `_`), runs of spaces and tabs, line ends, and every other character alone. */
const TOKEN = /[\p{L}\p{N}_]+|[^\S\r\n]+|\r\n|\n|./gsu;
const WS = /^[^\S\r\n]+$/u;
const isNewline = (t: string) => t === "\n" || t === "\r\n";

function tokenize(side: Lines): string[] {
  const out: string[] = [];
  for (let i = 0; i < side.lines.length; i++) {
    for (const m of side.lines[i].matchAll(TOKEN)) out.push(m[0]);
    if (side.eols[i]) out.push(side.eols[i]);
  }
  return out;
}

function sameLines(a: Lines, b: Lines): boolean {
  if (a.lines.length !== b.lines.length) return false;
  for (let i = 0; i < a.lines.length; i++) if (a.lines[i] !== b.lines[i] || a.eols[i] !== b.eols[i]) return false;
  return true;
}

const copy = (side: Lines) => ({ lines: [...side.lines], eols: [...side.eols] });

/** The tokens that are not spaces or tabs, with line ends as one kind (a CRLF/LF change is a change at a line's end). */
function significant(tokens: readonly string[], from: number, to: number): string[] {
  const out: string[] = [];
  for (let i = from; i < to; i++) {
    const t = tokens[i];
    if (!WS.test(t)) out.push(isNewline(t) ? "\n" : t);
  }
  return out;
}

/** Whether tokens[from,to) has a run of spaces or tabs that starts a line: indentation. */
function touchesIndent(tokens: readonly string[], from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (WS.test(tokens[i]) && (i === 0 || isNewline(tokens[i - 1]))) return true;
  return false;
}

/** Whether a side's part of a hunk only changed whitespace inside or at the end of lines. */
function whitespaceOnly(base: readonly string[], b0: number, b1: number, side: readonly string[], s0: number, s1: number): boolean {
  if (touchesIndent(base, b0, b1) || touchesIndent(side, s0, s1)) return false;
  const x = significant(base, b0, b1);
  const y = significant(side, s0, s1);
  return x.length === y.length && x.every((t, i) => t === y[i]);
}

/** The three-way merge of the block's tokens; null when two changes overlap or touch and neither is whitespace-only. */
function mergeWords(block: ConflictBlock): { text: string; whitespace: boolean } | null {
  const base = tokenize(block.base);
  const ours = tokenize(block.ours);
  const theirs = tokenize(block.theirs);
  if (Math.max(base.length, ours.length, theirs.length) > MAX_WORD_MERGE_TOKENS) return null;
  const interner = new Interner();
  const ids = [interner.all(base), interner.all(ours), interner.all(theirs)];
  const hunks = mergeSequences(ids[0], ids[1], ids[2]);
  const out: string[] = [];
  let whitespace = false;
  let failed = false;
  const push = (tokens: readonly string[], from: number, to: number) => {
    for (let i = from; i < to; i++) out.push(tokens[i]);
  };
  walkMerge(
    hunks,
    ours.length,
    (side, from, to) => push(side === "ours" ? ours : theirs, from, to),
    (m: MergeHunk) => {
      if (failed) return;
      const identical = m.chg1 === m.chg2 && ids[1].subarray(m.i1, m.i1 + m.chg1).every((t, k) => t === ids[2][m.i2 + k]);
      if (identical) return push(ours, m.i1, m.i1 + m.chg1);
      const oursWs = whitespaceOnly(base, m.i0, m.i0 + m.chg0, ours, m.i1, m.i1 + m.chg1);
      const theirsWs = whitespaceOnly(base, m.i0, m.i0 + m.chg0, theirs, m.i2, m.i2 + m.chg2);
      if (oursWs === theirsWs) {
        failed = true;
        return;
      }
      whitespace = true;
      if (oursWs) push(theirs, m.i2, m.i2 + m.chg2);
      else push(ours, m.i1, m.i1 + m.chg1);
    },
  );
  return failed ? null : { text: out.join(""), whitespace };
}

/** Whether `side` differs from `base` only in whitespace inside or at the end of its lines, line for line. */
function wholeSideWhitespaceOnly(base: Lines, side: Lines): boolean {
  if (base.lines.length !== side.lines.length) return false;
  for (let i = 0; i < base.lines.length; i++) {
    const b = tokenize({ lines: [base.lines[i]], eols: [base.eols[i]] });
    const s = tokenize({ lines: [side.lines[i]], eols: [side.eols[i]] });
    if (!whitespaceOnly(b, 0, b.length, s, 0, s.length)) return false;
  }
  return true;
}

/** The resolution the daemon applies to a block by itself, or null when a person (or model) has to decide. */
export function autoResolve(block: ConflictBlock): AutoResolution | null {
  const { base, ours, theirs } = block;
  if (sameLines(ours, theirs)) return { ...copy(ours), rule: "identical" };
  if (sameLines(ours, base)) return { ...copy(theirs), rule: "one-sided", taken: "theirs" };
  if (sameLines(theirs, base)) return { ...copy(ours), rule: "one-sided", taken: "ours" };
  const words = mergeWords(block);
  if (words) {
    const { lines, eols } = splitText(words.text);
    return { lines, eols, rule: words.whitespace ? "whitespace" : "words" };
  }
  // The word merge fails where both sides re-spaced one spot differently; a side that only re-spaced gives way.
  if (wholeSideWhitespaceOnly(base, ours)) return { ...copy(theirs), rule: "whitespace", taken: "theirs" };
  if (wholeSideWhitespaceOnly(base, theirs)) return { ...copy(ours), rule: "whitespace", taken: "ours" };
  return null;
}
