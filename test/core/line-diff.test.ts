import { describe, expect, it } from "vitest";
import { type CrPolicy, type LineDiff, LineIds, diffLines, eolImplied, rangeAtLine, rangeJson, regionHit, sameEol } from "../../src/core/line-diff.js";
import { MAX_CHAIN } from "../../src/core/sequence-diff.js";
import { asText, randomEdit, randomFile, rng, seq } from "./line-helpers.js";

const diff = (a: string, b: string, cr?: CrPolicy) => diffLines(seq(a), seq(b), { cr });
const shape = (d: LineDiff) => d.ranges.map((r) => [r.kind, r.oldStart, r.oldEnd, r.start, r.end]);

/** Everything a diff promises: ranges in order, maximal, and every line outside them equal to its counterpart. */
function checkDiff(d: LineDiff) {
  const problems: string[] = [];
  const ok = (cond: boolean, what: string) => cond || problems.push(what);
  let o = 0;
  let n = 0;
  d.ranges.forEach((r, k) => {
    ok(r.id === k + 1, `id ${r.id}`);
    ok(r.oldStart - o === r.start - n, `range ${r.id} misaligned`);
    if (k > 0) ok(r.start > n || r.oldStart > o, `range ${r.id} touches the previous one`);
    for (; n < r.start; n++, o++) {
      const eq = sameEol(d.old.eols[o], d.new.eols[n], d.cr) || eolImplied(d.old, d.new, o, n);
      ok(d.old.lines[o] === d.new.lines[n] && eq, `line ${n} differs outside ranges`);
      ok(d.oldOf[n] === o && d.newOf[o] === n, `line ${n} maps wrong`);
    }
    ok(r.kind === (r.oldStart === r.oldEnd ? "added" : r.start === r.end ? "deleted" : "modified"), `range ${r.id} kind`);
    ok(r.oldEnd > r.oldStart || r.end > r.start, `range ${r.id} empty`);
    for (let j = r.start; j < r.end; j++) ok(d.oldOf[j] === -1, `line ${j} inside a range maps`);
    for (const [po, pn] of r.eolPairs) ok(d.old.lines[po] === d.new.lines[pn], `eol pair ${po},${pn}`);
    o = r.oldEnd;
    n = r.end;
  });
  ok(d.old.lines.length - o === d.new.lines.length - n, "tails differ in length");
  for (; n < d.new.lines.length; n++, o++) ok(d.old.lines[o] === d.new.lines[n], `tail line ${n} differs`);
  expect(problems).toEqual([]);
}

