import { describe, expect, it } from "vitest";
import { AUTO_RULE_TEXT, autoResolve } from "../../../src/core/merge/auto-resolve.js";
import { renderMerged } from "../../../src/core/merge/markers.js";
import { type ConflictBlock, mergeTexts } from "../../../src/core/merge/three-way.js";
import { splitText } from "../../../src/core/text.js";
import { realMerge } from "./git-ref.js";

const side = (text: string) => ({ start: 0, ...splitText(text) });
const block = (base: string, ours: string, theirs: string): ConflictBlock => ({ base: side(base), ours: side(ours), theirs: side(theirs) });
const text = (r: { lines: string[]; eols: string[] } | null) => (r ? r.lines.map((l, i) => l + r.eols[i]).join("") : null);

/** The only conflict git leaves when merging these, auto-resolved. */
function resolveOnly(base: string, ours: string, theirs: string) {
  const m = mergeTexts(base, ours, theirs);
  expect(m.blocks).toHaveLength(1);
  return autoResolve(m.blocks[0]);
}

describe("autoResolve: identical and one-sided changes", () => {
  it("takes a change both sides made alike", () => {
    expect(autoResolve(block("a\n", "b\nc\n", "b\nc\n"))).toEqual({ lines: ["b", "c"], eols: ["\n", "\n"], rule: "identical" });
  });

  it("takes the side that changed when the other kept the base", () => {
    expect(autoResolve(block("a\n", "a\n", "b\n"))).toMatchObject({ lines: ["b"], rule: "one-sided", taken: "theirs" });
    expect(autoResolve(block("a\n", "", "a\n"))).toMatchObject({ lines: [], rule: "one-sided", taken: "ours" });
  });

  it("names each rule for reports", () => {
    expect(AUTO_RULE_TEXT.identical).toBe("identical changes");
    expect(Object.keys(AUTO_RULE_TEXT).sort()).toEqual(["identical", "one-sided", "whitespace", "words"]);
  });
});

describe("autoResolve: changes to different words (JetBrains' simple resolve)", () => {
  it("merges two edits to different words of one line", () => {
    const r = resolveOnly("const a = 1; const b = 2;\n", "const a = 10; const b = 2;\n", "const a = 1; const b = 20;\n");
    expect(r).toMatchObject({ rule: "words" });
    expect(text(r)).toBe("const a = 10; const b = 20;\n");
  });

  it("leaves overlapping word edits a conflict", () => {
    expect(resolveOnly("x = foo(1)\n", "x = foo(2)\n", "x = foo(3)\n")).toBeNull();
  });

  it("leaves edits that touch a conflict (a word changed right where the other side inserts)", () => {
    expect(resolveOnly("call(a)\n", "call(b)\n", "call(a, c)\n")).toBeNull();
  });

  it("merges edits of adjacent lines, which git leaves as one conflict", () => {
    expect(text(resolveOnly("a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n"))).toBe("B\nC\n");
  });

  it("leaves a deletion on one side against an edit on the other", () => {
    expect(resolveOnly("a\nb\nc\n", "a\nc\n", "a\nB\nc\n")).toBeNull();
    expect(resolveOnly("a\nkeep(x)\nc\n", "a\nc\n", "a\nkeep(y)\nc\n")).toBeNull();
  });

  it("leaves two different insertions at one place (their order is unknowable)", () => {
    expect(resolveOnly("a\nb\n", "a\nx\nb\n", "a\ny\nb\n")).toBeNull();
  });

  it("leaves a block whose word merge would carry text across a line break (theirs' new line aligned with the next line's words)", () => {
    // The token diff puts theirs' new line `c 0` as ` 0\nc` after base's `c`: merged with ours' `zz`, it would write `zz 0`.
    expect(resolveOnly("x\nc 3\ny\n", "x\nzz 3\ny\n", "x\nc 0\nc 3\ny\n")).toBeNull();
    expect(autoResolve(block("c 3\n", "zz 3\n", "c 0\nc 3\n"))).toBeNull();
  });

  it("leaves a block whose token alignment reads a side's lines otherwise than the line diff does (found by the fuzz)", () => {
    // By lines ours rewrote `a a` into `c a`/`a` and theirs changed the last `a`; by tokens ours added a last line `a`.
    expect(autoResolve(block("a a\na\n", "c a\na\na\n", "a a\nb\n"))).toBeNull();
  });

  it("merges a whole line one side added with the other side's change to a word of the next line", () => {
    expect(text(autoResolve(block("a b\n", "a B\n", "new\na b\n")))).toBe("new\na B\n");
  });

  it("leaves a block where both sides added lines at different places (the result would have neither side's line count)", () => {
    expect(autoResolve(block("a\nb\n", "n\na\nb\n", "a\nb\nm\n"))).toBeNull();
  });

  it("passes JetBrains' MergeResolveUtilTest simple cases", () => {
    const cases: [string, string, string, string | null][] = [
      ["x x x", "x Y x", "x x x", "x Y x"],
      ["x X x", "x x", "x X x", "x x"],
      ["x x", "x Y x", "x Y x", "x Y x"],
      ["x x x", "x Y x x", "x x Z x", "x Y x Z x"],
      ["x", "x Y", "Z x", "Z x Y"],
      ["x x", "x", "Z x x", "Z x"],
      ["x x x", "x Y x", "x Z x", null],
      ["x x", "x Y x", "x Z x", null],
    ];
    for (const [base, left, right, expected] of cases) expect(text(autoResolve(block(base, left, right))), `${base} | ${left} | ${right}`).toBe(expected);
  });

  it("keeps line endings: a CRLF block resolves to CRLF lines", () => {
    const r = resolveOnly("f(a, b)\r\n", "f(A, b)\r\n", "f(a, B)\r\n");
    expect(text(r)).toBe("f(A, B)\r\n");
  });

  it("handles empty sides and a block at the end of a file without a final newline", () => {
    expect(text(autoResolve(block("", "x\n", "x\n")))).toBe("x\n");
    expect(text(resolveOnly("p\nlast one", "p\nLAST one", "p\nlast ONE"))).toBe("LAST ONE");
  });
});

