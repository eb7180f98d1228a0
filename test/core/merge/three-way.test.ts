import { afterAll, describe, expect, it } from "vitest";
import { renderMerged } from "../../../src/core/merge/markers.js";
import { type MergeResult, mergeTexts } from "../../../src/core/merge/three-way.js";
import { dominantEol } from "../../../src/core/text.js";
import { OrtRepo, diff3Blocks, gitMergeFile, joinLines, randomEdits, randomFile, seeded } from "./git-ref.js";

const blocksOf = (m: MergeResult) => m.blocks.map((b) => [b.ours.lines, b.base.lines, b.theirs.lines]);

/** The merged text rendered as `git merge-file -p --diff3 -L ours -L base -L theirs` writes it. */
function asGitWrites(m: MergeResult): string {
  // git writes a CRLF file's markers with CRLF; the daemon passes the file's dominant line ending.
  const eol = dominantEol(m.chunks.flatMap((c) => (c.kind === "stable" ? c.eols : [...c.ours.eols, ...c.theirs.eols])));
  const out = renderMerged(m, { markerSize: 7, labels: { ours: "ours", base: "base", theirs: "theirs" }, eol });
  return out.lines.map((l, i) => l + out.eols[i]).join("");
}

/** Ordinary merges, each checked byte for byte against git merge-file's diff3 output. */
const CASES: Record<string, [string, string, string]> = {
  "one change each, far apart": ["a\nb\nc\nd\ne\nf\n", "A\nb\nc\nd\ne\nf\n", "a\nb\nc\nd\ne\nF\n"],
  "both change the same line": ["a\nb\nc\n", "a\nB1\nc\n", "a\nB2\nc\n"],
  "identical edits on both sides": ["a\nb\nc\n", "a\nX\nc\n", "a\nX\nc\n"],
  "only ours changed": ["a\nb\nc\n", "a\nB\nc\nd\n", "a\nb\nc\n"],
  "changes on adjacent lines": ["a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n"],
  "two conflicts one line apart": ["a\nb\nc\nd\ne\n", "A1\nb\nC1\nd\ne\n", "A2\nb\nC2\nd\ne\n"],
  "deletion on one side, edit on the other": ["a\nb\nc\n", "a\nc\n", "a\nB\nc\n"],
  "insertions at the same place": ["a\nb\n", "a\nx\nb\n", "a\ny\nb\n"],
  "ours empties the file": ["a\nb\n", "", "a\nB\n"],
  "no final newline on one side": ["a\nb\n", "a\nb", "a\nB\n"],
  "CRLF file": ["a\r\nb\r\nc\r\n", "a\r\nB1\r\nc\r\n", "a\r\nB2\r\nc\r\n"],
  "one side converts CRLF to LF": ["a\r\nb\r\n", "a\nb\n", "a\r\nB\r\n"],
  "a block that spans several of the other side's changes": ["a\nb\nc\nd\ne\n", "a\nX\nY\nZ\ne\n", "a\nB\nc\nD\ne\n"],
  "content with conflict-marker lines": ["<<<<<<< x\na\n=======\n", "<<<<<<< x\nA\n=======\n", "<<<<<<< x\nB\n=======\n"],
};

describe("mergeLines agrees with git merge-file", () => {
  for (const [name, [base, ours, theirs]] of Object.entries(CASES)) {
    it(name, () => {
      const m = mergeTexts(base, ours, theirs);
      const ref = gitMergeFile(base, ours, theirs);
      expect(m.blocks.length).toBe(ref.conflicts);
      expect(asGitWrites(m)).toBe(ref.text);
    });
  }

  it("settles identical and one-sided changes without a block", () => {
    expect(mergeTexts(...CASES["identical edits on both sides"]).blocks).toEqual([]);
    expect(mergeTexts(...CASES["only ours changed"]).chunks).toEqual([{ kind: "stable", lines: ["a", "B", "c", "d"], eols: ["\n", "\n", "\n", "\n"] }]);
  });

  it("gives each side's lines with where they start in that version", () => {
    const m = mergeTexts("a\nb\nc\n", "a\nc\n", "a\nB\nc\n");
    expect(m.blocks).toHaveLength(1);
    const [b] = m.blocks;
    expect(b.base).toEqual({ start: 1, lines: ["b"], eols: ["\n"] });
    expect(b.ours).toEqual({ start: 1, lines: [], eols: [] });
    expect(b.theirs).toEqual({ start: 1, lines: ["B"], eols: ["\n"] });
  });

  it("treats touching changes as one conflict and a shared line between them as two", () => {
    expect(blocksOf(mergeTexts(...CASES["changes on adjacent lines"]))).toEqual([
      [
        ["B", "c"],
        ["b", "c"],
        ["b", "C"],
      ],
    ]);
    expect(blocksOf(mergeTexts(...CASES["two conflicts one line apart"]))).toEqual([
      [["A1"], ["a"], ["A2"]],
      [["C1"], ["c"], ["C2"]],
    ]);
  });

  it("keeps line endings in the comparison and in every chunk", () => {
    const m = mergeTexts(...CASES["CRLF file"]);
    expect(m.chunks[0]).toEqual({ kind: "stable", lines: ["a"], eols: ["\r\n"] });
    expect(m.blocks[0].ours.eols).toEqual(["\r\n"]);
    expect(mergeTexts(...CASES["one side converts CRLF to LF"]).blocks).toHaveLength(1);
  });
});

describe("mergeLines agrees with git merge (merge-ort, histogram diff)", () => {
  const repo = new OrtRepo();
  afterAll(() => repo.cleanup());

  it("where merge-file's Myers diff would place the change elsewhere", () => {
    const base = joinLines(["{", "bar4", "}", "a", "x7"]);
    const ours = joinLines(["a", "{", "}", "chg3", "x7"]);
    const theirs = joinLines(["chg29", "}", "a", "x7", "chg49"]);
    const m = mergeTexts(base, ours, theirs);
    expect(blocksOf(m)).toEqual(diff3Blocks(repo.merge(base, ours, theirs)));
    expect(blocksOf(m)).not.toEqual(diff3Blocks(gitMergeFile(base, ours, theirs).text));
  });

  it("on random edits of code-like files full of repeated lines", () => {
    const rnd = seeded(12);
    let conflicts = 0;
    for (let i = 0; i < 40; i++) {
      const base = randomFile(rnd, 10 + Math.floor(rnd() * 40));
      const ours = joinLines(randomEdits(rnd, base, 1 + Math.floor(rnd() * 5)));
      const theirs = joinLines(randomEdits(rnd, base, 1 + Math.floor(rnd() * 5)));
      const m = mergeTexts(joinLines(base), ours, theirs);
      const ref = repo.merge(joinLines(base), ours, theirs);
      expect(blocksOf(m), `case ${i}`).toEqual(diff3Blocks(ref));
      conflicts += m.blocks.length;
    }
    expect(conflicts).toBeGreaterThan(10);
  });
});
