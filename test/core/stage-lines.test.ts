import { describe, expect, it } from "vitest";
import { FileVersions } from "../../src/core/file-versions.js";
import type { ToolError } from "../../src/errors.js";
import { type Selection, rollbackLines, stageLines, unstageLines } from "../../src/core/stage-lines.js";
import { asText, randomEdit, randomFile, rng, seq, text, uniqueFile, versions } from "./line-helpers.js";

const stage = (index: string, worktree: string, sel?: Selection, opts = {}) => text(stageLines(versions(index, index, worktree), sel, opts));

describe("stageLines", () => {
  const index = "a\nb\nc\n";
  const worktree = "a\nB\nc\nd\n";

  it("applies exactly the selected worktree lines to the index", () => {
    expect(stage(index, worktree, { lines: [2] })).toBe("a\nB\nc\n");
    expect(stage(index, worktree, { lines: [4] })).toBe("a\nb\nc\nd\n");
    expect(stage(index, worktree, { lines: [1, 3] })).toBe(index);
  });

  it("stages everything without a selection, as git add, and says so", () => {
    const all = stageLines(versions(index, index, worktree));
    expect(text(all)).toBe(worktree);
    expect(all).toMatchObject({ selected: 2, complete: true });
    const none = stageLines(versions(index, index, worktree), { lines: [1] });
    expect(none).toMatchObject({ selected: 0, complete: false });
    expect(text(none)).toBe(index);
  });

  it("stages one line of a block of edited lines without reordering it (lazygit #5103)", () => {
    const head = "int main() {\n\t// init something\n\tint i = 0;\n\n\treturn 0;\n}\n";
    const now = "int main() {\n\t// init variables\n\tint x = 0;\n\n\treturn 0;\n}\n";
    expect(stage(head, now, { lines: [2] })).toBe("int main() {\n\t// init variables\n\tint i = 0;\n\n\treturn 0;\n}\n");
    expect(stage(head, now, { lines: [3] })).toBe("int main() {\n\t// init something\n\tint x = 0;\n\n\treturn 0;\n}\n");
  });

  it("stages the middle line of a rewritten block in place (lazygit #5503)", () => {
    expect(stage("start\nitem a = 1;\nitem b = 2;\nitem c = 3;\nend\n", "start\nitem A = 1;\nitem B = 2;\nitem C = 3;\nend\n", { lines: [3] })).toBe(
      "start\nitem a = 1;\nitem B = 2;\nitem c = 3;\nend\n",
    );
    // Even when the lines share no word: three lines replaced by three are three edits.
    expect(stage("x\na\nb\nc\ny\n", "x\nA\nB\nC\ny\n", { lines: [3] })).toBe("x\na\nB\nc\ny\n");
  });

  it("stages a line that moved within its range by moving it, never duplicating or dropping one", () => {
    const head = "alpha = 1;\nbeta = 2;\ngamma = 3;\n";
    const now = "gamma = 30;\nalpha = 10;\nbeta = 20;\n";
    expect(stage(head, now, { lines: [1] })).toBe("gamma = 30;\nalpha = 1;\nbeta = 2;\n");
    expect(stage(head, now, { lines: [2, 3] })).toBe("alpha = 10;\nbeta = 20;\ngamma = 3;\n");
    expect(stage(head, now, { lines: [1, 2, 3] })).toBe(now);
  });

  it("stages a line moved past unchanged lines as what it is, an addition and a separate deletion", () => {
    const head = "import a from 'a';\nimport b from 'b';\nimport c from 'c';\n";
    const now = "import c from 'c';\nimport a from 'a';\nimport b from 'b';\n";
    expect(stage(head, now, { ranges: [1] })).toBe(`${now}import c from 'c';\n`);
    expect(stage(head, now, { ranges: [1, 2] })).toBe(now);
  });

  it("keeps whitespace exactly as the worktree has it (no apply.whitespace can fix it)", () => {
    expect(stage("if (a) {\n  b();\n}\n", "if (a) {\n  b();   \n\t}\n", { lines: [2] })).toBe("if (a) {\n  b();   \n}\n");
  });

  it("changes the final newline only when the last line is selected", () => {
    expect(stage("a\nb\nc\n", "a\nB\nc", { lines: [2] })).toBe("a\nB\nc\n");
    expect(stage("a\nb\nc\n", "a\nB\nc", { lines: [3] })).toBe("a\nb\nc");
    expect(stage("a\nb", "a\nb\n", { lines: [2] })).toBe("a\nb\n");
    // Adding a line after a last line without newline: that line must end, whatever else is selected.
    expect(stage("a\nb", "a\nb\nc\n", { lines: [3] })).toBe("a\nb\nc\n");
    expect(stage("a\nb", "a\nb\nc", { lines: [3] })).toBe("a\nb\nc");
    expect(stage("a\nb\n", "a\nb\nc", { lines: [3] })).toBe("a\nb\nc");
    // The final newline belongs to the end of the file: staging an edit of the last line without the lines appended
    // after it keeps the index's end as it was.
    expect(stage("a\nb", "a\nB\nc\n", { lines: [2] })).toBe("a\nB");
  });

  it("keeps CRLF: staged worktree lines carry their own terminator unless the target's is given", () => {
    expect(stage("a\r\nb\r\n", "a\r\nB\r\nc\r\n", { lines: [3] })).toBe("a\r\nb\r\nc\r\n");
    expect(stage("a\r\nb\r\n", "a\r\nB\r\nc\r\n", { lines: [2] }, { eol: "\n" })).toBe("a\r\nB\nb\r\n".replace("B\nb\r\n", "B\n"));
  });

  it("under cr:'ignore' gives worktree form (for git's clean filter) or the index's form with eol", () => {
    const v = new FileVersions(seq("a\nb\n"), seq("a\nb\n"), seq("a\r\nB\r\nc\r\n"), "ignore");
    expect(v.indexToWorktree.ranges).toHaveLength(1);
    expect(text(stageLines(v, { lines: [2] }))).toBe("a\nB\r\n");
    expect(text(stageLines(v, { lines: [2, 3] }, { eol: "\n" }))).toBe("a\nB\nc\n");
  });

  it("stages some lines of an untracked file, creating content with only those lines", () => {
    const v = versions("", "", "x\ny\nz\n");
    expect(text(stageLines(v, { lines: [2] }))).toBe("y\n");
    expect(text(stageLines(v, { lines: [1, 3] }))).toBe("x\nz\n");
    expect(stageLines(v)).toMatchObject({ complete: true });
  });

  it("stages a deleted file through its range (a deletion has no worktree line)", () => {
    const v = versions("a\nb\n", "a\nb\n", "");
    expect(stageLines(v, { lines: [] })).toMatchObject({ selected: 0 });
    const all = stageLines(v, { ranges: [1] });
    expect(all).toMatchObject({ lines: [], selected: 1, complete: true });
  });

  it("stages a range as a whole, also where part of it is staged already", () => {
    const v = versions("a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nB\nC\nd\n");
    expect(v.headToWorktree.ranges).toHaveLength(1);
    expect(text(stageLines(v, { ranges: [1] }))).toBe("a\nB\nC\nd\n");
  });

  it("stages a deletion range without touching the lines around it", () => {
    const v = versions("a\nb\nc\nd\n", "a\nb\nc\nd\n", "a\nd\n");
    expect(text(stageLines(v, { ranges: [1] }))).toBe("a\nd\n");
    expect(text(stageLines(v, { lines: [1, 2] }))).toBe("a\nb\nc\nd\n");
  });

  it("refuses lines and ranges the file does not have", () => {
    const v = versions(index, index, worktree);
    const fail = (sel: Selection) => {
      try {
        stageLines(v, sel);
      } catch (e) {
        return e as ToolError;
      }
      throw new Error("no error");
    };
    expect(fail({ lines: [0] })).toMatchObject({ code: "INVALID_PARAMS", details: { lines: [0] } });
    expect(fail({ lines: [5, 2.5] }).message).toContain("5, 2.5 are not a line of the worktree file (it has 4)");
    expect(fail({ ranges: [3] })).toMatchObject({ code: "INVALID_PARAMS", details: { ranges: [3] } });
  });
});

