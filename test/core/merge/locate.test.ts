import { describe, expect, it } from "vitest";
import { locateBlocks, rewriteRuns } from "../../../src/core/merge/locate.js";
import { chooseMarkerSize, renderMerged } from "../../../src/core/merge/markers.js";
import { type Lines, type MergeResult, mergeTexts } from "../../../src/core/merge/three-way.js";
import { splitText } from "../../../src/core/text.js";
import { realMerge } from "./git-ref.js";

const LABELS = { ours: "HEAD", base: "base", theirs: "topic" };
const text = (f: Lines) => f.lines.map((l, i) => l + f.eols[i]).join("");

/**
 * Three conflicts more than three lines apart (git's "merge" style joins closer ones): a plain one; one whose sides share
 * four lines between their changes (git splits it in two regions); one at the end.
 */
const GAP = "m1\nm2\nm3\nm4\n";
const SHARED = "x1\nx2\nx3\nx4\n";
const BASE = `start\nold one\n${GAP}E\n${GAP}last\n`;
const OURS = `start\nours one\n${GAP}A\n${SHARED}B\n${GAP}ours last\n`;
const THEIRS = `start\ntheirs one\n${GAP}C\n${SHARED}D\n${GAP}theirs last\n`;
/** The same conflicts closer together: git's "merge" style writes them as one region. */
const CLOSE = ["start\nold one\nm\nE\nm\nlast\n", "start\nours one\nm\nA\nX\nB\nm\nours last\n", "start\ntheirs one\nm\nC\nX\nD\nm\ntheirs last\n"] as const;

/** Replaces each located block's span in the worktree with what `choose` gives for it, last first. */
function resolveAll(worktree: string, merge: MergeResult, size: number, choose: (block: number) => Lines): string {
  const doc = splitText(worktree);
  const { located } = locateBlocks(merge, doc.lines, size);
  for (const loc of [...located].reverse()) {
    const r = choose(loc.block);
    doc.lines.splice(loc.start, loc.end - loc.start + 1, ...r.lines);
    doc.eols.splice(loc.start, loc.end - loc.start + 1, ...r.eols);
  }
  return text(doc);
}

describe("locateBlocks on a file the daemon wrote", () => {
  const m = mergeTexts(BASE, OURS, THEIRS);
  const size = chooseMarkerSize([BASE, OURS, THEIRS].map((t) => splitText(t).lines));
  const out = renderMerged(m, { markerSize: size, labels: LABELS, eol: "\n" });

  it("finds one region per block, where it wrote them", () => {
    expect(m.blocks).toHaveLength(3);
    const found = locateBlocks(m, out.lines, size);
    expect(found.located).toEqual(out.regions.map((r) => ({ block: r.block, start: r.start, end: r.end, group: [r.block], regions: 1, edited: false })));
    expect(found).toMatchObject({ resolved: [], unmatched: [], stray: [] });
  });

  it("does not list a block the user resolved in the worktree, and finds the others where they moved", () => {
    const lines = [...out.lines];
    const second = out.regions[1];
    lines.splice(second.start, second.end - second.start + 1, "resolved by hand");
    const found = locateBlocks(m, lines, size);
    expect(found.resolved).toEqual([1]);
    expect(found.located.map((l) => l.block)).toEqual([0, 2]);
    const shift = second.end - second.start;
    expect(found.located[1]).toMatchObject({ start: out.regions[2].start - shift, end: out.regions[2].end - shift });
  });

  it("marks a region edited by hand inside its markers as edited, still listed with its markers' lines", () => {
    const lines = [...out.lines];
    lines[out.regions[0].start + 1] = "ours one, edited";
    const found = locateBlocks(m, lines, size);
    expect(found.located[0]).toEqual({ block: 0, start: out.regions[0].start, end: out.regions[0].end, group: [0], regions: 1, edited: true });
    expect(found.unmatched).toEqual([]);
  });

  it("reports the markers of a half-deleted region as stray", () => {
    const lines = out.lines.filter((_, i) => i !== out.regions[2].end);
    const found = locateBlocks(m, lines, size);
    expect(found.located.map((l) => l.block)).toEqual([0, 1]);
    expect(found.stray.length).toBeGreaterThan(0);
    expect(found.stray).toContain(out.regions[2].start);
  });
});

