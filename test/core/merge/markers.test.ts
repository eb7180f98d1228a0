import { describe, expect, it } from "vitest";
import {
  GIT_MARKER_SIZE,
  chooseMarkerSize,
  detectMarkerSize,
  isMarker,
  markerLine,
  parseMarkerRegions,
  renderMerged,
} from "../../../src/core/merge/markers.js";
import { mergeTexts } from "../../../src/core/merge/three-way.js";
import { splitText } from "../../../src/core/text.js";
import { gitMergeFile, realMerge } from "./git-ref.js";

const LABELS = { ours: "ours", base: "base", theirs: "theirs" };
const text = (f: { lines: string[]; eols: string[] }) => f.lines.map((l, i) => l + f.eols[i]).join("");
const slice = (lines: string[], r: { from: number; to: number }) => lines.slice(r.from, r.to);

/** Content whose lines look like git's 7-character markers, in the settled part and inside both conflicting sides. */
const MARKERY = {
  base: "intro\n<<<<<<< HEAD\nkeep\n=======\nold\n>>>>>>> topic\nend\n",
  ours: "intro\n<<<<<<< HEAD\nkeep\n=======\nours\n=======\n>>>>>>> topic\nend\n",
  theirs: "intro\n<<<<<<< HEAD\nkeep\n=======\ntheirs\n>>>>>>> topic\n|||||||\nend\n",
};

describe("chooseMarkerSize", () => {
  it("is git's 7 when no line starts like a marker", () => {
    expect(chooseMarkerSize([["a", "<<<<<< six", "b ======="]])).toBe(GIT_MARKER_SIZE);
  });

  it("is one longer than the longest marker-like run at a line start in any version", () => {
    expect(chooseMarkerSize([["<<<<<<<"], ["x"]])).toBe(8);
    expect(chooseMarkerSize([["a"], ["=========="], ["|||||||| x"]])).toBe(11);
    expect(chooseMarkerSize([[">>>>>>>>> y"]])).toBe(10);
  });

  it("respects a larger minimum (the conflict-marker-size attribute)", () => {
    expect(chooseMarkerSize([["<<<<<<<"]], 10)).toBe(10);
    expect(chooseMarkerSize([["<<<<<<<<<<<<"]], 10)).toBe(13);
  });
});

describe("marker lines", () => {
  it("are the run, then a space and the label", () => {
    expect(markerLine("ours", 7, "HEAD")).toBe("<<<<<<< HEAD");
    expect(markerLine("separator", 9, "ignored")).toBe("=========");
    expect(markerLine("theirs", 8)).toBe(">>>>>>>>");
  });

  it("are recognised only at exactly their size", () => {
    expect(isMarker("<<<<<<< HEAD", "ours", 7)).toBe(true);
    expect(isMarker("<<<<<<<", "ours", 7)).toBe(true);
    expect(isMarker("<<<<<<<< HEAD", "ours", 7)).toBe(false);
    expect(isMarker("<<<<<<<x", "ours", 7)).toBe(false);
    expect(isMarker("=======", "separator", 8)).toBe(false);
  });
});

describe("renderMerged", () => {
  it("writes what git merge-file writes with the same marker size", () => {
    const [b, o, t] = ["a\nb\nc\n", "a\nB1\nc\n", "a\nB2\nc\n"];
    const out = renderMerged(mergeTexts(b, o, t), { markerSize: 9, labels: LABELS, eol: "\n" });
    expect(text(out)).toBe(gitMergeFile(b, o, t, { markerSize: 9 }).text);
    expect(out.regions).toEqual([{ block: 0, start: 1, end: 7 }]);
  });

  it("writes resolutions in place of their blocks and reports where the remaining regions are", () => {
    const m = mergeTexts("a\nb\nc\nd\ne\n", "A1\nb\nc\nd\nE1\n", "A2\nb\nc\nd\nE2\n");
    expect(m.blocks).toHaveLength(2);
    const out = renderMerged(m, { markerSize: 7, labels: LABELS, eol: "\n", resolutions: [{ lines: ["A"], eols: ["\n"] }] });
    expect(out.lines.slice(0, 4)).toEqual(["A", "b", "c", "d"]);
    expect(out.regions).toEqual([{ block: 1, start: 4, end: 10 }]);
    expect(out.lines[out.regions[0].start]).toBe("<<<<<<< ours");
    expect(out.lines[out.regions[0].end]).toBe(">>>>>>> theirs");
  });

  it("gives a line without a terminator one when it is no longer last, and CRLF markers in a CRLF file", () => {
    const m = mergeTexts("a\r\nb", "a\r\nB1", "a\r\nB2");
    const out = renderMerged(m, { markerSize: 7, labels: LABELS, eol: "\r\n" });
    expect(text(out)).toBe("a\r\n<<<<<<< ours\r\nB1\r\n||||||| base\r\nb\r\n=======\r\nB2\r\n>>>>>>> theirs\r\n");
  });

  it("can give every line the file's line ending (index and worktree differ in line endings)", () => {
    const m = mergeTexts("a\nb\n", "a\nB1\n", "a\nB2\n");
    const out = renderMerged(m, { markerSize: 7, labels: LABELS, eol: "\r\n", lineEols: "file" });
    expect(new Set(out.eols)).toEqual(new Set(["\r\n"]));
  });
});

