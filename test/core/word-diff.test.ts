import { describe, expect, it } from "vitest";
import { diffLines } from "../../src/core/line-diff.js";
import { tagOf } from "../../src/core/hash.js";
import { MAX_WORD_EDITS, MAX_WORD_TOKENS, changedLines, renderWordDiffEntry, renderWords, wordDiff, wordDiffEntries } from "../../src/core/word-diff.js";
import { seq } from "./line-helpers.js";

const rendered = (a: string, b: string) => renderWords(wordDiff(a, b));

describe("wordDiff", () => {
  it("diffs code by words and single punctuation marks", () => {
    expect(rendered("foo(bar, baz)", "foo(bar, qux)")).toBe("foo(bar, [-baz-]{+qux+})");
    expect(rendered("  if (a==b) {", "  if (a===b) {")).toBe("  if (a=={+=+}b) {");
    expect(rendered("x.y.z", "x.w.z")).toBe("x.[-y-]{+w+}.z");
    expect(rendered("return a+b;", "return a-b;")).toBe("return a[-+-]{+-+}b;");
    expect(rendered("const x_y = 1;", "const xY = 1;")).toBe("const [-x_y-]{+xY+} = 1;");
  });

  it("keeps the whitespace between words as its own token, so a whitespace-only change shows", () => {
    expect(wordDiff("foo", "  foo")).toEqual([
      { op: "+", text: "  " },
      { op: "=", text: "foo" },
    ]);
    expect(rendered("a  b", "a b")).toBe("a[-  -]{+ +}b");
    expect(rendered("f(a,b)", "f(a, b)")).toBe("f(a,{+ +}b)");
  });

  it("keeps and changes the words git --word-diff does: ties broken by git's Myers and slides (issue 20)", () => {
    // git diff --word-diff=plain --word-diff-regex='[[:alnum:]_]+|[^[:space:][:alnum:]_]': ([-2-]{+={+} 2
    expect(rendered("( 2 2", "(={ 2")).toBe("([- 2-]{+={+} 2");
    // git: a =[-b +-] c {++ b+}; whitespace is not a word, so it does not decide which words stay.
    expect(rendered("a = b + c", "a = c + b")).toBe("a = [-b + -]c{+ + b+}");
  });

  it("treats a word in any script as one token, not one per letter", () => {
    expect(rendered("привет мир", "привет друг")).toBe("привет [-мир-]{+друг+}");
    expect(rendered("名前 = 値", "名称 = 値")).toBe("[-名前-]{+名称+} = 値");
  });

  it("puts what went before what came within one change and joins neighbouring parts", () => {
    expect(wordDiff("a b c", "x y c")).toEqual([
      { op: "-", text: "a b" },
      { op: "+", text: "x y" },
      { op: "=", text: " c" },
    ]);
  });

  it("is empty for equal lines and whole for lines too long to diff", () => {
    expect(wordDiff("same", "same")).toEqual([]);
    const long = Array.from({ length: MAX_WORD_TOKENS }, (_, i) => `w${i}`).join(" ");
    expect(wordDiff(long, `${long}!`)).toEqual([
      { op: "-", text: long },
      { op: "+", text: `${long}!` },
    ]);
    expect(wordDiff("", "x")).toEqual([{ op: "+", text: "x" }]);
    const a = Array.from({ length: MAX_WORD_EDITS }, (_, i) => `a${i}`).join(",");
    const b = Array.from({ length: MAX_WORD_EDITS }, (_, i) => `b${i}`).join(",");
    expect(wordDiff(a, b)).toEqual([
      { op: "-", text: a },
      { op: "+", text: b },
    ]);
  });
});

describe("changedLines", () => {
  it("lists every changed line in reading order with both sides and the words", () => {
    const d = diffLines(seq("a\nold one;\ngone\nb\n"), seq("a\nnew one;\nb\nadded\n"));
    expect(changedLines(d)).toEqual([
      {
        old: 1,
        new: 1,
        words: [
          { op: "-", text: "old" },
          { op: "+", text: "new" },
          { op: "=", text: " one;" },
        ],
        eolChanged: false,
        moved: false,
      },
      { old: 2, new: -1, words: [], eolChanged: false, moved: false },
      { old: -1, new: 3, words: [], eolChanged: false, moved: false },
    ]);
  });

  it("shows a lost final newline as a pair with no words", () => {
    expect(changedLines(diffLines(seq("a\nb\n"), seq("a\nb")))).toEqual([{ old: 1, new: 1, words: [], eolChanged: true, moved: false }]);
  });

  it("lists a line moved within its range once, where it is now", () => {
    const lines = changedLines(diffLines(seq("alpha = 1;\nbeta = 2;\ngamma = 3;\n"), seq("gamma = 30;\nalpha = 10;\nbeta = 20;\n")));
    expect(lines.map((l) => [l.old, l.new, l.moved, renderWords(l.words)])).toEqual([
      [2, 0, true, "gamma = [-3-]{+30+};"],
      [0, 1, false, "alpha = [-1-]{+10+};"],
      [1, 2, false, "beta = [-2-]{+20+};"],
    ]);
  });
});

describe("wordDiffEntries", () => {
  it("gives both sides 1-based with their tags, and renders one line each from the new side", () => {
    const entries = wordDiffEntries(diffLines(seq("a\nx = 1;\ngone\nb\n"), seq("a\nx = 2;\nb\nadded\n")));
    expect(entries[0]).toEqual({
      old: { line: 2, tag: tagOf("x = 1;"), content: "x = 1;" },
      new: { line: 2, tag: tagOf("x = 2;"), content: "x = 2;" },
      words: [
        { op: "=", text: "x = " },
        { op: "-", text: "1" },
        { op: "+", text: "2" },
        { op: "=", text: ";" },
      ],
    });
    expect(entries.map(renderWordDiffEntry)).toEqual([`2|${tagOf("x = 2;")} x = [-1-]{+2+};`, `-3|${tagOf("gone")} [-gone-]`, `4|${tagOf("added")} {+added+}`]);
  });

  it("shows an untracked file as all added, a lost final newline and a moved line with a note", () => {
    expect(wordDiffEntries(diffLines(seq(""), seq("x\n"))).map(renderWordDiffEntry)).toEqual([`1|${tagOf("x")} {+x+}`]);
    const eol = wordDiffEntries(diffLines(seq("a\nb\n"), seq("a\nb")));
    expect(eol[0]).toMatchObject({ eol_changed: true, words: [] });
    expect(renderWordDiffEntry(eol[0])).toBe(`2|${tagOf("b")} b (only the line ending changed)`);
    const moved = wordDiffEntries(diffLines(seq("alpha = 1;\nbeta = 2;\ngamma = 3;\n"), seq("gamma = 30;\nalpha = 10;\nbeta = 20;\n")));
    expect(renderWordDiffEntry(moved[0])).toBe(`1|${tagOf("gamma = 30;")} gamma = [-3-]{+30+}; (moved from 3)`);
  });
});
