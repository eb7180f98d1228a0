import fc from "fast-check";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type AutoResolution, autoResolve } from "../../src/core/merge/auto-resolve.js";
import { type Change, Interner, diffSequences } from "../../src/core/sequence-diff.js";
import { type ConflictBlock, type Lines, type MergeResult, mergeTexts } from "../../src/core/merge/three-way.js";
import { splitText } from "../../src/core/text.js";
import { OrtRepo } from "../core/merge/git-ref.js";
import { CLEANUP_MS, check } from "./runs.js";
import { frequentThreeVersions, threeVersions } from "./texts.js";

/** Where the block sides are written for git diff. */
const scratch = mkdtempSync(path.join(tmpdir(), "tool-layer-merge-property-"));

/** A merged file as a list of settled runs and conflicts, each by its lines' contents (git writes terminators its own way). */
type Segment = { stable: string[] } | { ours: string[]; base: string[]; theirs: string[] };

function tidy(segments: Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const s of segments) {
    const last = out[out.length - 1];
    if ("stable" in s && !s.stable.length) continue;
    if ("stable" in s && last && "stable" in last) last.stable.push(...s.stable);
    else out.push("stable" in s ? { stable: [...s.stable] } : s);
  }
  return out;
}

const segmentsOf = (m: MergeResult): Segment[] =>
  tidy(m.chunks.map((c) => (c.kind === "stable" ? { stable: c.lines } : { ours: c.ours.lines, base: c.base.lines, theirs: c.theirs.lines })));

/** The segments of a diff3-style file git wrote (markers of 7; the alphabet has no marker-like line). */
function segmentsOfGit(text: string): Segment[] {
  const out: Segment[] = [];
  let block: { ours: string[]; base: string[]; theirs: string[] } | null = null;
  let part: "ours" | "base" | "theirs" = "ours";
  const marker = (l: string, ch: string) => l.startsWith(ch.repeat(7)) && (l.length === 7 || l[7] === " ");
  for (const l of splitText(text).lines) {
    if (marker(l, "<")) (block = { ours: [], base: [], theirs: [] }), (part = "ours");
    else if (block && marker(l, "|")) part = "base";
    else if (block && marker(l, "=")) part = "theirs";
    else if (block && marker(l, ">")) out.push(block), (block = null);
    else if (block) block[part].push(l);
    else out.push({ stable: [l] });
  }
  return tidy(out);
}

const textOf = (s: Lines) => s.lines.map((l, i) => l + s.eols[i]).join("");

/**
 * Whether one side's line change meets the other's, stated apart from src's own test of it: on an axis where the gap
 * before base line i is 2i and the line itself 2i+1, a change of lines [s, e) covers 2s+1 to 2e-1 (its lines and the
 * gaps between them) and an insertion at s covers the gap 2s; two changes meet where their covers overlap.
 */
function meets(h: Change, g: Change): boolean {
  const cover = (c: Change) => (c.aCount ? [2 * c.aStart + 1, 2 * (c.aStart + c.aCount) - 1] : [2 * c.aStart, 2 * c.aStart]);
  const [hLo, hHi] = cover(h);
  const [gLo, gHi] = cover(g);
  return hLo <= gHi && gLo <= hHi;
}

function hasRun(lines: readonly string[], run: readonly string[]): boolean {
  for (let i = 0; i + run.length <= lines.length; i++) if (run.every((l, k) => lines[i + k] === l)) return true;
  return false;
}

/**
 * What a word merge must keep (SPEC 9), by git's own line diff of the block's sides: every line change of one side that
 * no change of the other meets, verbatim (theirs' new line `c 0` beside ours' changed `c 3` must not come out as `zz 0`); and a line
 * count one of the sides has. Returns what is wrong, or null.
 */
function wordMergeFault(block: ConflictBlock, r: AutoResolution): string | null {
  if (r.lines.length !== block.ours.lines.length && r.lines.length !== block.theirs.lines.length) return `${r.lines.length} lines, neither side's count`;
  const byLines = { ours: gitLineDiff(block.base, block.ours), theirs: gitLineDiff(block.base, block.theirs) };
  return unmetKept(block, byLines, r.lines, (s) => s.lines) ?? unmetKept(block, tokenDiffs(block), tokens(r), tokens);
}