describe("locateBlocks on a file git wrote", () => {
  for (const style of ["merge", "diff3", "zdiff3"] as const) {
    it(`maps the stage merge onto git's ${style}-style regions, whatever git trimmed or split`, () => {
      const git = realMerge(BASE, OURS, THEIRS, { style });
      const m = mergeTexts(git.base, git.ours, git.theirs);
      expect(m.blocks).toHaveLength(3);
      const found = locateBlocks(m, splitText(git.worktree).lines, 7);
      expect(found.located.map((l) => l.block)).toEqual([0, 1, 2]);
      expect(found).toMatchObject({ resolved: [], unmatched: [], stray: [] });
      if (style === "merge") expect(found.located[1].regions).toBe(2); // A/C and B/D, with x1-x4 shared between them
      for (const take of ["ours", "theirs"] as const) {
        const expected = renderMerged(m, { markerSize: 7, labels: LABELS, eol: "\n", resolutions: m.blocks.map((b) => b[take]) });
        expect(resolveAll(git.worktree, m, 7, (b) => m.blocks[b][take])).toBe(text(expected));
      }
    });
  }

  it("finds the blocks git joined into one region as a group sharing its run", () => {
    const git = realMerge(...CLOSE, { style: "merge" });
    const m = mergeTexts(git.base, git.ours, git.theirs);
    expect(m.blocks).toHaveLength(3);
    const lines = splitText(git.worktree).lines;
    const found = locateBlocks(m, lines, 7);
    expect(found.located.map((l) => [l.block, l.start, l.end, l.group])).toEqual([0, 1, 2].map((b) => [b, 1, lines.length - 1, [0, 1, 2]]));
  });

  it("resolves one block of a joined group by rewriting the run, leaving its neighbours one region each", () => {
    const git = realMerge(...CLOSE, { style: "merge" });
    const m = mergeTexts(git.base, git.ours, git.theirs);
    const doc = splitText(git.worktree);
    const opts = { markerSize: 7, labels: LABELS, eol: "\n" as const };
    const rewritten = rewriteRuns(m, doc, locateBlocks(m, doc.lines, 7).located, { ...opts, resolutions: [undefined, m.blocks[1].theirs] });
    expect(text(rewritten)).toBe(text(renderMerged(m, { ...opts, resolutions: [undefined, m.blocks[1].theirs] })));
    const found = locateBlocks(m, rewritten.lines, 7);
    expect(found.located.map((l) => [l.block, l.group])).toEqual([
      [0, [0]],
      [2, [2]],
    ]);
    expect(found.resolved).toEqual([1]);
  });

  it("rewrites git's regions with the daemon's longer markers, keeping what the user resolved by hand", () => {
    const git = realMerge(BASE, OURS, THEIRS, { style: "merge" });
    const m = mergeTexts(git.base, git.ours, git.theirs);
    const doc = splitText(git.worktree);
    const first = locateBlocks(m, doc.lines, 7).located[0];
    doc.lines.splice(first.start, first.end - first.start + 1, "mine");
    doc.eols.splice(first.start, first.end - first.start + 1, "\n");
    const rewritten = rewriteRuns(m, doc, locateBlocks(m, doc.lines, 7).located, { markerSize: 9, labels: LABELS, eol: "\n" });
    expect(text(rewritten)).toBe(text(renderMerged(m, { markerSize: 9, labels: LABELS, eol: "\n", resolutions: [{ lines: ["mine"], eols: ["\n"] }] })));
    expect(locateBlocks(m, rewritten.lines, 9).located.map((l) => l.block)).toEqual([1, 2]);
  });

  it("calls a split block whose second region the user resolved edited, not resolved", () => {
    const git = realMerge(BASE, OURS, THEIRS, { style: "merge" });
    const m = mergeTexts(git.base, git.ours, git.theirs);
    const lines = splitText(git.worktree).lines;
    const second = locateBlocks(m, lines, 7).located[1];
    const lastOpen = lines.lastIndexOf("<<<<<<< HEAD", second.end);
    lines.splice(lastOpen, second.end - lastOpen + 1, "B or D");
    const found = locateBlocks(m, lines, 7);
    expect(found.located.map((l) => [l.block, l.edited])).toEqual([
      [0, false],
      [1, true],
      [2, false],
    ]);
  });

  it("ignores a marker-like region in the settled content of a file git wrote with its 7-character markers", () => {
    const fake = "<<<<<<< example\nfoo\n=======\nbar\n>>>>>>> example\n";
    const git = realMerge(`${fake}x\n`, `${fake}ours\n`, `${fake}theirs\n`);
    const m = mergeTexts(git.base, git.ours, git.theirs);
    const found = locateBlocks(m, splitText(git.worktree).lines, 7);
    expect(found.located).toEqual([{ block: 0, start: 5, end: 9, group: [0], regions: 1, edited: false }]);
    expect(found.unmatched.map((r) => [r.start, r.end])).toEqual([[0, 4]]);
  });

  it("maps a CRLF worktree onto LF index stages (the eol=crlf attribute)", () => {
    const git = realMerge(BASE, OURS, THEIRS, { style: "diff3", attributes: "f.txt text eol=crlf\n" });
    expect(git.worktree).toContain("\r\n");
    expect(git.ours).not.toContain("\r\n");
    const m = mergeTexts(git.base, git.ours, git.theirs);
    expect(locateBlocks(m, splitText(git.worktree).lines, 7).located).toHaveLength(3);
  });
});
