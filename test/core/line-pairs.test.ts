import { describe, expect, it } from "vitest";
import { type LineDiff, diffLines } from "../../src/core/line-diff.js";
import { MAX_PAIR_SPAN, MIN_SIMILARITY, layoutOf, pairsOf, piecesOf, similarity } from "../../src/core/line-pairs.js";
import { asText, randomEdit, randomFile, rng, seq } from "./line-helpers.js";

const diff = (a: string, b: string) => diffLines(seq(a), seq(b));
const pieces = (d: LineDiff) => d.ranges.flatMap((r) => piecesOf(d, r)).map((p) => ({ new: p.newStart, partner: p.partner, moved: p.moved, old: p.oldLines }));

describe("similarity", () => {
  it("is the share of characters in common words and punctuation, whitespace aside", () => {
    expect(similarity("// init something", "// init variables")).toBeCloseTo(0.4);
    expect(similarity("int i = 0;", "int x = 0;")).toBeCloseTo(12 / 14);
    expect(similarity("const a = 1;", "let b = 2;")).toBeCloseTo(0.25);
    expect(similarity("  foo(a)", "foo(a)")).toBe(1);
    expect(similarity("", "   ")).toBe(1);
    expect(similarity("", "x")).toBe(0);
    expect(similarity("a b", "c d")).toBe(0);
  });
});