describe("stageLines after a partial stage, where the two diffs place a change apart (issue 20 fuzz)", () => {
  /** Stages `lines` of HEAD -> worktree, then every range: the index must be the worktree. */
  const thenEveryRange = (head: string, work: string, lines: number[]) => {
    const v = versions(head, head, work);
    const next = v.withIndex(stageLines(v, { lines }));
    return text(stageLines(next, { ranges: next.headToWorktree.ranges.map((r) => r.id) }));
  };

  it("takes an index -> worktree addition that slides into a range over an equal line", () => {
    const work = "  if (a) {\n  if (a) {\n\tdeep();\n  if (a) {\n\tdeep();";
    expect(thenEveryRange("}\n  if (a) {\n\tdeep();", work, [2, 5])).toBe(work);
  });

  it("unstages every range after some lines: a HEAD -> index addition that slides into a range goes too", () => {
    const head = "  x += 1;\nline 0";
    const work = "  x += 1;\nline 0\n  x += 1;\nline 0";
    const v = versions(head, work, work);
    const next = v.withIndex(unstageLines(v, { lines: [3] }));
    expect(text(unstageLines(next, { ranges: next.headToWorktree.ranges.map((r) => r.id) }))).toBe(head);
  });

  it("takes a change beside the chosen ranges that no other range lies beside", () => {
    // HEAD -> worktree: `a` deleted, `}` added; index -> worktree: `a` replaced by `}`.
    expect(thenEveryRange("a\n}\n", "}\n}\n  x += 1;\n", [3])).toBe("}\n}\n  x += 1;\n");
  });
});

