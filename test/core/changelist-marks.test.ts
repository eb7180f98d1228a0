import { describe, expect, it } from "vitest";
import {
  type FileMarks,
  NO_MARKS,
  decodeMarks,
  encodeMarks,
  listsOfRange,
  markSelection,
  remapMarks,
  renameList,
  selectionOf,
  settleMarks,
} from "../../src/core/changelist-marks.js";
import { FileVersions } from "../../src/core/file-versions.js";
import { type LineDiff, type LineSeq, diffLines } from "../../src/core/line-diff.js";
import { allPieces } from "../../src/core/line-pairs.js";
import { stageLines } from "../../src/core/stage-lines.js";
import { asText, randomEdit, randomFile, rng, seq, text } from "./line-helpers.js";

const HEAD = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n";

/** A worktree version with its diff against HEAD and its marks, and a way to move on to the next version. */
class File {
  constructor(
    readonly head: LineSeq,
    readonly work: LineSeq,
    readonly marks: FileMarks,
  ) {}

  static start(head: string, work: string): File {
    const h = seq(head);
    const w = seq(work);
    return new File(h, w, settleMarks(NO_MARKS, diffLines(h, w), "default"));
  }

  get diff(): LineDiff {
    return diffLines(this.head, this.work);
  }

  mark(sel: { lines?: number[]; ranges?: number[] }, list: string): File {
    return new File(this.head, this.work, markSelection(this.marks, this.diff, sel, list).marks);
  }

  edit(work: string, active = "default"): File {
    const next = seq(work);
    return new File(this.head, next, remapMarks(this.marks, diffLines(this.work, next), diffLines(this.head, next), active));
  }

  /** Each changed line (1-based) with its list, and each pure deletion as `after:N`. */
  lists(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [line, list] of [...this.marks.lines].sort((a, b) => a[0] - b[0])) out[line + 1] = list;
    for (const [at, list] of this.marks.deletions) out[`after:${at}`] = list;
    return out;
  }
}

