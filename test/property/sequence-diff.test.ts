/**
 * Issue 21: the one diff of interned sequences (core/sequence-diff.ts) against git, line for line: its changes are the
 * hunks of `git diff --histogram`, with the indent heuristic when it is given the lines' text (as the line diff runs
 * it) and without (as the merge runs it), on code-like files and on files of a few frequent lines, where git's
 * histogram falls back to its Myers.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { Interner, diffBlocks } from "../../src/core/sequence-diff.js";
import { type Change, changesOf, gitDiff, scratch } from "./git-oracle.js";
import { check } from "./runs.js";
import { type Version, bytesOf, edited, version, versionEdit } from "./versions.js";

const tmp = scratch();
afterAll(tmp.cleanup);

/** A version of 150 to 300 lines, each one of three that all occur more than histogram's 64 times. */
const frequentVersion: fc.Arbitrary<Version> = fc
  .array(fc.constantFrom("{", "}", ""), { minLength: 150, maxLength: 300 })
  .map((lines) => ({ bom: false, lines, eols: lines.map(() => "\n" as const) }));

const pairOf = (v: fc.Arbitrary<Version>) =>
  fc.tuple(v, fc.array(versionEdit, { minLength: 1, maxLength: 8 })).map(([a, edits]) => [a, edited(a, edits)] as const);
const pairs = fc.oneof(pairOf(version({ max: 60, bom: false })), pairOf(frequentVersion));

/** The diff's changes, each line interned by its bytes (terminator included), `heuristic` giving it the lines' text. */
function ours(old: Version, now: Version, heuristic: boolean): Change[] {
  const interner = new Interner();
  const side = (v: Version) => ({ keys: interner.all(v.lines.map((l, i) => l + v.eols[i])), lines: heuristic ? v.lines : undefined });
  const out: Change[] = [];
  let i = 0;
  let j = 0;
  for (const [x, y, len] of [...diffBlocks(side(old), side(now)), [old.lines.length, now.lines.length, 0] as const]) {
    if (x > i || y > j) out.push({ oldStart: i, oldEnd: x, start: j, end: y });
    i = x + len;
    j = y + len;
  }
  return out;
}

const theirs = (old: Version, now: Version, heuristic: boolean): Change[] =>
  changesOf(gitDiff(tmp.dir, bytesOf(old), bytesOf(now), heuristic ? [] : ["--no-indent-heuristic"]));

describe("the sequence diff against git diff --histogram (issue 21)", () => {
  it("gives git's changes with the indent heuristic (the line diff's placement)", async () => {
    await check(
      fc.property(pairs, ([old, now]) => {
        expect(ours(old, now, true)).toEqual(theirs(old, now, true));
      }),
      60,
    );
  });

  it("gives git's changes without it (the merge's placement)", async () => {
    await check(
      fc.property(pairs, ([old, now]) => {
        expect(ours(old, now, false)).toEqual(theirs(old, now, false));
      }),
      60,
    );
  });
});