describe("unstageLines", () => {
  it("puts the selected index lines back to HEAD's", () => {
    const v = versions("a\nb\nc\n", "a\nB\nc\nd\n", "a\nB\nc\nd\n");
    expect(text(unstageLines(v, { lines: [2] }))).toBe("a\nb\nc\nd\n");
    expect(text(unstageLines(v, { lines: [4] }))).toBe("a\nB\nc\n");
    expect(text(unstageLines(v))).toBe("a\nb\nc\n");
  });

  it("unstages a staged deletion through its range", () => {
    const v = versions("a\nb\nc\n", "a\nc\n", "a\nc\n");
    expect(unstageLines(v, { lines: [1, 2] })).toMatchObject({ selected: 0 });
    expect(text(unstageLines(v, { ranges: [1] }))).toBe("a\nb\nc\n");
  });

  it("unstages a third version (staged, then edited again) by the worktree line", () => {
    const v = versions("x = 1;\ny\n", "x = 2;\ny\n", "x = 3;\ny\n");
    expect(text(unstageLines(v, { lines: [1] }))).toBe("x = 1;\ny\n");
  });

  it("unstages a range by where it sits in HEAD, whatever line of equal ones each diff calls staged (issue 20 fuzz)", () => {
    // The index and worktree diffs align the two `  if (a) {` lines differently; range 1 still means HEAD's first line.
    const head = "  if (a) {";
    const work = "}\n}\n}\n  if (a) {\n}\n  if (a) {\n}";
    const v = versions(head, work, work);
    const half = unstageLines(v, { lines: [1, 3, 5, 7] });
    const next = v.withIndex(half);
    expect(text(unstageLines(next, { ranges: next.headToWorktree.ranges.map((r) => r.id) }))).toBe(head);
  });

  it("leaves unstaged lines alone", () => {
    const v = versions("a\nb\nc\n", "a\nB\nc\n", "a\nB\nC\n");
    expect(text(unstageLines(v, { lines: [3] }))).toBe("a\nB\nc\n");
  });
});

describe("rollbackLines", () => {
  it("puts the selected worktree lines back to HEAD's", () => {
    const v = versions("a\nb\nc\n", "a\nb\nc\n", "a\nB\nc\nd\n");
    expect(text(rollbackLines(v, { lines: [2] }))).toBe("a\nb\nc\nd\n");
    expect(text(rollbackLines(v, { lines: [4] }))).toBe("a\nB\nc\n");
    expect(text(rollbackLines(v))).toBe("a\nb\nc\n");
  });

  it("restores deleted lines through their range and a lost final newline through the last line", () => {
    const v = versions("a\nb\nc\nd\n", "a\nb\nc\nd\n", "a\nc\nd");
    expect(v.headToWorktree.ranges.map((r) => r.kind)).toEqual(["deleted", "modified"]);
    expect(text(rollbackLines(v, { ranges: [1] }))).toBe("a\nb\nc\nd");
    expect(text(rollbackLines(v, { lines: [3] }))).toBe("a\nc\nd\n");
    // A deletion next to a changed line is part of that line's range and piece.
    const w = versions("a\nb\nc\n", "a\nb\nc\n", "a\nc");
    expect(text(rollbackLines(w, { lines: [2] }))).toBe("a\nb\nc\n");
  });

  it("writes HEAD's lines with the worktree's terminator when given", () => {
    const v = new FileVersions(seq("a\nb\n"), seq("a\nb\n"), seq("a\r\nB\r\n"), "ignore");
    expect(text(rollbackLines(v, { lines: [2] }, { eol: "\r\n" }))).toBe("a\r\nb\r\n");
  });
});