/** git's own line diff of two block sides (histogram, no indent heuristic, as merge-ort diffs), as changes. */
function gitLineDiff(a: Lines, b: Lines): Change[] {
  writeFileSync(path.join(scratch, "a"), textOf(a));
  writeFileSync(path.join(scratch, "b"), textOf(b));
  const r = spawnSync("git", ["diff", "--no-index", "--no-color", "--histogram", "--no-indent-heuristic", "-U0", "a", "b"], { cwd: scratch, encoding: "utf8" });
  const out: Change[] = [];
  for (const m of r.stdout.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm)) {
    const aCount = m[2] === undefined ? 1 : Number(m[2]);
    const bCount = m[4] === undefined ? 1 : Number(m[4]);
    out.push({ aStart: aCount ? Number(m[1]) - 1 : Number(m[1]), aCount, bStart: bCount ? Number(m[3]) - 1 : Number(m[3]), bCount });
  }
  return out;
}

function tokenDiffs(block: ConflictBlock): { ours: Change[]; theirs: Change[] } {
  const keys = new Interner();
  const base = keys.all(tokens(block.base));
  return { ours: diffSequences(base, keys.all(tokens(block.ours))), theirs: diffSequences(base, keys.all(tokens(block.theirs))) };
}

/** The tokens a word merge works on (auto-resolve.ts): words, runs of spaces and tabs, line ends, any other character. */
const TOKEN = /[\p{L}\p{N}_]+|[^\S\r\n]+|\r\n|\n|./gsu;
const tokens = (s: Lines) => textOf(s).match(TOKEN) ?? [];

/** Each side's changes (`diffs` from base) that no change of the other meets must be in `result`, as `shown` cuts the sides. */
function unmetKept(
  block: ConflictBlock,
  diffs: { ours: Change[]; theirs: Change[] },
  result: readonly string[],
  shown: (s: Lines) => readonly string[],
): string | null {
  for (const [name, other] of [
    ["ours", "theirs"],
    ["theirs", "ours"],
  ] as const) {
    for (const h of diffs[name]) {
      if (!h.bCount || diffs[other].some((g) => meets(h, g))) continue;
      const run = shown(block[name]).slice(h.bStart, h.bStart + h.bCount);
      if (!hasRun(result, run)) return `${name}'s change ${JSON.stringify(run)} is not in the result`;
    }
  }
  return null;
}

describe("property: the merge core against git", () => {
  const repo = new OrtRepo();
  // After a fuzz run the repository holds tens of thousands of loose objects: removing them takes a while.
  afterAll(() => {
    repo.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }, CLEANUP_MS);

  it("finds git merge's conflict blocks and settled lines (merge-ort, histogram, diff3), CRLF and missing final newlines included", async () => {
    await check(
      fc.property(threeVersions, ({ base, ours, theirs }) => {
        expect(segmentsOf(mergeTexts(base, ours, theirs))).toEqual(segmentsOfGit(repo.merge(base, ours, theirs)));
      }),
      25,
    );
  });

  it("finds git merge's conflict blocks where every line is too frequent for histogram (git's Myers fallback)", async () => {
    await check(
      fc.property(frequentThreeVersions, ({ base, ours, theirs }) => {
        expect(segmentsOf(mergeTexts(base, ours, theirs))).toEqual(segmentsOfGit(repo.merge(base, ours, theirs)));
      }),
      15,
    );
  });

  it("auto-resolution never loses one side's change nor writes a line across the sides' lines", async () => {
    let words = 0;
    await check(
      fc.property(threeVersions, ({ base, ours, theirs }) => {
        for (const block of mergeTexts(base, ours, theirs).blocks) {
          const r = autoResolve(block);
          if (!r) continue;
          if (r.rule === "identical") expect(textOf(r)).toBe(textOf(block.ours));
          if (r.rule === "one-sided") expect(textOf(r)).toBe(textOf(block[r.taken!]));
          if (r.rule !== "words") continue;
          words++;
          expect(
            wordMergeFault(block, r),
            JSON.stringify({ base: textOf(block.base), ours: textOf(block.ours), theirs: textOf(block.theirs), result: textOf(r) }),
          ).toBeNull();
        }
      }),
      400,
    );
    expect(words).toBeGreaterThan(0);
  });

  it("the check catches the word merge of issue 20 (theirs' new line merged into ours' changed one)", () => {
    const side = (text: string) => ({ start: 0, ...splitText(text) });
    const block = { base: side("c 3\n"), ours: side("zz 3\n"), theirs: side("c 0\nc 3\n") };
    const wrong: AutoResolution = { ...splitText("zz 0\nc 3\n"), rule: "words" };
    expect(wordMergeFault(block, wrong)).toMatch(/not in the result/);
    expect(autoResolve(block)).toBeNull();
  });
});
