import { beforeAll, describe, expect, it } from "vitest";
import { initHash } from "../../src/core/hash.js";
import { renderMerged } from "../../src/core/merge/markers.js";
import { splitText } from "../../src/core/text.js";
import {
  type StageTexts,
  allowedBy,
  autoModeOf,
  blockViews,
  classify,
  firstMarkerLeft,
  locate,
  renderWhole,
  rewriteWorktree,
  stageMerge,
} from "../../src/git/conflicts-model.js";
import { type MergeAttributes, type UnmergedPath, parseUnmerged } from "../../src/git/conflicts-stages.js";

/** Pure parts of the conflict tools, on strings. */

const lines = (...ls: string[]) => ls.map((l) => `${l}\n`).join("");
const PLAIN: MergeAttributes = { markerSize: 7, merge: "", filter: false };
function texts(base: string, ours: string, theirs: string): StageTexts {
  return { base: splitText(base), ours: splitText(ours), theirs: splitText(theirs) };
}
const labels = { ours: "HEAD", base: "base", theirs: "topic" };

beforeAll(initHash);

describe("parseUnmerged and classify", () => {
  it("reads ls-files -u / merge-tree stage lines, paths with spaces and tabs included", () => {
    const oid = "a".repeat(40);
    const out = `100644 ${oid} 1\tdir/a b.txt\u0000100644 ${oid} 2\tdir/a b.txt\u0000100755 ${oid} 3\tdir/a b.txt\u0000100644 ${oid} 2\tgone\tx\u0000`;
    expect(parseUnmerged(out)).toEqual([
      { path: "dir/a b.txt", base: { mode: "100644", oid }, ours: { mode: "100644", oid }, theirs: { mode: "100755", oid } },
      { path: "gone\tx", ours: { mode: "100644", oid } },
    ]);
  });

  it("tells text conflicts from whole-file ones by stages, modes, attributes and content", () => {
    const blobs = new Map<string, Buffer | null>([
      ["b", Buffer.from("x\n")],
      ["o", Buffer.from("y\n")],
      ["t", Buffer.from("z\n")],
      ["bin", Buffer.from([0, 1, 2])],
      ["big", null],
    ]);
    const e = (b?: string, o?: string, t?: string, mode = "100644"): UnmergedPath => ({
      path: "p",
      ...(b ? { base: { mode, oid: b } } : {}),
      ...(o ? { ours: { mode, oid: o } } : {}),
      ...(t ? { theirs: { mode, oid: t } } : {}),
    });
    expect(classify(e("b", "o", "t"), PLAIN, blobs).kind).toBe("text");
    expect(classify(e(undefined, "o", "t"), PLAIN, blobs).texts?.base).toEqual({ lines: [], eols: [] });
    expect(classify(e("b", undefined, "t"), PLAIN, blobs).kind).toBe("deleted_by_us");
    expect(classify(e("b", "o"), PLAIN, blobs).kind).toBe("deleted_by_them");
    expect(classify(e(undefined, "o"), PLAIN, blobs).kind).toBe("added_by_us");
    expect(classify(e("b"), PLAIN, blobs).kind).toBe("deleted_by_both");
    expect(classify(e("b", "bin", "t"), PLAIN, blobs).kind).toBe("binary");
    expect(classify(e("b", "big", "t"), PLAIN, blobs).kind).toBe("too_large");
    expect(classify(e("b", "o", "t", "160000"), PLAIN, blobs).kind).toBe("submodule");
    expect(classify(e("b", "o", "t", "120000"), PLAIN, blobs).kind).toBe("symlink");
    expect(classify(e("b", "o", "t"), { ...PLAIN, merge: "binary" }, blobs).kind).toBe("binary");
    expect(classify(e("b", "o", "t"), { ...PLAIN, merge: "ours-driver" }, blobs).kind).toBe("merge_driver");
    expect(classify(e("b", "o", "t"), { ...PLAIN, filter: true }, blobs).kind).toBe("filtered");
  });

  it("maps auto_resolve to a mode: word merges only in 'all'", () => {
    expect([autoModeOf(undefined), autoModeOf(true), autoModeOf("safe"), autoModeOf(false)]).toEqual(["all", "all", "safe", "off"]);
    expect(["identical", "one-sided", "whitespace", "words"].map((r) => allowedBy("safe", r as never))).toEqual([true, true, true, false]);
    expect(allowedBy("off", "identical")).toBe(false);
  });
});

