/**
 * Issue 20, properties (b): the line diff, the line status and the word diff against git on random cases.
 * - ranges: `diffLines` against `git diff --histogram --indent-heuristic` of the same bytes (the worktree side after
 *   git's clean filter under cr "ignore"), with the one rule line-diff.ts departs from git by: a last line without
 *   newline compares as the same line with LF, and a change of only the final newline is a change of the last line;
 * - line status: each line's `change` and `vs_index.same`, and each range's `staged`, from git's three diffs;
 * - word diff: the words kept, removed and added, against `git diff --word-diff=porcelain` with the word regex
 *   word-diff.ts promises for ASCII text.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { FileVersions } from "../../src/core/file-versions.js";
import { type CrPolicy, LineIds, diffLines, regionHit } from "../../src/core/line-diff.js";
import { lineStatus } from "../../src/core/line-status.js";

import { wordDiff } from "../../src/core/word-diff.js";
import { type Change, changesOf, gitDiff, gitWordDiff, scratch } from "./git-oracle.js";
import { check } from "./runs.js";
import { type Version, edited, seqOf, version, versionEdit, versionPair } from "./versions.js";

const tmp = scratch();
afterAll(tmp.cleanup);

/**
 * A version's bytes as git compares them under our rule: a last line without newline as the same line with LF, and the
 * worktree side after git's clean filter under cr "ignore".
 */
function compared(v: Version, cr: CrPolicy): Buffer {
  const eols = v.eols.map((e) => (e === "" || (cr === "ignore" && e === "\r\n") ? "\n" : e));
  return Buffer.from(v.lines.map((l, i) => l + eols[i]).join(""), "utf8");
}

/** git's changes from `old` to `now` (`cr`: how the new side's terminators compare), with the final-newline rule. */
function gitChanges(old: Version, now: Version, cr: CrPolicy): Change[] {
  const changes = changesOf(gitDiff(tmp.dir, compared(old, "exact"), compared(now, cr)));
  const m = old.lines.length;
  const n = now.lines.length;
  const lost = (v: Version) => v.eols[v.eols.length - 1] === "";
  if (m && n && lost(old) !== lost(now)) {
    const last = changes[changes.length - 1];
    const lastLinesMatched = !last || (last.oldEnd < m && last.end < n);
    if (lastLinesMatched) {
      // The two last lines are equal to git but for the final newline: that is a change of the last line, joined to a
      // change right above it.
      if (last && last.oldEnd === m - 1 && last.end === n - 1) Object.assign(last, { oldEnd: m, end: n });
      else changes.push({ oldStart: m - 1, oldEnd: m, start: n - 1, end: n });
    }
  }
  return changes;
}

const ours = (old: Version, now: Version, cr: CrPolicy): Change[] =>
  diffLines(seqOf(old), seqOf(now), { cr, oldCr: "exact" }).ranges.map(({ oldStart, oldEnd, start, end }) => ({ oldStart, oldEnd, start, end }));

const crPolicy = fc.constantFrom<CrPolicy>("exact", "exact", "ignore");

