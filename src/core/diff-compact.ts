/**
 * Where an ambiguous change goes. Inserting a function between two others can be shown as starting at its own first
 * line or at the previous function's closing `}` and blank line: both are minimal diffs. Git slides each such group of
 * added or deleted lines as far as it can, joins groups that meet, lines a group up with a change on the other side
 * when it can, and otherwise picks the position its indent heuristic scores best (the default since git 2.14; weights
 * from Michael Haggerty's diff-slider-tools study, as published in git's xdiff/xdiffi.c). This is that procedure,
 * written for our change flags, so ranges sit where `git diff --histogram` puts them.
 */

/** A matched run: `length` elements equal from `aStart` in one version and `bStart` in the other. */
export type Block = [aStart: number, bStart: number, length: number];

/**
 * One version as the slides see it: each element's key (equal keys, equal elements: LineIds.keysOf) and, for the
 * indent heuristic, each line's text. Without `lines` a group that lines up with no change stays as far down as it
 * slides, as git leaves the words of its word diff (which runs without the heuristic).
 */
export interface CompactSide {
  readonly keys: Int32Array;
  readonly lines?: readonly string[];
}

/** Git's limits: indentation counted up to this, runs of blank lines up to that, slides tried up to the last. */
const MAX_INDENT = 200;
const MAX_BLANKS = 20;
const MAX_SLIDING = 100;
// Git's empirical weights: larger is a worse place for a change to start or end.
const START_OF_FILE_PENALTY = 1;
const END_OF_FILE_PENALTY = 21;
const TOTAL_BLANK_WEIGHT = -30;
const POST_BLANK_WEIGHT = 6;
const RELATIVE_INDENT_PENALTY = -4;
const RELATIVE_INDENT_WITH_BLANK_PENALTY = 10;
const RELATIVE_OUTDENT_PENALTY = 24;
const RELATIVE_OUTDENT_WITH_BLANK_PENALTY = 17;
const RELATIVE_DEDENT_PENALTY = 23;
const RELATIVE_DEDENT_WITH_BLANK_PENALTY = 17;
const INDENT_WEIGHT = 60;

/** Columns of leading whitespace (tabs to the next multiple of 8), -1 for a blank line. */
function indentOf(line: string): number {
  let n = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 32) n++;
    else if (c === 9) n += 8 - (n % 8);
    else if (c !== 11 && c !== 12 && c !== 13) return n;
    if (n >= MAX_INDENT) return MAX_INDENT;
  }
  return -1;
}

interface Score {
  indent: number;
  penalty: number;
}

/** Adds the badness of splitting `side` just above line `split` to `s`. */
function scoreSplit(lines: readonly string[], split: number, s: Score): void {
  const n = lines.length;
  const endOfFile = split >= n;
  const indent = endOfFile ? -1 : indentOf(lines[split]);
  let preBlank = 0;
  let preIndent = -1;
  for (let i = split - 1; i >= 0; i--) {
    preIndent = indentOf(lines[i]);
    if (preIndent !== -1) break;
    if (++preBlank === MAX_BLANKS) {
      preIndent = 0;
      break;
    }
  }
  let postBlank = 0;
  let postIndent = -1;
  for (let i = split + 1; i < n; i++) {
    postIndent = indentOf(lines[i]);
    if (postIndent !== -1) break;
    if (++postBlank === MAX_BLANKS) {
      postIndent = 0;
      break;
    }
  }
  if (preIndent === -1 && preBlank === 0) s.penalty += START_OF_FILE_PENALTY;
  if (endOfFile) s.penalty += END_OF_FILE_PENALTY;
  const blanksAfter = indent === -1 ? 1 + postBlank : 0;
  const blanks = preBlank + blanksAfter;
  s.penalty += TOTAL_BLANK_WEIGHT * blanks + POST_BLANK_WEIGHT * blanksAfter;
  const effective = indent !== -1 ? indent : postIndent;
  s.indent += effective;
  if (effective === -1 || preIndent === -1 || effective === preIndent) return;
  if (effective > preIndent) s.penalty += blanks ? RELATIVE_INDENT_WITH_BLANK_PENALTY : RELATIVE_INDENT_PENALTY;
  else if (postIndent !== -1 && postIndent > effective) s.penalty += blanks ? RELATIVE_OUTDENT_WITH_BLANK_PENALTY : RELATIVE_OUTDENT_PENALTY;
  else s.penalty += blanks ? RELATIVE_DEDENT_WITH_BLANK_PENALTY : RELATIVE_DEDENT_PENALTY;
}

const compare = (a: Score, b: Score) => INDENT_WEIGHT * Math.sign(a.indent - b.indent) + (a.penalty - b.penalty);

/**
 * Where the indent heuristic ends a group of `size` lines that can end anywhere from `earliestEnd` to `end`: the split
 * git scores best, the furthest down on a tie (at most MAX_SLIDING tried).
 */
