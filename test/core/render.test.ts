import { applyPatch } from "diff";
import { describe, expect, it } from "vitest";
import { type Edit, applyEdits } from "../../src/core/edits.js";
import { initHash, tagOf } from "../../src/core/hash.js";
import {
  EMPTY_DOC,
  MAX_REGION_LINES,
  capDiff,
  changedSpans,
  docDiff,
  lineShifts,
  opShifts,
  renderRange,
  renderRegions,
  renderShifts,
  unifiedDiff,
} from "../../src/core/render.js";
import { parseText, serialize } from "../../src/core/text.js";
import { LineTags } from "../../src/core/line-tags.js";

await initHash();

function edit(text: string, edits: Edit[]) {
  const bytes = Buffer.from(text);
  const old = parseText(bytes, "f");
  const { doc, ops } = applyEdits(old, new LineTags(bytes).all(), edits);
  const windowed = docDiff("f.txt", old, doc);
  return { old, after: serialize(doc).toString(), windowed, ops, doc };
}

const numbered = (n: number, last = "\n") => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + last;
const tagOfLine = (text: string, n: number) => `${n}:${new LineTags(Buffer.from(text)).all()[n - 1]}`;

describe("docDiff of a batch", () => {
  it("is the whole-document diff, whatever the edits: far apart, close together, at the top and at the end", () => {
    const text = numbered(200);
    const { after, windowed } = edit(text, [
      { type: "insert", endline: tagOfLine(text, 1), content: "top" },
      { type: "replace", startline: tagOfLine(text, 50), content: "fifty" },
      { type: "delete", startline: tagOfLine(text, 54), endline: tagOfLine(text, 55) },
      { type: "replace", startline: tagOfLine(text, 120), endline: tagOfLine(text, 122), content: "x\ny" },
      { type: "insert", startline: tagOfLine(text, 200), content: "end" },
    ]);
    expect(windowed.diff).toBe(unifiedDiff("f.txt", text, after).diff);
    expect(windowed.hunks.map((h) => [h.oldStart, h.oldLines, h.newStart, h.newLines])).toEqual([
      [1, 3, 1, 4],
      [47, 12, 48, 10],
      [117, 9, 116, 8],
      [198, 3, 196, 4],
    ]);
    expect(applyPatch(text, windowed.diff)).toBe(after);
  });

  it("gives a change beside blank lines its trailing context, where git's slide puts it (issue 20)", () => {
    const text = "a\nb\n\n\n\nc\nd\ne\n";
    const { windowed } = edit(text, [{ type: "replace", startline: tagOfLine(text, 2), content: "" }]);
    // git diff --histogram, byte for byte.
    expect(windowed.diff).toBe("--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,5 @@\n a\n-b\n+\n \n \n \n");
  });

  it("marks a missing final newline like a whole-file diff", () => {
    const text = numbered(10, "");
    const { after, windowed } = edit(text, [{ type: "replace", startline: tagOfLine(text, 10), content: "ten" }]);
    expect(windowed.diff).toContain("\\ No newline at end of file");
    expect(windowed.diff).toBe(unifiedDiff("f.txt", text, after).diff);
  });

  it("starts with file headers", () => {
    const text = numbered(3);
    expect(edit(text, [{ type: "delete", startline: tagOfLine(text, 2) }]).windowed.diff).toMatch(/^--- a\/f\.txt\n\+\+\+ b\/f\.txt\n@@ -1,3 \+1,2 @@/);
  });

  it("keeps a CRLF file's \\r and a BOM on the first line", () => {
    const text = "\ufeffa\r\nb\r\nc\r\n";
    const { after, windowed } = edit(text, [{ type: "replace", startline: tagOfLine(text, 1), content: "A" }]);
    expect(windowed.diff).toContain("-\ufeffa\r\n+\ufeffA\r\n b\r\n");
    expect(applyPatch(text, windowed.diff)).toBe(after);
    const bomOnly = docDiff("f.txt", { bom: true, lines: [], eols: [] }, { bom: true, lines: ["a"], eols: ["\n"] }).diff;
    expect(bomOnly).toBe("--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-\ufeff\n\\ No newline at end of file\n+\ufeffa\n");
  });

  it("diffs a creation from the empty document", () => {
    const doc = parseText(Buffer.from("x\r\ny"), "f");
    expect(docDiff("f.txt", EMPTY_DOC, doc).diff).toContain("@@ -0,0 +1,2 @@\n+x\r\n+y\n\\ No newline at end of file");
    expect(docDiff("f.txt", doc, EMPTY_DOC).diff).toContain("@@ -1,2 +0,0 @@\n-x\r\n-y\n\\ No newline at end of file");
  });
});

