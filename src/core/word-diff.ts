/**
 * Word diff of a pair of lines (SPEC 8): `[{op, text}]` over words, punctuation and the whitespace between them,
 * rendered `kept [-old-]{+new+} kept`. Words are runs of letters, digits and `_` in any script and single punctuation
 * marks: for ASCII text exactly git's words under `--word-diff-regex='[[:alnum:]_]+|[^[:space:][:alnum:]_]'` (git's POSIX
 * classes know no other script; ours keep a Cyrillic or CJK word whole). As in git, whitespace is not a word: the words
 * are diffed by git's own Myers (myers.ts) and slides (without the indent heuristic, as git's word diff runs them),
 * and the text between two kept words is kept where both sides have it, else shown removed and added. The property
 * tests compare the words kept, removed and added with `git diff --word-diff=porcelain` on those options.
 * `foo(bar, baz)` -> `foo(bar, qux)` is `foo(bar, [-baz-]{+qux+})`; `a==b` -> `a===b` is `a=={+=+}b`.
 */
import { compactFlags } from "./diff-compact.js";
import type { ChangeRange, LineDiff } from "./line-diff.js";
import { tagOf } from "./hash.js";
import { layoutOf } from "./line-pairs.js";
import { xdiffMyers } from "./myers.js";
import { Interner } from "./sequence-diff.js";

export interface WordPart {
  op: "=" | "-" | "+";
  text: string;
}