describe("parseMarkerRegions", () => {
  it("finds the regions renderMerged wrote, with each part's lines", () => {
    const m = mergeTexts("a\nb\nc\nd\ne\n", "A1\nb\nc\nd\nE1\n", "A2\nb\nc\nd\nE2\n");
    const out = renderMerged(m, { markerSize: 7, labels: LABELS, eol: "\n" });
    const { regions, stray } = parseMarkerRegions(out.lines, 7);
    expect(stray).toEqual([]);
    expect(regions.map((r) => [r.start, r.end])).toEqual(out.regions.map((r) => [r.start, r.end]));
    expect(regions.map((r) => [slice(out.lines, r.ours), slice(out.lines, r.base!), slice(out.lines, r.theirs)])).toEqual(
      m.blocks.map((b) => [b.ours.lines, b.base.lines, b.theirs.lines]),
    );
    expect(regions[0].labels).toEqual(LABELS);
  });

  it("reads git's merge style (no base part)", () => {
    const { regions } = parseMarkerRegions(["x", "<<<<<<< HEAD", "a", "=======", "b", ">>>>>>> topic", "y"], 7);
    expect(regions).toEqual([
      { start: 1, end: 5, ours: { from: 2, to: 3 }, base: null, theirs: { from: 4, to: 5 }, labels: { ours: "HEAD", base: null, theirs: "topic" } },
    ]);
  });

  it("reports markers that belong to no complete region as stray", () => {
    const lines = ["<<<<<<< HEAD", "a", "=======", "b", "x", "<<<<<<< HEAD", "c", "=======", "d", ">>>>>>> t", "=======", ">>>>>>> t"];
    const { regions, stray } = parseMarkerRegions(lines, 7);
    expect(regions.map((r) => [r.start, r.end])).toEqual([[5, 9]]);
    expect(stray).toEqual([0, 2, 10, 11]);
  });

  it("is safe on content with marker-like lines once the markers are longer than any of them", () => {
    const { base, ours, theirs } = MARKERY;
    const m = mergeTexts(base, ours, theirs);
    expect(m.blocks).toHaveLength(1);
    const size = chooseMarkerSize([base, ours, theirs].map((t) => splitText(t).lines));
    expect(size).toBe(8);
    const out = renderMerged(m, { markerSize: size, labels: LABELS, eol: "\n" });
    const { regions, stray } = parseMarkerRegions(out.lines, size);
    expect(stray).toEqual([]);
    expect(regions).toHaveLength(1);
    expect([slice(out.lines, regions[0].ours), slice(out.lines, regions[0].base!), slice(out.lines, regions[0].theirs)]).toEqual([
      m.blocks[0].ours.lines,
      m.blocks[0].base.lines,
      m.blocks[0].theirs.lines,
    ]);
    // With git's size the same file reads differently: the content's own markers open and close regions.
    const at7 = parseMarkerRegions(out.lines, 7);
    expect(at7.regions.map((r) => [r.start, r.end])).not.toEqual([[regions[0].start, regions[0].end]]);
  });
});

describe("detectMarkerSize", () => {
  it("finds the daemon's longer markers over the content's 7-character ones", () => {
    const { base, ours, theirs } = MARKERY;
    const out = renderMerged(mergeTexts(base, ours, theirs), { markerSize: 8, labels: LABELS, eol: "\n" });
    expect(detectMarkerSize(out.lines)).toBe(8);
  });

  it("finds git's size in a file git wrote, and the conflict-marker-size attribute's", () => {
    const [b, o, t] = ["a\nb\nc\n", "a\nB1\nc\n", "a\nB2\nc\n"];
    expect(detectMarkerSize(splitText(realMerge(b, o, t).worktree).lines)).toBe(7);
    const sized = realMerge(b, o, t, { attributes: "f.txt conflict-marker-size=10\n" });
    expect(sized.worktree).toContain("<<<<<<<<<< HEAD");
    expect(detectMarkerSize(splitText(sized.worktree).lines)).toBe(10);
  });

  it("is null when no region is complete", () => {
    expect(detectMarkerSize(["<<<<<<< HEAD", "a", "======="])).toBeNull();
    expect(detectMarkerSize([])).toBeNull();
  });
});