describe("capDiff", () => {
  it("leaves a short diff alone and cuts a long one at the last whole hunk that fits", () => {
    const text = numbered(2000);
    const after = text.replace(/line (\d+)0\n/g, "LINE $10\n");
    const { diff } = unifiedDiff("f", text, after);
    expect(capDiff(diff, diff.length)).toEqual({ diff, truncated: false });
    const cut = capDiff(diff, 1000);
    expect(cut.truncated).toBe(true);
    expect(cut.diff.length).toBeLessThanOrEqual(1000);
    expect(diff.startsWith(cut.diff)).toBe(true);
    expect(diff.slice(cut.diff.length)).toMatch(/^@@ /);
    // What is left is still a patch: it applies its hunks.
    expect(applyPatch(text, cut.diff)).not.toBe(false);
  });

  it("cuts one huge hunk at a line end", () => {
    const { diff } = unifiedDiff("f", "", numbered(1000));
    const cut = capDiff(diff, 500);
    expect(cut.diff.endsWith("\n")).toBe(true);
    expect(cut.diff.length).toBeLessThanOrEqual(500);
  });
});

describe("opShifts", () => {
  it("moves old lines by the edits themselves, where a diff aligns equal lines otherwise", () => {
    // Line 1 of four equal lines becomes three: the caller's old lines 2-4 are now 4-6. A diff of the two versions
    // sees two lines added at the end and nothing moved, so an anchor moved by it would land inside the new block.
    const text = "a\na\na\na\n";
    const { old, windowed, ops } = edit(text, [{ type: "replace", startline: tagOfLine(text, 1), content: "a\na\na" }]);
    expect(opShifts(ops, old.lines.length)).toEqual([{ from: 2, to: 4, by: 2 }]);
    expect(lineShifts(windowed.hunks, old.lines.length)).toEqual([]);
  });

  it("agrees with the diff's shifts where the alignment is unambiguous", () => {
    const text = numbered(100);
    const { old, windowed, ops } = edit(text, [
      { type: "insert", startline: tagOfLine(text, 10), content: "a\nb\nc" },
      { type: "replace", startline: tagOfLine(text, 50), content: "fifty" },
      { type: "delete", startline: tagOfLine(text, 70), endline: tagOfLine(text, 73) },
    ]);
    expect(opShifts(ops, old.lines.length)).toEqual(lineShifts(windowed.hunks, old.lines.length));
  });
});

describe("lineShifts", () => {
  it("says how old line numbers outside the changes moved, merged across changed lines", () => {
    const text = numbered(100);
    const { old, doc, windowed } = edit(text, [
      { type: "insert", startline: tagOfLine(text, 10), content: "a\nb\nc" },
      { type: "replace", startline: tagOfLine(text, 50), content: "fifty" },
      { type: "delete", startline: tagOfLine(text, 70), endline: tagOfLine(text, 73) },
    ]);
    const shifts = lineShifts(windowed.hunks, old.lines.length);
    expect(shifts).toEqual([
      { from: 11, to: 69, by: 3 },
      { from: 74, to: 100, by: -1 },
    ]);
    // Every old line the edits did not touch is where a shift says, with its tag.
    for (const { from, to, by } of shifts) {
      for (let n = from; n <= to; n++) if (n !== 50) expect(doc.lines[n + by - 1], `old line ${n}`).toBe(old.lines[n - 1]);
    }
    expect(renderShifts(shifts)).toBe("moved: old lines 11-69 → 14-72, 74-100 → 73-99");
  });

  it("leaves out lines that did not move, and separates equal shifts they stand between", () => {
    const text = numbered(40);
    const { old, windowed } = edit(text, [
      { type: "insert", startline: tagOfLine(text, 5), content: "x" },
      { type: "delete", startline: tagOfLine(text, 10) },
      { type: "insert", startline: tagOfLine(text, 30), content: "y" },
    ]);
    expect(lineShifts(windowed.hunks, old.lines.length)).toEqual([
      { from: 6, to: 9, by: 1 },
      { from: 31, to: 40, by: 1 },
    ]);
  });

  it("has nothing to say when no line moved", () => {
    const text = numbered(10);
    const { old, windowed } = edit(text, [{ type: "replace", startline: tagOfLine(text, 5), content: "five" }]);
    expect(lineShifts(windowed.hunks, old.lines.length)).toEqual([]);
    expect(renderShifts([])).toBe("");
  });

  it("works from a whole-content diff too", () => {
    const { hunks } = unifiedDiff("f", numbered(20), numbered(20).replace("line 3\n", ""));
    expect(lineShifts(hunks, 20)).toEqual([{ from: 4, to: 20, by: -1 }]);
  });
});