const WORD = /[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu;
/** Past this many words on both sides together a pair is shown as one removal and one addition (minified lines). */
export const MAX_WORD_TOKENS = 4000;
/**
 * Past this many words removed and added a word diff says no more than "this line became that one", so it is shown as
 * that (git would list them all).
 */
export const MAX_WORD_EDITS = 200;

/** A line's words and where each starts and ends. */
interface Words {
  text: string[];
  start: number[];
  end: number[];
}

function wordsOf(line: string): Words {
  const out: Words = { text: [], start: [], end: [] };
  for (const m of line.matchAll(WORD)) {
    out.text.push(m[0]);
    out.start.push(m.index);
    out.end.push(m.index + m[0].length);
  }
  return out;
}

/** Which words of each side the diff changes (1), after git's slides; null past MAX_WORD_EDITS. */
function changedWords(a: Words, b: Words): { ca: Uint8Array; cb: Uint8Array } | null {
  const words = new Interner();
  const ka = words.all(a.text);
  const kb = words.all(b.text);
  const { ca, cb } = xdiffMyers(ka, kb);
  let edits = 0;
  for (const c of [ca, cb]) for (let i = 0; i < c.length; i++) edits += c[i];
  if (edits > MAX_WORD_EDITS) return null;
  compactFlags({ keys: ka }, { keys: kb }, ca, cb);
  return { ca, cb };
}

/** The leading (or, with `end`, trailing) whitespace of a piece of a line. */
const blank = (s: string, end = false) => (end ? /\s*$/ : /^\s*/).exec(s)![0];

/** The word diff of one line against another; `[]` when they are equal. */
export function wordDiff(a: string, b: string): WordPart[] {
  if (a === b) return [];
  const whole = (): WordPart[] => [...(a ? [{ op: "-" as const, text: a }] : []), ...(b ? [{ op: "+" as const, text: b }] : [])];
  const wa = wordsOf(a);
  const wb = wordsOf(b);
  if (wa.text.length + wb.text.length > MAX_WORD_TOKENS) return whole();
  const changed = changedWords(wa, wb);
  if (!changed) return whole();
  const { ca, cb } = changed;
  const parts: WordPart[] = [];
  const push = (op: WordPart["op"], text: string) => {
    if (!text) return;
    const last = parts[parts.length - 1];
    if (last?.op === op) last.text += text;
    else parts.push({ op, text });
  };
  // Between two kept words (or an end of the line), what each side has there: kept where equal, else its whitespace
  // on either end kept where both sides have the same, the rest removed and added.
  const gap = (old: string, now: string) => {
    if (old === now) return push("=", old);
    const lead = blank(old) === blank(now) ? blank(old) : "";
    const restOld = old.slice(lead.length);
    const restNew = now.slice(lead.length);
    const trail = restOld && restNew && blank(restOld, true) === blank(restNew, true) ? blank(restOld, true) : "";
    push("=", lead);
    push("-", restOld.slice(0, restOld.length - trail.length));
    push("+", restNew.slice(0, restNew.length - trail.length));
    push("=", trail);
  };
  let i = 0;
  let j = 0;
  let oldAt = 0;
  let newAt = 0;
  for (;;) {
    while (i < ca.length && ca[i]) i++;
    while (j < cb.length && cb[j]) j++;
    const kept = i < ca.length && j < cb.length;
    gap(a.slice(oldAt, kept ? wa.start[i] : a.length), b.slice(newAt, kept ? wb.start[j] : b.length));
    if (!kept) break;
    push("=", wa.text[i]);
    oldAt = wa.end[i++];
    newAt = wb.end[j++];
  }
  return parts;
}

export function renderWords(parts: readonly WordPart[]): string {
  let out = "";
  for (const p of parts) out += p.op === "=" ? p.text : p.op === "-" ? `[-${p.text}-]` : `{+${p.text}+}`;
  return out;
}

/** One changed line of a diff: the old line, what it became (-1 when deleted or added), their word diff. */
export interface ChangedLine {
  /** 0-based lines; -1 for none. */
  old: number;
  new: number;
  words: WordPart[];
  /** The pair differs only in its terminator (CR or the final newline). */
  eolChanged: boolean;
  /** The old line moved within its range to become the new one (listed where the new line is). */
  moved: boolean;
}

/** Every changed line of a range in reading order (line-pairs.ts rows); a moved line appears once, at its new place. */
export function changedLinesOf(diff: LineDiff, range: ChangeRange): ChangedLine[] {
  const { pieces, rows, ownerOfOld } = layoutOf(diff, range);
  const out: ChangedLine[] = [];
  const pair = (o: number, n: number, moved: boolean): ChangedLine => {
    const a = diff.old.lines[o];
    const b = diff.new.lines[n];
    return { old: o, new: n, words: wordDiff(a, b), eolChanged: a === b && diff.old.eols[o] !== diff.new.eols[n], moved };
  };
  for (const r of rows) {
    if (r.old >= 0 && r.new >= 0) out.push(pair(r.old, r.new, false));
    else if (r.new >= 0) {
      const p = pieces[r.new - range.start];
      out.push(p.moved ? pair(p.partner, r.new, true) : { old: -1, new: r.new, words: [], eolChanged: false, moved: false });
    } else if (pieces[ownerOfOld[r.old - range.oldStart]].partner !== r.old) {
      out.push({ old: r.old, new: -1, words: [], eolChanged: false, moved: false });
    }
  }
  return out;
}

/** Every changed line of the diff, in file order. */
export function changedLines(diff: LineDiff): ChangedLine[] {
  return diff.ranges.flatMap((r) => changedLinesOf(diff, r));
}

export interface LineRef {
  /** 1-based, in its own version. */
  line: number;
  tag: string;
  content: string;
}

/** A changed line as SPEC 8 `git_word_diff` returns it. */
export interface WordDiffEntry {
  old: LineRef | null;
  new: LineRef | null;
  words: WordPart[];
  eol_changed?: true;
  moved?: true;
}

function lineRef(side: LineDiff["old"], i: number): LineRef | null {
  return i < 0 ? null : { line: i + 1, tag: tagOf(side.lines[i]), content: side.lines[i] };
}

/** A changed line of `diff` in the wire form: both sides with their tags, and the words. */
export function wordDiffEntry(diff: LineDiff, c: ChangedLine): WordDiffEntry {
  const entry: WordDiffEntry = { old: lineRef(diff.old, c.old), new: lineRef(diff.new, c.new), words: c.words };
  if (c.eolChanged) entry.eol_changed = true;
  if (c.moved) entry.moved = true;
  return entry;
}

/** Every changed line of a diff in the wire form. */
export function wordDiffEntries(diff: LineDiff): WordDiffEntry[] {
  return changedLines(diff).map((c) => wordDiffEntry(diff, c));
}

/**
 * One line of `text` per changed line, numbered by the new version so a model can edit from it: a changed line as
 * `N|TAG kept [-old-]{+new+} kept`, an added one as `N|TAG {+content+}`, a deleted one as `-N|TAG [-content-]` with
 * its old number and tag.
 */
export function renderWordDiffEntry(e: WordDiffEntry): string {
  if (!e.new) return `-${e.old!.line}|${e.old!.tag} [-${e.old!.content}-]`;
  const head = `${e.new.line}|${e.new.tag} `;
  if (!e.old) return `${head}{+${e.new.content}+}`;
  const notes = [e.eol_changed ? "(only the line ending changed)" : "", e.moved ? `(moved from ${e.old.line})` : ""].filter(Boolean);
  return head + (e.words.length ? renderWords(e.words) : e.new.content) + (notes.length ? ` ${notes.join(" ")}` : "");
}