describe("diffLines: JetBrains ranges", () => {
  it("finds nothing between equal versions", () => {
    expect(diff("a\nb\n", "a\nb\n").ranges).toEqual([]);
    expect(diff("", "").ranges).toEqual([]);
  });

  it("names added, deleted and modified ranges, numbered in file order", () => {
    const d = diff("a\nb\nc\nd\ne\n", "top\na\nB\nc\ne\nend\n");
    expect(shape(d)).toEqual([
      ["added", 0, 0, 0, 1],
      ["modified", 1, 2, 2, 3],
      ["deleted", 3, 4, 4, 4],
      ["added", 5, 5, 5, 6],
    ]);
    expect(d.ranges.map((r) => r.id)).toEqual([1, 2, 3, 4]);
    checkDiff(d);
  });

  it("puts a deletion after the worktree line it follows, 0 for the top (the wire is 1-based)", () => {
    const d = diff("a\nb\nc\n", "b\nc\n");
    expect(rangeJson(d.ranges[0])).toEqual({ range: 1, kind: "deleted", start: 1, end: 0, head_start: 1, head_end: 1, after: 0 });
    const e = diff("a\nb\nc\n", "a\nb\n");
    expect(rangeJson(e.ranges[0])).toMatchObject({ kind: "deleted", after: 2, head_start: 3, head_end: 3 });
    const m = diff("a\nb\nc\n", "a\nB\nc\n");
    expect(rangeJson(m.ranges[0], "index")).toEqual({ range: 1, kind: "modified", start: 2, end: 2, index_start: 2, index_end: 2 });
  });

  it("treats a change of the final newline as a change of the last line", () => {
    const lost = diff("a\nb\n", "a\nb");
    expect(shape(lost)).toEqual([["modified", 1, 2, 1, 2]]);
    expect(lost.ranges[0].eolPairs).toEqual([[1, 1]]);
    expect(rangeJson(lost.ranges[0]).eol_changed).toBe(true);
    // Appending to a file without final newline adds lines; the old last line only had to end (eolImplied).
    const grown = diff("a\nb", "a\nb\nc\n");
    expect(shape(grown)).toEqual([["added", 2, 2, 2, 3]]);
    checkDiff(grown);
    const cut = diff("a\nb\nc\n", "a\nb");
    expect(shape(cut)).toEqual([["deleted", 2, 3, 2, 2]]);
    expect(shape(diff("a\nb\nc", "a\nb"))).toEqual([["deleted", 2, 3, 2, 2]]);
  });

  it("counts CRLF -> LF of a line as a change by default, as git does without eol conversion", () => {
    const d = diff("a\r\nb\r\nc\r\n", "a\r\nb\nc\r\n");
    expect(shape(d)).toEqual([["modified", 1, 2, 1, 2]]);
    expect(d.ranges[0].eolPairs).toEqual([[1, 1]]);
  });

  it("matches lines as bytes, terminator included, as git diff --histogram does (issue 20)", () => {
    // git: `-a\r\n +\n`, then b\r\n unchanged, then `-\r\n`; compared without \r, the blank lines matched and the
    // byte-identical b\r\n became a change.
    const d = diff("a\r\nb\r\n\r\n", "\nb\r\n");
    expect(shape(d)).toEqual([
      ["modified", 0, 1, 0, 1],
      ["deleted", 2, 3, 2, 2],
    ]);
    expect(d.oldOf[1]).toBe(1);
    checkDiff(d);
    // The LF blank line is the index's, the CRLF one is new.
    expect(shape(diff("i\nx\n\ny\n", "i\nx\n\r\n\ny\n"))).toEqual([["added", 2, 2, 2, 3]]);
  });

  it("matches byte-identical last lines without newline whatever terminators the rest of each file has (issue 20 fuzz)", () => {
    const d = diff("N", "N\r\nN");
    expect(shape(d)).toEqual([["added", 0, 0, 0, 1]]);
    expect(d.oldOf[1]).toBe(0);
  });

  it("ignores CR under cr:'ignore' (git's view after autocrlf), but never the final newline", () => {
    expect(diff("a\r\nb\r\n", "a\nb\n", "ignore").ranges).toEqual([]);
    expect(shape(diff("a\r\nb\r\n", "a\nb", "ignore"))).toEqual([["modified", 1, 2, 1, 2]]);
    expect(shape(diff("a\r\nb\r\n", "a\nB\n", "ignore"))).toEqual([["modified", 1, 2, 1, 2]]);
  });

  it("handles an empty file on either side and a file that is all new", () => {
    expect(shape(diff("", "a\nb\n"))).toEqual([["added", 0, 0, 0, 2]]);
    expect(shape(diff("a\nb\n", ""))).toEqual([["deleted", 0, 2, 0, 0]]);
    expect(shape(diff("", "\n"))).toEqual([["added", 0, 0, 0, 1]]);
    expect(rangeJson(diff("a\n", "").ranges[0])).toMatchObject({ kind: "deleted", after: 0 });
  });

  it("sees a whitespace-only change as a modified line", () => {
    expect(shape(diff("if (a) {\n  b();\n}\n", "if (a) {\n    b();\n}\n"))).toEqual([["modified", 1, 2, 1, 2]]);
  });

  it("shows a moved line as a deletion and an addition", () => {
    const d = diff("a\nb\nc\nd\n", "b\nc\nd\na\n");
    expect(shape(d)).toEqual([
      ["deleted", 0, 1, 0, 0],
      ["added", 4, 4, 3, 4],
    ]);
  });

  it("gives the ranges of git diff --histogram where Myers' shortest script pairs up braces (git 2.39, checked by hand)", () => {
    const old = "\nfunction f() {\n  return 1;\n}\n}\n\n}\n\nfor (;;) {\n  z();\n  }\n}\n";
    const now = "\nfunction f() {\n  return 1;\n\nfunction f() {\n  return 1;\n}\n}\n}\n\n}\n\nfor (;;) {\n  z();\n  }\n";
    // git diff --histogram: @@ -3,0 +4,4 @@ and @@ -12 +15,0 @@; Myers adds a third range at the top.
    expect(shape(diff(old, now))).toEqual([
      ["added", 3, 3, 3, 7],
      ["deleted", 11, 12, 15, 15],
    ]);
  });

  it("slides an ambiguous insertion where git's indent heuristic puts it, not as far down as it goes", () => {
    const old = "if (a) {\n  x();\n}\n}\n\n\nfunction f() {\n  return 1;\n}\n";
    const now = "if (a) {\n  x();\nif (a) {\n  x();\n}\n}\n\n\nfunction f() {\n  return 1;\n}\n";
    // git diff --histogram: @@ -0,0 +1,2 @@; with --no-indent-heuristic: @@ -2,0 +3,2 @@.
    expect(shape(diff(old, now))).toEqual([["added", 0, 0, 0, 2]]);
  });

  it("falls back to Myers in a region whose lines are all frequent", () => {
    const many: string[] = Array.from({ length: MAX_CHAIN + 10 }, (_, i) => (i % 2 ? "}" : "{"));
    const changed = many.slice();
    changed.splice(30, 1, "x");
    changed.splice(60, 0, "y");
    const d = diffLines(seq(asText(many)), seq(asText(changed)));
    checkDiff(d);
    expect(d.ranges.length).toBeLessThanOrEqual(3);
  });

  it("keeps every promise on random edits of code-like files, with a private or a shared line table", () => {
    for (let s = 1; s <= 300; s++) {
      const r = rng(s);
      const a = randomFile(r, Math.floor(r() * 40));
      const b = randomEdit(r, a);
      const ta = asText(a, r() < 0.8);
      const tb = asText(b, r() < 0.8, r() < 0.2 ? "\r\n" : "\n");
      const cr = r() < 0.5 ? "exact" : "ignore";
      const own = diffLines(seq(ta), seq(tb), { cr });
      checkDiff(own);
      const shared = diffLines(seq(ta), seq(tb), { cr, ids: new LineIds() });
      expect(shape(shared)).toEqual(shape(own));
    }
  });

  it("gives equal lines equal ids and others different ones, predicted from a like version or not", () => {
    for (let s = 1; s <= 50; s++) {
      const r = rng(900 + s);
      const a = seq(asText(randomFile(r, 30)));
      const b = seq(asText(randomEdit(r, a.lines as string[])));
      const ids = new LineIds();
      const ia = ids.of(a);
      const ib = ids.of(b, a);
      for (let i = 0; i < b.lines.length; i++) {
        for (let j = 0; j < a.lines.length; j++) expect(ib[i] === ia[j]).toBe(b.lines[i] === a.lines[j]);
        for (let j = 0; j < b.lines.length; j++) expect(ib[i] === ib[j]).toBe(b.lines[i] === b.lines[j]);
      }
      expect(ids.of(b)).toBe(ib);
    }
  });

  it("finds the range of a line by binary search", () => {
    const d = diff("a\nb\nc\nd\ne\nf\n", "A\nb\nc\nD\ne\nF\n");
    expect([0, 1, 2, 3, 4, 5].map((l) => rangeAtLine(d, l)?.id)).toEqual([1, undefined, undefined, 2, undefined, 3]);
  });
});

describe("regionHit", () => {
  it("takes shared lines and deletions on the edges, never the neighbour line of a deletion", () => {
    expect(regionHit(2, 4, 3, 5)).toBe(true);
    expect(regionHit(2, 4, 4, 5)).toBe(false);
    expect(regionHit(2, 4, 4, 4)).toBe(true);
    expect(regionHit(2, 4, 2, 2)).toBe(true);
    expect(regionHit(2, 4, 5, 5)).toBe(false);
    expect(regionHit(3, 3, 3, 3)).toBe(true);
    expect(regionHit(3, 3, 2, 3)).toBe(false);
    expect(regionHit(3, 3, 3, 4)).toBe(false);
    expect(regionHit(3, 3, 2, 4)).toBe(true);
  });
});
