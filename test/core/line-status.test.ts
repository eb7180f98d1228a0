import { describe, expect, it } from "vitest";
import { markSelection, settleMarks } from "../../src/core/changelist-marks.js";
import { tagOf } from "../../src/core/hash.js";
import { interestingLines, lineStatus, requireLines } from "../../src/core/line-status.js";
import { renderWords } from "../../src/core/word-diff.js";
import { versions } from "./line-helpers.js";

/** Each line as [line, change, vs_index.same, index_vs_head.same, vs_index words, index_vs_head words]. */
const brief = (s: ReturnType<typeof lineStatus>) =>
  s.lines.map((l) => [l.line, l.change, l.vs_index.same, l.index_vs_head.same, renderWords(l.vs_index.words), renderWords(l.index_vs_head.words)]);

describe("lineStatus", () => {
  it("shows an unstaged change: the index still has HEAD's line", () => {
    const s = lineStatus(versions("a\nb\nc\n", "a\nb\nc\n", "a\nB\nc\n"));
    expect(brief(s)).toEqual([[2, "modified", false, true, "[-b-]{+B+}", ""]]);
    expect(s.lines[0]).toMatchObject({ tag: tagOf("B"), content: "B", changelist: null });
    expect(s.ranges).toEqual([{ range: 1, kind: "modified", start: 2, end: 2, head_start: 2, head_end: 2, staged: "none", changelist: null }]);
  });

  it("shows a staged change: the index has the line as the worktree has it", () => {
    const s = lineStatus(versions("a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n"));
    expect(brief(s)).toEqual([[2, "modified", true, false, "", "[-b-]{+B+}"]]);
    expect(s.ranges[0].staged).toBe("all");
  });

  it("calls a line byte-identical in all three versions unchanged and staged beside a CRLF blank line (issue 20)", () => {
    const s = lineStatus(versions("x\n\ny\n", "i\nx\n\ny\n", "i\nx\n\r\n\ny\n"));
    expect(brief(s)).toEqual([
      [1, "added", true, false, "", ""],
      [3, "added", false, true, "", ""],
    ]);
    expect(brief(lineStatus(versions("x\n\ny\n", "i\nx\n\ny\n", "i\nx\n\r\n\ny\n"), { lines: [4] }))).toEqual([[4, "unchanged", true, true, "", ""]]);
  });

  it("shows a third version (staged, then edited again) as partial with both word diffs", () => {
    const s = lineStatus(versions("x = 1;\n", "x = 2;\n", "x = 3;\n"));
    expect(brief(s)).toEqual([[1, "modified", false, false, "x = [-2-]{+3+};", "x = [-1-]{+2+};"]]);
    expect(s.ranges[0].staged).toBe("partial");
  });

  it("shows a range with some lines staged as partial", () => {
    const s = lineStatus(versions("a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nB\nC\nd\n"));
    expect(brief(s)).toEqual([
      [2, "modified", true, false, "", "[-b-]{+B+}"],
      [3, "modified", false, true, "[-c-]{+C+}", ""],
    ]);
    expect(s.ranges.map((r) => r.staged)).toEqual(["partial"]);
  });

  it("shows added lines and deletion points, staged or not", () => {
    const unstaged = lineStatus(versions("a\nb\nc\n", "a\nb\nc\n", "a\nc\nnew\n"));
    expect(brief(unstaged)).toEqual([[3, "added", false, true, "", ""]]);
    expect(unstaged.deletions).toEqual([{ after: 1, deleted: [{ head_line: 2, tag: tagOf("b"), content: "b" }], staged: false, changelist: null }]);
    const staged = lineStatus(versions("a\nb\nc\n", "a\nc\nnew\n", "a\nc\nnew\n"));
    expect(staged.deletions[0].staged).toBe(true);
    expect(staged.ranges.map((r) => [r.kind, r.staged])).toEqual([
      ["deleted", "all"],
      ["added", "all"],
    ]);
  });

  it("places an unpaired HEAD line inside a modified range as a deletion point after the line above it", () => {
    const s = lineStatus(versions("x\nrename(a, b);\nunrelated words here\ny\n", "x\nrename(a, b);\nunrelated words here\ny\n", "x\nrename(a, c);\ny\n"));
    expect(brief(s)).toEqual([[2, "modified", false, true, "rename(a, [-b-]{+c+});", ""]]);
    expect(s.deletions).toEqual([
      { after: 2, deleted: [{ head_line: 3, tag: tagOf("unrelated words here"), content: "unrelated words here" }], staged: false, changelist: null },
    ]);
  });

  it("does not call a line that moved within its range a deletion", () => {
    const head = "alpha = 1;\nbeta = 2;\ngamma = 3;\n";
    const s = lineStatus(versions(head, head, "gamma = 30;\nalpha = 10;\nbeta = 20;\n"));
    expect(s.deletions).toEqual([]);
    expect(brief(s)[0]).toEqual([1, "modified", false, true, "gamma = [-3-]{+30+};", ""]);
  });

  it("flags a line whose only change is the final newline", () => {
    const s = lineStatus(versions("a\nb\n", "a\nb\n", "a\nb"));
    expect(s.lines).toEqual([expect.objectContaining({ line: 2, change: "modified", eol_changed: true, vs_index: { same: false, words: [] } })]);
    expect(s.ranges[0].eol_changed).toBe(true);
  });

  it("shows a line the worktree reverted but the index still changes", () => {
    const s = lineStatus(versions("a\nb\n", "a\nB\n", "a\nb\n"));
    expect(interestingLines(versions("a\nb\n", "a\nB\n", "a\nb\n"))).toEqual([1]);
    expect(brief(s)).toEqual([[2, "unchanged", false, false, "[-B-]{+b+}", "[-b-]{+B+}"]]);
    expect(s.ranges).toEqual([]);
  });

  it("shows an untracked file as all added, nothing staged", () => {
    const s = lineStatus(versions("", "", "x\ny\n"));
    expect(brief(s)).toEqual([
      [1, "added", false, true, "", ""],
      [2, "added", false, true, "", ""],
    ]);
    expect(s.ranges[0]).toMatchObject({ kind: "added", staged: "none", head_start: 1, head_end: 0 });
  });

  it("answers for the lines asked, unchanged ones included, with the deletion points next to them", () => {
    const v = versions("a\nb\nc\nd\ne\n", "a\nb\nc\nd\ne\n", "a\nc\nd\nE\n");
    const s = lineStatus(v, { lines: [1, 3] });
    expect(brief(s)).toEqual([
      [1, "unchanged", true, true, "", ""],
      [3, "unchanged", true, true, "", ""],
    ]);
    expect(s.deletions.map((d) => d.after)).toEqual([1]);
    expect(lineStatus(v, { lines: [4] }).deletions).toEqual([]);
    expect(() => lineStatus(v, { lines: [5] })).toThrow(expect.objectContaining({ code: "INVALID_PARAMS" }));
  });

  it("names each changed line's changelist and a range split between lists", () => {
    const v = versions("a\nb\nc\nd\n", "a\nb\nc\nd\n", "a\nB\nC\nd\n");
    let marks = settleMarks({ lines: new Map(), deletions: new Map() }, v.headToWorktree, "default");
    marks = markSelection(marks, v.headToWorktree, { lines: [3] }, "feature").marks;
    const s = lineStatus(v, { marks });
    expect(s.lines.map((l) => l.changelist)).toEqual(["default", "feature"]);
    expect(s.ranges[0]).toMatchObject({
      changelist: null,
      changelist_parts: [
        { changelist: "default", start: 2, end: 2 },
        { changelist: "feature", start: 3, end: 3 },
      ],
    });
    const whole = lineStatus(v, { marks: markSelection(marks, v.headToWorktree, { ranges: [1] }, "feature").marks });
    expect(whole.ranges[0].changelist).toBe("feature");
  });
});

describe("requireLines", () => {
  it("names the lines that are not in the file, and how many it has", () => {
    expect(() => requireLines([1], 1)).not.toThrow();
    expect(() => requireLines([2, 3], 1)).toThrow("lines: 2, 3 not in the worktree file (it has 1 line).");
  });
});