describe("line diff against git diff --histogram (issue 20)", () => {
  it("gives git's change ranges on random edits with CRLF mixes, no final newline and empty files", async () => {
    await check(
      fc.property(versionPair({ bom: false }), crPolicy, ([old, now], cr) => {
        expect(ours(old, now, cr)).toEqual(gitChanges(old, now, cr));
      }),
      80,
    );
  });

  it("gives the line status git's three diffs say: changed against HEAD, staged, and each range's staging", async () => {
    const three = fc
      .tuple(version({ bom: false }), fc.array(versionEdit, { maxLength: 4 }), fc.array(versionEdit, { maxLength: 4 }), crPolicy)
      .map(([head, e1, e2, cr]) => {
        const index = edited(head, e1);
        return { head, index, worktree: edited(index, e2), cr };
      });
    await check(
      fc.property(three, ({ head, index, worktree, cr }) => {
        const v = new FileVersions(seqOf(head), seqOf(index), seqOf(worktree), cr, new LineIds());
        const hw = gitChanges(head, worktree, cr);
        const iw = gitChanges(index, worktree, cr);
        const hi = gitChanges(head, index, "exact");
        const inside = (changes: Change[], w: number) => changes.some((c) => c.start <= w && w < c.end);
        const all = worktree.lines.map((_, i) => i + 1);
        const status = lineStatus(v, { lines: all });
        expect(status.lines.map((l) => [l.line, l.change === "unchanged", l.vs_index.same])).toEqual(
          all.map((w) => [w, !inside(hw, w - 1), !inside(iw, w - 1)]),
        );
        expect(status.ranges.map((r) => [r.start - 1, r.end])).toEqual(hw.map((c) => [c.start, c.end]));
        const staged = hw.map((r) => {
          const unstaged = iw.some((c) => regionHit(r.start, r.end, c.start, c.end));
          const some = hi.some((c) => regionHit(r.oldStart, r.oldEnd, c.oldStart, c.oldEnd));
          return !unstaged ? "all" : !some ? "none" : "partial";
        });
        expect(status.ranges.map((r) => r.staged)).toEqual(staged);
      }),
      30,
    );
  });
});

/** ASCII words, punctuation and whitespace, as code has them. */
const ASCII_WORDS = ["a", "b", "foo", "bar_2", "x", "if", "return", "12", "(", ")", ",", ";", "=", "==", "+", "{", "}", ".", "->", '"s"'];
const asciiLine = fc
  .array(fc.tuple(fc.constantFrom(...ASCII_WORDS), fc.constantFrom("", "", " ", "  ", "\t")), { maxLength: 12 })
  .map((parts) => parts.map(([w, s]) => w + s).join(""));
/** A line and an edit of it: words inserted, deleted or replaced at random places, whitespace changed. */
const linePair = fc
  .tuple(
    asciiLine,
    fc.array(fc.tuple(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.integer({ min: 0, max: 3 }), asciiLine), {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .map(([a, edits]) => {
    let b = a;
    for (const [at, cut, put] of edits) {
      const i = Math.floor(at * (b.length + 1));
      b = b.slice(0, i) + put.slice(0, 6) + b.slice(i + cut);
    }
    return [a, b] as const;
  });

/** The regex word-diff.ts promises to split ASCII text like, in git's POSIX form, and the same in JavaScript. */
const GIT_WORD_REGEX = "[[:alnum:]_]+|[^[:space:][:alnum:]_]";
const ASCII_WORD = /[A-Za-z0-9_]+|[^\sA-Za-z0-9_]/g;

describe("word diff against git diff --word-diff=porcelain (issue 20)", () => {
  it("keeps, removes and adds the words git does, in git's order", async () => {
    await check(
      fc.property(linePair, ([a, b]) => {
        fc.pre(a !== b);
        const mine = wordDiff(a, b).flatMap((p) => (p.text.match(ASCII_WORD) ?? []).map((w) => p.op + w));
        expect(mine).toEqual(gitWordDiff(tmp.dir, a, b, GIT_WORD_REGEX, ASCII_WORD));
      }),
      60,
    );
  });

  it("is a diff: the kept and removed parts are the old line, the kept and added ones the new, no part empty", async () => {
    await check(
      fc.property(fc.oneof(linePair, fc.tuple(fc.string(), fc.string())), ([a, b]) => {
        const parts = wordDiff(a, b);
        expect(
          parts
            .filter((p) => p.op !== "+")
            .map((p) => p.text)
            .join(""),
        ).toBe(a === b ? "" : a);
        expect(
          parts
            .filter((p) => p.op !== "-")
            .map((p) => p.text)
            .join(""),
        ).toBe(a === b ? "" : b);
        expect(parts.every((p, i) => p.text && (i === 0 || parts[i - 1].op !== p.op))).toBe(true);
      }),
      500,
    );
  });
});