describe("staging properties on random edits", () => {
  // Lines repeat in `mixed` (braces, blank lines): properties that re-diff a staged index against the worktree need
  // `unique`, because which of two equal neighbour lines "is" the staged one is a guess the next diff may make otherwise.
  const make = (unique: boolean) =>
    Array.from({ length: 200 }, (_, k) => {
      const r = rng((unique ? 5000 : 1000) + k);
      const head = unique ? uniqueFile(Math.floor(r() * 30)) : randomFile(r, Math.floor(r() * 30));
      const finalNl = r() < 0.8;
      const work = randomEdit(r, head, unique);
      const v = versions(asText(head, finalNl), asText(head, finalNl), asText(work, r() < 0.8));
      const n = v.worktree.lines.length;
      const lines = Array.from({ length: n }, (_, i) => i + 1).filter(() => r() < 0.4);
      const ranges = v.headToWorktree.ranges.map((x) => x.id).filter(() => r() < 0.3);
      return { k, v, sel: { lines, ranges } };
    });
  const mixed = make(false);
  const unique = make(true);
  const allOf = (v: FileVersions): Selection => ({
    lines: Array.from({ length: v.worktree.lines.length }, (_, i) => i + 1),
    ranges: v.headToWorktree.ranges.map((x) => x.id),
  });

  it("staging every range gives the worktree, staging nothing gives the index", () => {
    for (const { v } of [...mixed, ...unique]) {
      expect(text(stageLines(v, { ranges: v.headToWorktree.ranges.map((x) => x.id) }))).toBe(text(v.worktree));
      expect(text(stageLines(v, allOf(v)))).toBe(text(v.worktree));
      expect(text(stageLines(v, { lines: [] }))).toBe(text(v.index));
    }
  });

  it("staging a selection and then the rest gives the worktree", () => {
    for (const { k, v, sel } of unique) {
      const once = stageLines(v, sel);
      const next = new FileVersions(v.head, once, v.worktree);
      const rest: Selection = {
        lines: allOf(v).lines!.filter((l) => !sel.lines.includes(l)),
        ranges: next.headToWorktree.ranges.map((x) => x.id).filter((id) => !sel.ranges.includes(id)),
      };
      expect([k, text(stageLines(next, rest))]).toEqual([k, text(v.worktree)]);
    }
  });

  it("unstaging what was staged gives the index back", () => {
    for (const { k, v, sel } of unique) {
      const staged = new FileVersions(v.head, stageLines(v, sel), v.worktree);
      expect([k, text(unstageLines(staged, sel))]).toEqual([k, text(v.head)]);
    }
  });

  it("rolling back a selection equals staging everything else onto HEAD; all of it gives HEAD", () => {
    for (const { k, v, sel } of [...mixed, ...unique]) {
      const picked = new Set(sel.lines);
      const rangeIds = new Set(sel.ranges);
      const others: Selection = {
        lines: allOf(v).lines!.filter((l) => !picked.has(l) && !v.headToWorktree.ranges.some((x) => rangeIds.has(x.id) && x.start < l && l <= x.end)),
        ranges: v.headToWorktree.ranges.filter((x) => x.start === x.end && !rangeIds.has(x.id)).map((x) => x.id),
      };
      expect([k, text(rollbackLines(v, sel))]).toEqual([k, text(stageLines(v, others))]);
      expect(text(rollbackLines(v, allOf(v)))).toBe(text(v.head));
    }
  });
});
