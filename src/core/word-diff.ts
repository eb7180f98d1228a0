/**
 * Word diff of a pair of lines (SPEC 8): `[{op, text}]` over words, punctuation and the whitespace between them,
 * rendered `kept [-old-]{+new+} kept`. Tokens are runs of letters, digits and `_` in any script, single punctuation
 * marks, and runs of whitespace: the `diff` package's diffWordsWithSpace splits the same way but knows only Latin
 * letters (a Cyrillic or CJK word would be diffed per character), so its Myers diffArrays runs over our tokens.
 * `foo(bar, baz)` -> `foo(bar, qux)` is `foo(bar, [-baz-]{+qux+})`; `a==b` -> `a===b` is `a=={+=+}b`.
 */
import { diffArrays } from "diff";
import type { ChangeRange, LineDiff } from "./line-diff.js";
import { tagOf } from "./hash.js";
import { layoutOf } from "./line-pairs.js";

export interface WordPart {
  op: "=" | "-" | "+";
  text: string;
}

const WORD_TOKEN = /[\p{L}\p{N}_]+|\s+|[^\s\p{L}\p{N}_]/gu;
/** Past this many tokens on both sides together a pair is shown as one removal and one addition (minified lines). */
export const MAX_WORD_TOKENS = 4000;
/**
 * Myers costs tokens x edits: two long lines with little in common would take tens of milliseconds. Past this many
 * token edits a word diff says no more than "this line became that one", so it is shown as that.
 */
export const MAX_WORD_EDITS = 200;

function wordTokens(line: string): string[] {
  return line.match(WORD_TOKEN) ?? [];
}

/** The word diff of one line against another; `[]` when they are equal. */
export function wordDiff(a: string, b: string): WordPart[] {
  if (a === b) return [];
  const ta = wordTokens(a);
  const tb = wordTokens(b);
  const whole = (): WordPart[] => [
    ...(a ? [{ op: "-" as const, text: a }] : []),
    ...(b ? [{ op: "+" as const, text: b }] : []),
  ];
  if (ta.length + tb.length > MAX_WORD_TOKENS) return whole();
  // Alternating kept text and changes; a change is what went and what came in its place.
  const groups: ({ kept: string } | { removed: string; added: string })[] = [];
  const changes = diffArrays(ta, tb, { maxEditLength: MAX_WORD_EDITS });
  if (!changes) return whole();
  for (const c of changes) {
    const text = c.value.join("");
    const last = groups[groups.length - 1];
    if (!c.added && !c.removed) groups.push({ kept: text });
    else {
      const change = last && !("kept" in last) ? last : { removed: "", added: "" };
      if (change !== last) groups.push(change);
      if (c.removed) change.removed += text;
      else change.added += text;
    }
  }
  // Two replacements apart only by whitespace read as one: `[-a b-]{+x y+}`, not `[-a-]{+x+} [-b-]{+y+}`.
  const merged: typeof groups = [];
  for (const g of groups) {
    const prev = merged[merged.length - 1];
    const gap = merged[merged.length - 2];
    if (!("kept" in g) && prev && "kept" in prev && /^\s+$/.test(prev.kept) && gap && !("kept" in gap)
      && g.removed && g.added && gap.removed && gap.added) {
      merged.pop();
      gap.removed += prev.kept + g.removed;
      gap.added += prev.kept + g.added;
    } else merged.push(g);
  }
  const parts: WordPart[] = [];
  for (const g of merged) {
    if ("kept" in g) parts.push({ op: "=", text: g.kept });
    else {
      if (g.removed) parts.push({ op: "-", text: g.removed });
      if (g.added) parts.push({ op: "+", text: g.added });
    }
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