describe("changed regions", () => {
  it("renders each changed region with new tags and two lines of context, merging close ones", () => {
    const text = numbered(20);
    const { doc, ops } = edit(text, [
      { type: "replace", startline: tagOfLine(text, 5), content: "five" },
      { type: "replace", startline: tagOfLine(text, 8), content: "eight" },
      { type: "delete", startline: tagOfLine(text, 16) },
    ]);
    const spans = ops.map((o) => ({ from: o.newStart, to: o.newStart + o.added.length }));
    const out = renderRegions(doc.lines, (i) => tagOf(doc.lines[i]), spans);
    expect(out.split("\n")).toEqual([
      `3|${tagOf("line 3")} line 3`,
      `4|${tagOf("line 4")} line 4`,
      `5|${tagOf("five")} five`,
      `6|${tagOf("line 6")} line 6`,
      `7|${tagOf("line 7")} line 7`,
      `8|${tagOf("eight")} eight`,
      `9|${tagOf("line 9")} line 9`,
      `10|${tagOf("line 10")} line 10`,
      "…",
      `14|${tagOf("line 14")} line 14`,
      `15|${tagOf("line 15")} line 15`,
      `16|${tagOf("line 17")} line 17`,
      `17|${tagOf("line 18")} line 18`,
    ]);
  });

  it("finds the changed spans of the new file from diff hunks", () => {
    const { hunks } = unifiedDiff("f", numbered(10), numbered(10).replace("line 3\n", "three\nmore\n").replace("line 8\n", ""));
    expect(changedSpans(hunks)).toEqual([
      { from: 2, to: 4 },
      { from: 8, to: 8 },
    ]);
  });

  it("renders a window as N|TAG content", () => {
    expect(renderRange(["a", "b"], (i) => ["AAAA", "BBBB"][i], 0, 2)).toBe("1|AAAA a\n2|BBBB b");
  });
});

describe("bounded diffs", () => {
  it("gives unrelated large versions one whole-replacement hunk, still a correct patch", () => {
    const a = Array.from({ length: 20_000 }, (_, i) => `a${i}`).join("\n") + "\n";
    const b = Array.from({ length: 20_000 }, (_, i) => `b${i}`).join("\n");
    const { diff, hunks } = unifiedDiff("f", a, b);
    expect(hunks).toHaveLength(1);
    expect(hunks[0]).toMatchObject({ oldStart: 1, oldLines: 20_000, newStart: 1, newLines: 20_000 });
    expect(applyPatch(a, diff)).toBe(b);
  });

  it("renders at most MAX_REGION_LINES lines and says there is more", () => {
    const lines = Array.from({ length: MAX_REGION_LINES + 10 }, (_, i) => `x${i}`);
    const out = renderRegions(lines, () => "0000", [{ from: 0, to: lines.length }]).split("\n");
    expect(out).toHaveLength(MAX_REGION_LINES + 1);
    expect(out[out.length - 1]).toContain(`more changes from line ${MAX_REGION_LINES + 1}`);
    const exact = renderRegions(lines.slice(0, MAX_REGION_LINES), () => "0000", [{ from: 0, to: MAX_REGION_LINES }]);
    expect(exact).not.toContain("more changes");
  });
});