function bestEnd(lines: readonly string[], size: number, earliestEnd: number, end: number): number {
  let best = -1;
  let bestScore: Score = { indent: 0, penalty: 0 };
  for (let shift = Math.max(earliestEnd, end - size - 1, end - MAX_SLIDING); shift <= end; shift++) {
    const s: Score = { indent: 0, penalty: 0 };
    scoreSplit(lines, shift, s);
    scoreSplit(lines, shift - size, s);
    if (best === -1 || compare(s, bestScore) <= 0) {
      best = shift;
      bestScore = s;
    }
  }
  return best;
}

/**
 * Slides the groups of changed lines of `side` (flags `ch`, 1 = changed), keeping them in step with the groups of the
 * other side (`och`): group k of each side sits between their k-th and (k+1)-th unchanged lines.
 */
function compactSide(side: CompactSide, ch: Uint8Array, och: Uint8Array): void {
  const n = ch.length;
  const on = och.length;
  const same = (i: number, j: number) => side.keys[i] === side.keys[j];
  let gs = 0;
  let ge = 0;
  while (ge < n && ch[ge]) ge++;
  let os = 0;
  let oe = 0;
  while (oe < on && och[oe]) oe++;
  const otherPrevious = () => {
    oe = os - 1;
    os = oe;
    while (os > 0 && och[os - 1]) os--;
  };
  const otherNext = () => {
    os = oe + 1;
    oe = os;
    while (oe < on && och[oe]) oe++;
  };
  const slideUp = () => {
    if (gs === 0 || !same(gs - 1, ge - 1)) return false;
    ch[--gs] = 1;
    ch[--ge] = 0;
    while (gs > 0 && ch[gs - 1]) gs--;
    otherPrevious();
    return true;
  };
  const slideDown = () => {
    if (ge >= n || !same(gs, ge)) return false;
    ch[gs++] = 0;
    ch[ge++] = 1;
    while (ge < n && ch[ge]) ge++;
    otherNext();
    return true;
  };
  for (;;) {
    if (ge > gs) {
      let size: number;
      let earliestEnd: number;
      let matchEnd: number;
      do {
        size = ge - gs;
        matchEnd = -1;
        while (slideUp());
        earliestEnd = ge;
        if (oe > os) matchEnd = ge;
        while (slideDown()) if (oe > os) matchEnd = ge;
      } while (size !== ge - gs);
      if (ge === earliestEnd) {
        // It cannot move.
      } else if (matchEnd !== -1) {
        while (oe === os) slideUp();
      } else if (side.lines) {
        const best = bestEnd(side.lines, size, earliestEnd, ge);
        while (ge > best) slideUp();
      }
    }
    if (ge >= n) break;
    gs = ge + 1;
    ge = gs;
    while (ge < n && ch[ge]) ge++;
    otherNext();
  }
}

/** Slides the changed elements of both sides (flags, 1 = changed) as xdiff's xdl_change_compact does, old side first. */
export function compactFlags(old: CompactSide, now: CompactSide, co: Uint8Array, cn: Uint8Array): void {
  compactSide(old, co, cn);
  compactSide(now, cn, co);
}

/** Can a changed group [from, to) of `side` slide at all (its first line equals the one after it, or its last the one before)? */
function canSlide(side: CompactSide, from: number, to: number): boolean {
  if (from === to) return false;
  const { keys } = side;
  return (to < keys.length && keys[from] === keys[to]) || (from > 0 && keys[from - 1] === keys[to - 1]);
}

/** Matched blocks [oldStart, newStart, length] after sliding every ambiguous group as git does (sorted blocks in). */
export function compactBlocks(old: CompactSide, now: CompactSide, blocks: readonly Block[]): Block[] {
  // Most diffs have no group that can move: then the blocks stand, and a 5,000-line file costs a look at each gap.
  let movable = false;
  let i = 0;
  let j = 0;
  for (const [x, y, len] of [...blocks, [old.keys.length, now.keys.length, 0] as const]) {
    if (canSlide(old, i, x) || canSlide(now, j, y)) {
      movable = true;
      break;
    }
    i = x + len;
    j = y + len;
  }
  if (!movable) return blocks.map(([x, y, len]) => [x, y, len]);
  const co = new Uint8Array(old.keys.length).fill(1);
  const cn = new Uint8Array(now.keys.length).fill(1);
  for (const [x, y, len] of blocks) {
    co.fill(0, x, x + len);
    cn.fill(0, y, y + len);
  }
  compactFlags(old, now, co, cn);
  return blocksOf(co, cn);
}

/** The matched blocks of changed-element flags (1 = changed), offset by a0 and b0. */
export function blocksOf(ca: Uint8Array, cb: Uint8Array, a0 = 0, b0 = 0): Block[] {
  const out: Block[] = [];
  for (let i = 0, j = 0; i < ca.length && j < cb.length; ) {
    if (ca[i]) i++;
    else if (cb[j]) j++;
    else {
      const last = out[out.length - 1];
      if (last && last[0] + last[2] === a0 + i && last[1] + last[2] === b0 + j) last[2]++;
      else out.push([a0 + i, b0 + j, 1]);
      i++;
      j++;
    }
  }
  return out;
}
