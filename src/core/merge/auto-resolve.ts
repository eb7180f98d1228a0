import { splitText } from "../text.js";
import { type Change, Interner, diffSequences } from "../sequence-diff.js";
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

const isLineStart = (tokens: readonly string[], i: number) => i === 0 || isNewline(tokens[i - 1]);

/**
 * Whether a change taken from one side (base tokens [b0,b1) became side tokens [s0,s1)) would carry text across a line
 * break: what it really changes (the part left once the tokens both ends share are set aside) holds a line break but is
 * not whole lines. A token diff may align an inserted line with the next line's words (theirs' new `c 0` line before
 * `c 3` as ` 0\nc` after base's `c`), and merging that with the other side's change to the same words writes a line
 * neither side wrote (SPEC 9: only changes that do not overlap at word level are merged).
 */
function crossesLines(base: readonly string[], b0: number, b1: number, side: readonly string[], s0: number, s1: number): boolean {
  while (b0 < b1 && s0 < s1 && base[b0] === side[s0]) b0++, s0++;
  while (b0 < b1 && s0 < s1 && base[b1 - 1] === side[s1 - 1]) b1--, s1--;
  const breaks = (tokens: readonly string[], from: number, to: number) => tokens.slice(from, to).some(isNewline);
  if (!breaks(base, b0, b1) && !breaks(side, s0, s1)) return false;
  const wholeLines = (tokens: readonly string[], from: number, to: number) => isLineStart(tokens, from) && (from === to || isNewline(tokens[to - 1]));
  return !(wholeLines(base, b0, b1) && wholeLines(side, s0, s1));
}

/** How many lines a block side's tokens make (a last line without a terminator counts). */
function lineCount(tokens: readonly string[]): number {
  const breaks = tokens.filter(isNewline).length;
  return tokens.length && !isNewline(tokens[tokens.length - 1]) ? breaks + 1 : breaks;
}

/**
 * The three-way merge of the block's tokens; null when two changes overlap or touch and neither is whitespace-only,
 * when a change taken would cross a line break, or when the result's number of lines is neither side's (both sides
 * added or removed lines at different places: where the lines go is for a person to say).
 */
function mergeWords(block: ConflictBlock): { text: string; whitespace: boolean } | null {
  const base = tokenize(block.base);
  const ours = tokenize(block.ours);
  const theirs = tokenize(block.theirs);
  if (Math.max(base.length, ours.length, theirs.length) > MAX_WORD_MERGE_TOKENS) return null;
  const interner = new Interner();
  const ids = [interner.all(base), interner.all(ours), interner.all(theirs)];
  const hunks = mergeSequences(ids[0], ids[1], ids[2]);
  for (const m of hunks) {
    if (m.mode === 1 && crossesLines(base, m.i0, m.i0 + m.chg0, ours, m.i1, m.i1 + m.chg1)) return null;
    if (m.mode === 2 && crossesLines(base, m.i0, m.i0 + m.chg0, theirs, m.i2, m.i2 + m.chg2)) return null;
  }
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
      const taken = oursWs
        ? crossesLines(base, m.i0, m.i0 + m.chg0, theirs, m.i2, m.i2 + m.chg2)
        : crossesLines(base, m.i0, m.i0 + m.chg0, ours, m.i1, m.i1 + m.chg1);
      if (taken) {
        failed = true;
        return;
      }
      whitespace = true;
      if (oursWs) push(theirs, m.i2, m.i2 + m.chg2);
      else push(ours, m.i1, m.i1 + m.chg1);
    },
  );
  if (failed) return null;
  const lines = lineCount(out);
  if (lines !== lineCount(ours) && lines !== lineCount(theirs)) return null;
  return { text: out.join(""), whitespace };
}

/** Whether one side's line change meets the other's: they share base lines, or one is an insertion inside (or at) the other. */
function meets(h: Change, g: Change): boolean {
  const hEnd = h.aStart + h.aCount;
  const gEnd = g.aStart + g.aCount;
  if (!h.aCount && !g.aCount) return h.aStart === g.aStart;
  if (!h.aCount) return g.aStart < h.aStart && h.aStart < gEnd;
  if (!g.aCount) return h.aStart < g.aStart && g.aStart < hEnd;
  return g.aStart < hEnd && h.aStart < gEnd;
}

/**
 * Whether a word merge's lines keep, verbatim and in one piece, every line change of either side that no change of the
 * other meets, by the line alignment git's merge used. The token diff may align lines otherwise (base `a a`/`a`, ours
 * `c a`/`a`/`a`, theirs `a a`/`b`: by lines ours rewrote the first line into two and theirs changed the second; by
 * tokens ours added a last line), and then the merge is not the one git would have made of the two changes.
 */
function keepsLineChanges(block: ConflictBlock, result: readonly string[]): boolean {
  const interner = new Interner();
  const keys = (side: Lines) => interner.all(side.lines.map((l, i) => l + side.eols[i]));
  const base = keys(block.base);
  const diffs = { ours: diffSequences(base, keys(block.ours)), theirs: diffSequences(base, keys(block.theirs)) };
  const inResult = (run: readonly string[]) => {
    for (let i = 0; i + run.length <= result.length; i++) if (run.every((l, k) => result[i + k] === l)) return true;
    return false;
  };
  for (const [name, other] of [
    ["ours", "theirs"],
    ["theirs", "ours"],
  ] as const) {
    for (const h of diffs[name]) {
      if (h.bCount && !diffs[other].some((g) => meets(h, g)) && !inResult(block[name].lines.slice(h.bStart, h.bStart + h.bCount))) return false;
    }
  }
  return true;
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
    const merged = splitText(words.text);
    // A whitespace merge drops one side's re-spacing on purpose; a word merge keeps every line change.
    if (words.whitespace || keepsLineChanges(block, merged.lines)) return { ...merged, rule: words.whitespace ? "whitespace" : "words" };
  }
  // The word merge fails where both sides re-spaced one spot differently; a side that only re-spaced gives way.
  if (wholeSideWhitespaceOnly(base, ours)) return { ...copy(theirs), rule: "whitespace", taken: "theirs" };
  if (wholeSideWhitespaceOnly(base, theirs)) return { ...copy(ours), rule: "whitespace", taken: "ours" };
  return null;
}