describe("changelist marks", () => {
  it("puts every change of a file seen for the first time in the active list", () => {
    const f = File.start(HEAD, "one\nTWO\nthree\nfour\nfive\nsix\n");
    expect(f.lists()).toEqual({ 2: "default", "after:6": "default" });
  });

  it("marks single lines, splitting a range at the selection's edge", () => {
    const f = File.start(HEAD, "one\nTWO\nTHREE\nFOUR\nfive\nsix\nseven\neight\n").mark({ lines: [3] }, "feature");
    expect(f.lists()).toEqual({ 2: "default", 3: "feature", 4: "default" });
    expect(listsOfRange(f.marks, f.diff, f.diff.ranges[0])).toEqual([
      { list: "default", start: 1, end: 2 },
      { list: "feature", start: 2, end: 3 },
      { list: "default", start: 3, end: 4 },
    ]);
    expect(selectionOf(f.marks, f.diff, "feature")).toEqual({ lines: [3], ranges: [] });
  });

  it("marks a pure deletion only through its range", () => {
    const f = File.start(HEAD, "one\ntwo\nfive\nsix\nseven\neight\n");
    expect(() => f.mark({ lines: [2, 3] }, "cleanup")).toThrow(expect.objectContaining({ code: "NO_CHANGE" }));
    const g = f.mark({ ranges: [1] }, "cleanup");
    expect(g.lists()).toEqual({ "after:2": "cleanup" });
    expect(selectionOf(g.marks, g.diff, "cleanup")).toEqual({ lines: [], ranges: [1] });
  });

  it("moves a mark down with its lines when lines are inserted above it", () => {
    const f = File.start(HEAD, "one\ntwo\nthree\nfour\nfive\nSIX\nseven\neight\n").mark({ lines: [6] }, "feature");
    const g = f.edit("new a\nnew b\none\ntwo\nthree\nfour\nfive\nSIX\nseven\neight\n");
    expect(g.lists()).toEqual({ 1: "default", 2: "default", 8: "feature" });
  });

  it("keeps a mark on part of a range through an edit above it", () => {
    const f = File.start(HEAD, "one\ntwo\nthree\nFOUR\nFIVE\nSIX\nseven\neight\n").mark({ lines: [5] }, "feature");
    const g = f.edit("zero\none\ntwo\nthree\nFOUR\nFIVE\nSIX\nseven\neight\n");
    expect(g.lists()).toEqual({ 1: "default", 5: "default", 6: "feature", 7: "default" });
  });

  it("moves a pure deletion's mark with its place", () => {
    const f = File.start(HEAD, "one\ntwo\nfive\nsix\nseven\neight\n").mark({ ranges: [1] }, "cleanup");
    expect(f.edit("top\none\ntwo\nfive\nsix\nseven\neight\n").lists()).toEqual({ 1: "default", "after:3": "cleanup" });
  });

  it("drops the mark of a change that is reverted, and a re-done change goes to the active list", () => {
    const f = File.start(HEAD, "one\ntwo\nTHREE\nfour\nfive\nsix\nSEVEN\neight\n").mark({ lines: [3] }, "feature");
    const reverted = f.edit(HEAD.replace("seven", "SEVEN"));
    expect(reverted.lists()).toEqual({ 7: "default" });
    expect(reverted.edit("one\ntwo\nTHREE\nfour\nfive\nsix\nSEVEN\neight\n", "other").lists()).toEqual({ 3: "other", 7: "default" });
  });

  it("gives a new change inside or next to a marked range that range's list", () => {
    const f = File.start(HEAD, "one\nTWO\nTHREE\nfour\nfive\nsix\nseven\neight\n").mark({ ranges: [1] }, "feature");
    const inside = f.edit("one\nTWO\ninserted\nTHREE\nfour\nfive\nsix\nseven\neight\n");
    expect(inside.lists()).toEqual({ 2: "feature", 3: "feature", 4: "feature" });
    const next = f.edit("one\nTWO\nTHREE\nFOUR\nfive\nsix\nseven\neight\n");
    expect(next.lists()).toEqual({ 2: "feature", 3: "feature", 4: "feature" });
    const far = f.edit("one\nTWO\nTHREE\nfour\nfive\nsix\nSEVEN\neight\n");
    expect(far.lists()).toEqual({ 2: "feature", 3: "feature", 7: "default" });
  });

  it("keeps the list of a marked line that is edited again, or rewritten with its neighbours", () => {
    const f = File.start(HEAD, "one\ntwo\nTHREE\nFOUR\nfive\nsix\nSEVEN\neight\n").mark({ lines: [4] }, "feature");
    expect(f.edit("one\ntwo\nTHREE\nFOUR!\nfive\nsix\nSEVEN\neight\n").lists()).toEqual({ 3: "default", 4: "feature", 7: "default" });
    // The edit replaces both lines of the split range: each new line takes the nearest list of what it replaced.
    expect(f.edit("one\ntwo\nx3\nx4\nfive\nsix\nSEVEN\neight\n").lists()).toEqual({ 3: "default", 4: "feature", 7: "default" });
  });

  it("turns a marked change into a marked deletion when its lines are deleted", () => {
    const f = File.start(HEAD, "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\n").mark({ lines: [3] }, "feature");
    expect(f.edit("one\ntwo\nfour\nfive\nsix\nseven\neight\n").lists()).toEqual({ "after:2": "feature" });
  });

  it("drops the marks of what a new HEAD committed and keeps the rest (no worktree edit)", () => {
    const work = "one\nTWO\nthree\nfour\nfive\nsix\nSEVEN\neight\n";
    const f = File.start(HEAD, work).mark({ lines: [7] }, "feature");
    const newHead = seq("one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\neight\n");
    const after = remapMarks(f.marks, undefined, diffLines(newHead, f.work), "default");
    expect(new File(newHead, f.work, after).lists()).toEqual({ 2: "default" });
  });

  it("selects exactly one list's changes for staging: two edits of one file become two commits", () => {
    const work = "one\nTWO\nthree\nfour\nfive\nsix\nseven\nEIGHT\nnine\n";
    const f = File.start(HEAD, work).mark({ ranges: [2] }, "tail");
    const v = new FileVersions(f.head, f.head, f.work);
    const first = stageLines(v, selectionOf(f.marks, v.headToWorktree, "tail"));
    expect(text(first)).toBe("one\ntwo\nthree\nfour\nfive\nsix\nseven\nEIGHT\nnine\n");
    // After that commit, the other list's change is the only one left.
    const committed = new File(first, f.work, remapMarks(f.marks, undefined, diffLines(first, f.work), "default"));
    expect(committed.lists()).toEqual({ 2: "default" });
    const v2 = new FileVersions(first, first, f.work);
    expect(text(stageLines(v2, selectionOf(committed.marks, v2.headToWorktree, "default")))).toBe(work);
  });

  it("renames lists and round-trips through JSON", () => {
    const f = File.start(HEAD, "one\nTWO\nTHREE\nfour\nfive\nsix\nseven\n").mark({ lines: [3] }, "feature");
    const renamed = renameList(f.marks, "feature", "ui");
    expect(new File(f.head, f.work, renamed).lists()).toEqual({ 2: "default", 3: "ui", "after:7": "default" });
    const json = encodeMarks(renamed);
    expect(json).toEqual({
      lines: [
        [1, 2, "default"],
        [2, 3, "ui"],
      ],
      deletions: [[7, "default"]],
    });
    expect(decodeMarks(JSON.parse(JSON.stringify(json)))).toEqual(renamed);
  });

  it("names every change and nothing else after any edit", () => {
    for (let s = 1; s <= 150; s++) {
      const r = rng(7000 + s);
      const head = seq(asText(randomFile(r, 25)));
      let work = seq(asText(randomEdit(r, head.lines as string[])));
      let marks = settleMarks(NO_MARKS, diffLines(head, work), "default");
      const d = diffLines(head, work);
      if (d.ranges.length) marks = markSelection(marks, d, { ranges: [d.ranges[0].id] }, "first").marks;
      for (let step = 0; step < 3; step++) {
        const next = seq(asText(randomEdit(r, work.lines as string[])));
        const nd = diffLines(head, next);
        marks = remapMarks(marks, diffLines(work, next), nd, "default");
        const pieces = allPieces(nd);
        const keys = new Set([...marks.lines.keys()].map((k) => `l${k}`).concat([...marks.deletions.keys()].map((k) => `d${k}`)));
        const expected = new Set(pieces.map((p) => (p.newStart < p.newEnd ? `l${p.newStart}` : `d${p.newStart}`)));
        expect([s, step, [...keys].sort()]).toEqual([s, step, [...expected].sort()]);
        work = next;
      }
    }
  });
});
