import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Change, Interner, diffSequences } from "../../src/core/sequence-diff.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { joinLines, randomEdits, randomFile, seeded } from "./merge/git-ref.js";

const ws = tmpWorkspace();
afterAll(() => ws.cleanup());

/** The hunks of `git diff --histogram -U0` (no indent heuristic: merges run without it) as Changes. */
function gitHistogram(a: string[], b: string[]): Change[] {
  writeFileSync(path.join(ws.dir, "a"), joinLines(a));
  writeFileSync(path.join(ws.dir, "b"), joinLines(b));
  const r = spawnSync("git", ["diff", "--no-index", "-U0", "--histogram", "--no-indent-heuristic", "a", "b"], { cwd: ws.dir, encoding: "utf8" });
  const out: Change[] = [];
  for (const m of r.stdout.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm)) {
    const aCount = m[2] === undefined ? 1 : Number(m[2]);
    const bCount = m[4] === undefined ? 1 : Number(m[4]);
    out.push({ aStart: Number(m[1]) - (aCount ? 1 : 0), aCount, bStart: Number(m[3]) - (bCount ? 1 : 0), bCount });
  }
  return out;
}

function diff(a: string[], b: string[]): Change[] {
  const interner = new Interner();
  return diffSequences(interner.all(a), interner.all(b));
}

/** Applying the changes to a gives b, and the lines between changes are equal. */
function applies(a: string[], b: string[], changes: Change[]): boolean {
  const out: string[] = [];
  let i = 0;
  for (const c of changes) {
    out.push(...a.slice(i, c.aStart));
    out.push(...b.slice(c.bStart, c.bStart + c.bCount));
    i = c.aStart + c.aCount;
  }
  out.push(...a.slice(i));
  return JSON.stringify(out) === JSON.stringify(b);
}

describe("diffSequences", () => {
  it("handles empty sides", () => {
    expect(diff([], [])).toEqual([]);
    expect(diff([], ["a"])).toEqual([{ aStart: 0, aCount: 0, bStart: 0, bCount: 1 }]);
    expect(diff(["a", "b"], [])).toEqual([{ aStart: 0, aCount: 2, bStart: 0, bCount: 0 }]);
    expect(diff(["a"], ["a"])).toEqual([]);
  });

  it("slides an insertion of a repeated line down as far as it goes, as git does", () => {
    // "b" could be the first or the second of the two; git shows the later one as added.
    expect(diff(["a", "b", "c"], ["a", "b", "b", "c"])).toEqual([{ aStart: 2, aCount: 0, bStart: 2, bCount: 1 }]);
    expect(diff(["x", "}", "y"], ["x", "}", "z", "}", "y"])).toEqual([{ aStart: 2, aCount: 0, bStart: 2, bCount: 2 }]);
  });

  it("agrees with git diff --histogram on random code-like edits", () => {
    const rnd = seeded(3);
    for (let i = 0; i < 60; i++) {
      const a = randomFile(rnd, 5 + Math.floor(rnd() * 60));
      const b = randomEdits(rnd, a, 1 + Math.floor(rnd() * 8));
      const mine = diff(a, b);
      expect(applies(a, b, mine)).toBe(true);
      expect(mine, `case ${i}`).toEqual(gitHistogram(a, b));
    }
  });

  // Where every common line occurs more than 64 times, git's histogram falls back to its Myers (xdl_do_diff on the
  // region, with its trim and discard of lines without a match): the merge must break that diff's ties as git does too.
  it("agrees with git diff --histogram where every common line is too frequent for histogram and it falls back to Myers", () => {
    const rnd = seeded(5);
    for (let i = 0; i < 5; i++) {
      // Three distinct lines over 600: each occurs far more than histogram's 64.
      const a = Array.from({ length: 600 }, () => ["{", "}", ""][Math.floor(rnd() * 3)]);
      const b = randomEdits(rnd, a, 20).map((l) => (["{", "}", ""].includes(l) ? l : ""));
      const mine = diff(a, b);
      expect(applies(a, b, mine)).toBe(true);
      expect(mine, `case ${i}`).toEqual(gitHistogram(a, b));
    }
  });
});