describe("pairing inside a modified range", () => {
  it("pairs edited lines by likeness, so staging one of them cannot reorder the block (lazygit #5103)", () => {
    const d = diff(
      "int main() {\n\t// init something\n\tint i = 0;\n\n\treturn 0;\n}\n",
      "int main() {\n\t// init variables\n\tint x = 0;\n\n\treturn 0;\n}\n",
    );
    expect(d.ranges).toHaveLength(1);
    expect(pairsOf(d, d.ranges[0])).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });

  it("pairs by likeness, not position: an inserted line stays unpaired", () => {
    const d = diff("x\nalpha = compute(1);\nbeta = compute(2);\ny\n", "x\nalpha = compute(10);\nlog('hello');\nbeta = compute(20);\ny\n");
    expect(pairsOf(d, d.ranges[0])).toEqual([
      [1, 1],
      [2, 3],
    ]);
    expect(pieces(d)).toEqual([
      { new: 1, partner: 1, moved: false, old: [1] },
      { new: 2, partner: -1, moved: false, old: [] },
      { new: 3, partner: 2, moved: false, old: [2] },
    ]);
  });

  it("keeps pairs in order and takes a line that moved within the range as a moved partner", () => {
    const d = diff("alpha = 1;\nbeta = 2;\ngamma = 3;\n", "gamma = 30;\nalpha = 10;\nbeta = 20;\n");
    expect(pairsOf(d, d.ranges[0])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(pieces(d)).toEqual([
      { new: 0, partner: 2, moved: true, old: [2] },
      { new: 1, partner: 0, moved: false, old: [0] },
      { new: 2, partner: 1, moved: false, old: [1] },
    ]);
  });

  it("pairs in order a gap with as many old lines as new ones, however unlike they are", () => {
    const d = diff("x\nfoo();\nbar();\ny\n", "x\nreturn 1;\nthrow e;\ny\n");
    expect(pairsOf(d, d.ranges[0])).toEqual([]);
    expect(pieces(d)).toEqual([
      { new: 1, partner: 1, moved: false, old: [1] },
      { new: 2, partner: 2, moved: false, old: [2] },
    ]);
  });

  it("gives an unpaired old line to the next new line, or at the end of the range to the last one", () => {
    const d = diff("keep\nfoo();\nbar();\nkeep2\n", "keep\nsomething else entirely\nkeep2\n");
    expect(pieces(d)).toEqual([{ new: 1, partner: -1, moved: false, old: [1, 2] }]);
    const e = diff("a\nrename(x, y);\nunrelated words here\n", "a\nrename(x, z);\n");
    expect(pieces(e)).toEqual([{ new: 1, partner: 1, moved: false, old: [1, 2] }]);
  });

  it("pairs a line whose only change is its terminator with itself", () => {
    const d = diff("a\nb\n", "a\nb");
    expect(pairsOf(d, d.ranges[0])).toEqual([[1, 1]]);
    const crlf = diff("x = 1;\r\ny = 2;\r\n", "x = 10;\ny = 2;\n");
    expect(pairsOf(crlf, crlf.ranges[0])).toEqual([
      [0, 0],
      [1, 1],
    ]);
  });

  it("makes a pure deletion one piece with no worktree line", () => {
    const d = diff("a\nb\nc\nd\n", "a\nd\n");
    expect(pieces(d)).toEqual([{ new: 1, partner: -1, moved: false, old: [1, 2] }]);
    expect(piecesOf(d, d.ranges[0])[0]).toMatchObject({ newStart: 1, newEnd: 1 });
  });

  it("pairs a long rewritten block in chunks, still in order", () => {
    const n = MAX_PAIR_SPAN * 3 + 5;
    const old = Array.from({ length: n }, (_, i) => `value_${i} = read(${i});`);
    const now = old.map((l) => l.replace("read", "load"));
    const d = diffLines(seq(asText(old)), seq(asText(now)));
    expect(d.ranges).toHaveLength(1);
    const pairs = pairsOf(d, d.ranges[0]);
    expect(pairs.length).toBeGreaterThan(n * 0.95);
    for (const [o, j] of pairs) expect(o).toBe(j);
  });

  it("tiles every range with pieces on random edits: one per new line, every old line owned once", () => {
    for (let s = 1; s <= 300; s++) {
      const r = rng(s);
      const a = randomFile(r, Math.floor(r() * 40));
      const d = diffLines(seq(asText(a)), seq(asText(randomEdit(r, a))));
      const problems: string[] = [];
      for (const range of d.ranges) {
        const { pieces: ps, rows } = layoutOf(d, range);
        const owned = ps.flatMap((p) => p.oldLines).sort((x, y) => x - y);
        const expected = Array.from({ length: range.oldEnd - range.oldStart }, (_, k) => range.oldStart + k);
        if (JSON.stringify(owned) !== JSON.stringify(expected)) problems.push(`seed ${s} range ${range.id}: old lines owned ${owned}`);
        if (range.start < range.end && ps.length !== range.end - range.start) problems.push(`seed ${s}: ${ps.length} pieces`);
        for (const p of ps) if (p.partner >= 0 && !p.oldLines.includes(p.partner)) problems.push(`seed ${s}: partner not owned`);
        const pairs = pairsOf(d, range);
        for (let k = 1; k < pairs.length; k++) if (!(pairs[k][0] > pairs[k - 1][0] && pairs[k][1] > pairs[k - 1][1])) problems.push(`seed ${s}: pairs cross`);
        for (const [o, j] of pairs)
          if (similarity(d.old.lines[o], d.new.lines[j]) < MIN_SIMILARITY && d.old.lines[o] !== d.new.lines[j]) problems.push(`seed ${s}: weak pair`);
        // Rows list every line of the range once, each side in order.
        const rowOld = rows.filter((x) => x.old >= 0).map((x) => x.old);
        const rowNew = rows.filter((x) => x.new >= 0).map((x) => x.new);
        if (JSON.stringify(rowOld) !== JSON.stringify(expected)) problems.push(`seed ${s}: rows old`);
        if (rowNew.length !== range.end - range.start || rowNew.some((x, k) => x !== range.start + k)) problems.push(`seed ${s}: rows new`);
      }
      expect(problems).toEqual([]);
    }
  });
});

describe("layoutOf", () => {
  it("keeps each range's layout with its diff: computed once, a diff of the same text computes its own", () => {
    const d = diff("a\nint i = 0;\nb\n", "a\nint x = 0;\nb\n");
    const range = d.ranges[0];
    const layout = layoutOf(d, range);
    expect(layoutOf(d, range)).toBe(layout);
    expect(d.layouts.get(range)).toBe(layout);
    const again = diff("a\nint i = 0;\nb\n", "a\nint x = 0;\nb\n");
    expect(again.layouts.size).toBe(0);
    expect(layoutOf(again, again.ranges[0])).toEqual(layout);
  });
});