describe("locate, blockViews, rewriteWorktree", () => {
  const base = lines("1", "x = 1", "3", "4", "5", "6", "7", "y = 1", "9");
  const ours = lines("1", "x = 2", "3", "4", "5", "6", "7", "y = 2", "9");
  const theirs = lines("1", "x = 3", "3", "4", "5", "6", "7", "y = f(1)", "9");

  it("numbers the blocks left in the worktree and rewrites only the run of the resolved one, reporting where it landed", () => {
    const sm = stageMerge(texts(base, ours, theirs), 7);
    const wt = renderMerged(sm.merge, { markerSize: 7, labels, eol: "\n" });
    const loc = locate(sm, wt.lines, 7);
    expect(blockViews(sm, loc).map((b) => [b.block, b.lines, b.auto?.rule ?? null])).toEqual([
      [1, [2, 8], null],
      [2, [14, 20], null],
    ]);
    const out = rewriteWorktree(sm, wt, loc, new Map([[1, { lines: ["y = 2", "y = f(1)"], eols: ["\n", "\n"] }]]), { labels, eol: "\n", lineEols: "keep" });
    expect(out.lines.slice(0, 8)).toEqual(wt.lines.slice(0, 8)); // block 1's region untouched
    expect(out.landed).toEqual([{ block: 1, start: 13, end: 15 }]);
    expect(out.rewritten).toEqual([{ start: 13, end: 19, newStart: 13, newEnd: 15 }]);
    const after = locate(sm, out.lines, 7);
    expect(after.located.map((l) => l.block)).toEqual([0]);
    expect(after.resolved).toEqual([1]);
    expect(firstMarkerLeft(sm, out.lines, 7)).toBe(1);
  });

  it("with marker-like content, finds git's size-7 regions too and rewrites every run with the longer size", () => {
    const b = lines("=======", "x = 1", "end");
    const sm = stageMerge(texts(b, lines("=======", "x = 2", "end"), lines("=======", "x = 3", "end")), 7);
    expect(sm.markerSize).toBe(8);
    const gitWrote = renderMerged(sm.merge, { markerSize: 7, labels, eol: "\n" });
    const loc = locate(sm, gitWrote.lines, 7);
    expect(loc.located).toHaveLength(1);
    expect(loc.foreign.size).toBe(1);
    expect(firstMarkerLeft(sm, gitWrote.lines, 7)).toBe(1);
    // The content's own "=======" is not a marker left once the block is resolved.
    const resolved = rewriteWorktree(sm, gitWrote, loc, new Map([[0, { lines: ["x = 3"], eols: ["\n"] }]]), { labels, eol: "\n", lineEols: "keep" });
    expect(resolved.lines).toEqual(["=======", "x = 3", "end"]);
    expect(firstMarkerLeft(sm, resolved.lines, 7)).toBeNull();
  });

  it("renderWhole writes the merge anew with the daemon's size, resolutions in place; CRLF when the worktree is", () => {
    const sm = stageMerge(texts(base, ours, theirs), 7);
    const out = renderWhole(sm, new Map([[0, { lines: ["x = 3"], eols: ["\n"] }]]), { labels, eol: "\r\n", lineEols: "file" });
    expect(out.lines[1]).toBe("x = 3");
    expect(out.landed).toEqual([{ block: 0, start: 1, end: 2 }]);
    expect(new Set(out.eols)).toEqual(new Set(["\r\n"]));
    expect(out.lines).toContain("<<<<<<< HEAD");
    expect(out.lines).toContain("||||||| base");
  });

  it("a block whose resolution has no lines lands empty, and the file ending without a newline keeps that", () => {
    const sm = stageMerge(texts(lines("a", "b"), lines("a", "B1"), "a\nB2"), 7);
    const wt = renderMerged(sm.merge, { markerSize: 7, labels, eol: "\n" });
    const loc = locate(sm, wt.lines, 7);
    const out = rewriteWorktree(sm, wt, loc, new Map([[0, { lines: [], eols: [] }]]), { labels, eol: "\n", lineEols: "keep" });
    expect(out.lines).toEqual(["a"]);
    expect(out.landed).toEqual([{ block: 0, start: 1, end: 1 }]);
  });
});
