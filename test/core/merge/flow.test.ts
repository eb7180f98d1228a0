import { describe, expect, it } from "vitest";
import { tagOf } from "../../../src/core/hash.js";
import { autoResolve } from "../../../src/core/merge/auto-resolve.js";
import { resolveBlock } from "../../../src/core/merge/keep-table.js";
import { locateBlocks, rewriteRuns } from "../../../src/core/merge/locate.js";
import { chooseMarkerSize } from "../../../src/core/merge/markers.js";
import { type Lines, mergeTexts } from "../../../src/core/merge/three-way.js";
import { dominantEol, splitText } from "../../../src/core/text.js";
import { realMerge } from "./git-ref.js";

/**
 * The pure steps the conflict tools will chain, on a real git merge (the worked example): three blocks, one
 * auto-resolved, one taken from theirs, one composed line by line from both sides.
 */
const BASE = ["import { a } from './a';", "", "const timeout = 30;", "", "function greet(name) {", "  return 'Hello ' + name;", "}", "", "export { greet };"];
const OURS = [
  "import { a, b } from './a';",
  "",
  "const timeout = 60;",
  "",
  "function greet(name) {",
  "  return 'Hi ' + name + '!';",
  "}",
  "",
  "export { greet };",
];
const THEIRS = [
  "import { a } from './a.js';",
  "",
  "const timeout = 45;",
  "",
  "function greet(name, punct) {",
  "  return 'Hello ' + name + punct;",
  "}",
  "",
  "export { greet, a };",
];

const text = (f: Lines, eol = "\n") => f.lines.map((l, i) => l + (f.eols[i] === "" ? "" : eol)).join("");

function run(eolAttr: boolean) {
  const join = (lines: string[]) => lines.join("\n") + "\n";
  const git = realMerge(join(BASE), join(OURS), join(THEIRS), eolAttr ? { attributes: "f.txt text eol=crlf\n" } : {});
  const m = mergeTexts(git.base, git.ours, git.theirs);
  const worktree = splitText(git.worktree);
  const eol = dominantEol(worktree.eols);
  const lineEols = eolAttr ? ("file" as const) : ("keep" as const);
  const labels = { ours: "HEAD", base: "merge base", theirs: "topic" };
  // 1. The operation stopped: auto-resolve and write the file with the daemon's markers.
  const size = chooseMarkerSize([git.base, git.ours, git.theirs].map((t) => splitText(t).lines));
  const auto = m.blocks.map((b) => autoResolve(b));
  const written = rewriteRuns(m, worktree, locateBlocks(m, worktree.lines, 7).located, { markerSize: size, labels, eol, lineEols, resolutions: auto });
  // 2. git_conflicts: the blocks left, numbered in file order.
  let listed = locateBlocks(m, written.lines, size);
  // 3. git_conflict_resolve: block 1 takes theirs, then (listing again) block 1 is composed from both sides.
  const apply = (doc: { lines: string[]; eols: string[] }, at: (typeof listed.located)[number], choice: Parameters<typeof resolveBlock>[1]) => {
    const r = resolveBlock(m.blocks[at.block], choice, { eol, atEnd: at.end === doc.lines.length - 1, lineEols, label: "block 1" });
    doc.lines.splice(at.start, at.end - at.start + 1, ...r.lines);
    doc.eols.splice(at.start, at.end - at.start + 1, ...r.eols);
  };
  const doc = { lines: [...written.lines], eols: [...written.eols] as string[] };
  apply(doc, listed.located[0], { take: "theirs" });
  listed = locateBlocks(m, doc.lines, size);
  const last = m.blocks[listed.located[0].block];
  apply(doc, listed.located[0], { keep: [`theirs:1:${tagOf(last.theirs.lines[0])}`, { text: "  // was: 'Hello ' + name + punct" }, "ours:2"] });
  return { git, m, auto, written, doc, size, eol };
}

describe("the conflict tools' pure steps on a real merge", () => {
  it("auto-resolves one block, takes theirs for one, composes one from both sides", () => {
    const { git, m, auto, written, doc, size } = run(false);
    expect(git.worktree).toContain("<<<<<<< HEAD");
    expect(m.blocks).toHaveLength(3);
    expect(auto.map((a) => a?.rule ?? null)).toEqual(["words", null, null]);
    expect(auto[0]?.lines).toEqual(["import { a, b } from './a.js';"]);
    expect(size).toBe(7);
    expect(locateBlocks(m, written.lines, size).located.map((l) => l.block)).toEqual([1, 2]);
    expect(text(doc as Lines)).toBe(
      [
        "import { a, b } from './a.js';",
        "",
        "const timeout = 45;",
        "",
        "function greet(name, punct) {",
        "  // was: 'Hello ' + name + punct",
        "  return 'Hi ' + name + '!';",
        "}",
        "",
        "export { greet, a };",
        "",
      ].join("\n"),
    );
    expect(locateBlocks(m, doc.lines, size)).toMatchObject({ located: [], stray: [], unmatched: [] });
  });

  it("does the same on a CRLF worktree over LF index stages, writing CRLF throughout", () => {
    const { git, doc, eol } = run(true);
    expect(eol).toBe("\r\n");
    expect(git.ours).not.toContain("\r");
    expect(new Set(doc.eols)).toEqual(new Set(["\r\n"]));
    expect(doc.lines[2]).toBe("const timeout = 45;");
  });
});