describe("autoResolve: whitespace-only sides", () => {
  it("takes the other side when one only trimmed whitespace at a line's end", () => {
    const r = resolveOnly("x = 1   \n", "x = 1\n", "x = 2   \n");
    expect(r).toMatchObject({ rule: "whitespace" });
    expect(text(r)).toBe("x = 2   \n");
  });

  it("takes the other side when one only re-spaced inside a line", () => {
    expect(text(resolveOnly("f(a,b)\n", "f(a, b)\n", "f(a,c)\n"))).toBe("f(a,c)\n");
  });

  it("treats a CRLF to LF change as a change at the line's end", () => {
    expect(text(resolveOnly("x = 1\r\n", "x = 1\n", "x = 2\r\n"))).toBe("x = 2\r\n");
  });

  it("never treats an indentation change as whitespace", () => {
    expect(resolveOnly("  x = 1\n", "    x = 1\n", "  y = 1\n")).toBeNull();
    expect(resolveOnly("\tif a:\n", "if a:\n", "  if a:\n")).toBeNull();
  });

  it("applies an indentation change with the other side's change to another word of the line (words, not ignored)", () => {
    const r = resolveOnly("\tif a:\n", "if a:\n", "\tif b:\n");
    expect(r?.rule).toBe("words");
    expect(text(r)).toBe("if b:\n");
  });

  it("does not take joining two words for a whitespace change", () => {
    expect(resolveOnly("a b\n", "ab\n", "a c\n")).toBeNull();
  });

  it("keeps a re-spacing where it does not meet the other side's change, and drops it where it does", () => {
    const r = autoResolve(block("a  =  1\nb = 2\n", "a = 1\nb = 2 \n", "a  =  1 + x\nb = 3\n"));
    expect(r?.rule).toBe("whitespace");
    expect(text(r)).toBe("a = 1 + x\nb = 3\n");
  });

  it("takes the other side of a block one side only re-spaced, where both re-spaced one spot differently", () => {
    const r = autoResolve(block("a = 1\nb = 2\n", "a = 1 \nb = 2\n", "a = 1\t\nb = 3\n"));
    expect(r).toMatchObject({ rule: "whitespace", taken: "theirs" });
    expect(text(r)).toBe("a = 1\t\nb = 3\n");
  });
});

describe("autoResolve on a real git merge", () => {
  it("settles the conflict git leaves over two edits to different words of one line", () => {
    const base = "header\nconst limits = { min: 1, max: 10 };\nfooter\n";
    const ours = "header\nconst limits = { min: 0, max: 10 };\nfooter\n";
    const theirs = "header\nconst limits = { min: 1, max: 99 };\nfooter\n";
    const git = realMerge(base, ours, theirs);
    expect(git.worktree).toContain("<<<<<<< HEAD");
    const m = mergeTexts(git.base, git.ours, git.theirs);
    const resolutions = m.blocks.map((b) => autoResolve(b));
    expect(resolutions.map((r) => r?.rule)).toEqual(["words"]);
    const out = renderMerged(m, { markerSize: 7, labels: { ours: "HEAD", base: "base", theirs: "theirs" }, eol: "\n", resolutions });
    expect(out.regions).toEqual([]);
    expect(text(out)).toBe("header\nconst limits = { min: 0, max: 99 };\nfooter\n");
  });
});
