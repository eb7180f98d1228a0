/**
 * Issue 20, properties (a), on the pure cores: staging, unstaging and rolling back whole ranges build exactly what
 * `git apply --unidiff-zero` of the same hunks of git's own diff builds (each range is a hunk of `git diff -U0
 * --histogram`, line-diff.test.ts checks that), and a selection of single lines followed by the rest of the file
 * always ends at the other version, nothing lost, duplicated or reordered. The IO around them (line endings under
 * git's conversion, filters, modes, BOMs, new and deleted files, the worktree left alone) is line-git.e2e.test.ts's.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { FileVersions } from "../../src/core/file-versions.js";
import { type CrPolicy, type LineDiff, LineIds } from "../../src/core/line-diff.js";
import { type Built, rollbackLines, stageLines, unstageLines } from "../../src/core/stage-lines.js";
import { type Eol, dominantEol, parseText, serialize, splicedBytes } from "../../src/core/text.js";
import { type Change, applyPatch, changesOf, gitDiff, scratch } from "./git-oracle.js";
import { check } from "./runs.js";
import { type Version, bytesOf, edited, seqOf, version, versionEdit, versionPair } from "./versions.js";

const tmp = scratch();
afterAll(tmp.cleanup);

/** The worktree as git's clean filter leaves it where git converts line endings (CRLF to LF). */
const cleaned = (v: Version): Version => ({ ...v, eols: v.eols.map((e) => (e === "\r\n" ? "\n" : e)) });
const bytesOfBuilt = (b: Built, bom: boolean) => serialize({ bom, lines: b.lines, eols: b.eols });

/** A hunk of `git diff -U0`: the change it makes and its body (the lines after its `@@` line). */
interface Hunk {
  change: Change;
  body: string[];
}

function gitHunks(old: Buffer, now: Buffer): Hunk[] {
  const diff = gitDiff(tmp.dir, old, now, ["-U0"]);
  return diff
    .split(/\n(?=@@ )/)
    .slice(1)
    .map((block) => {
      const [header, ...body] = block.replace(/\n$/, "").split("\n");
      return { change: changesOf(`${header}\n${body.join("\n")}`)[0], body };
    });
}

const overlaps = (c: Change, r: Change) => (c.start < r.end && r.start < c.end) || (c.oldStart < r.oldEnd && r.oldStart < c.oldEnd);

/**
 * A patch of some of git's hunks, renumbered as `git add -p` does when it applies only some (git apply places a
 * zero-context insertion by its new line number, which the hunks left out move), or reversed: to apply to `now`.
 */
function subsetPatch(hunks: readonly Hunk[], reverse: boolean): string | null {
  if (!hunks.length) return null;
  const out = ["--- a/f", "+++ b/f"];
  let delta = 0;
  for (const { change, body } of hunks) {
    const [o0, o1, n0, n1] = reverse ? [change.start, change.end, change.oldStart, change.oldEnd] : [change.oldStart, change.oldEnd, change.start, change.end];
    const oldLen = o1 - o0;
    const newLen = n1 - n0;
    const newAt = o0 + delta;
    out.push(`@@ -${oldLen ? o0 + 1 : o0},${oldLen} +${newLen ? newAt + 1 : newAt},${newLen} @@`);
    // A `\ No newline` line belongs to the line before it, on whichever side that line is.
    const lines = reverse ? reversed(body) : body;
    out.push(...lines);
    delta += newLen - oldLen;
  }
  return `${out.join("\n")}\n`;
}

/** A hunk body read backwards: its `+` lines removed, its `-` lines added (the removals first, as in a patch). */
function reversed(body: readonly string[]): string[] {
  const minus: string[] = [];
  const plus: string[] = [];
  let last: string[] | undefined;
  for (const l of body) {
    if (l.startsWith("\\")) last?.push(l);
    else if (l[0] === "-") (last = plus).push(`+${l.slice(1)}`);
    else if (l[0] === "+") (last = minus).push(`-${l.slice(1)}`);
  }
  return [...minus, ...plus];
}

/**
 * What git builds of `base` (`old`, or with `reverse` `now`) with the hunks of git's diff old -> now that make the
 * selected ranges of `diff` applied (reversed), or undefined when git's hunks and the ranges do not line up one to one.
 */
function gitBuilds(diff: LineDiff, selected: ReadonlySet<number>, old: Buffer, now: Buffer, reverse = false): string | undefined {
  const taken: Hunk[] = [];
  for (const h of gitHunks(old, now)) {
    const hit = diff.ranges.filter((r) => overlaps(h.change, r));
    if (hit.length !== 1) return undefined;
    if (selected.has(hit[0].id)) taken.push(h);
  }
  const base = reverse ? now : old;
  const patch = subsetPatch(taken, reverse);
  if (!patch) return body(base);
  const git = applyPatch(tmp.dir, base, patch, { zero: true });
  expect(git.refused).toBe("");
  return body(git.after!);
}

/**
 * A version's bytes as our line diff compares them with git's (line-diff.ts): a last line without newline as the same
 * line with LF, so the two diffs align alike, and no BOM (SPEC 4: not content; the IO layer keeps it). The final
 * newline and the BOM themselves are what the unit tests and the end-to-end runs check.
 */
const compared = (v: Version): Buffer => bytesOf({ ...v, bom: false, eols: v.eols.map((e) => e || "\n") });
/** Bytes without the last line's terminator: what the oracles compare (see `compared`). */
const body = (b: Buffer) => b.toString("utf8").replace(/\r?\n$/, "");

/** Range ids picked by a mask: range k is selected when mask[k mod its length] is set. */
const pick = (diff: LineDiff, mask: readonly boolean[]) => diff.ranges.filter((r) => mask.length && mask[r.id % mask.length]).map((r) => r.id);
const mask = fc.array(fc.boolean(), { minLength: 1, maxLength: 6 });
const crPolicy = fc.constantFrom<CrPolicy>("exact", "exact", "ignore");

describe("line staging against git apply of git's hunks (issue 20)", () => {
  it("stages the selected ranges into the index as git apply --cached of their hunks would", async () => {
    await check(
      fc.property(versionPair(), crPolicy, mask, ([index, worktree], cr, m) => {
        const idx = seqOf(index);
        const v = new FileVersions(idx, idx, seqOf(worktree), cr, new LineIds());
        const ranges = pick(v.headToWorktree, m);
        fc.pre(ranges.length > 0);
        const built = stageLines(v, { ranges }, { eol: cr === "ignore" ? "\n" : undefined });
        const now = compared(cr === "ignore" ? cleaned(worktree) : worktree);
        const git = gitBuilds(v.headToWorktree, new Set(ranges), compared(index), now);
        fc.pre(git !== undefined);
        expect(body(bytesOfBuilt(built, false))).toBe(git);
      }),
      60,
    );
  });

  it("unstages the selected ranges back to HEAD's lines as git apply -R --cached of their hunks would", async () => {
    await check(
      fc.property(versionPair(), mask, ([head, index], m) => {
        const v = new FileVersions(seqOf(head), seqOf(index), seqOf(index), "exact", new LineIds());
        const ranges = pick(v.headToWorktree, m);
        fc.pre(ranges.length > 0);
        const built = unstageLines(v, { ranges });
        const git = gitBuilds(v.headToWorktree, new Set(ranges), compared(head), compared(index), true);
        fc.pre(git !== undefined);
        expect(body(bytesOfBuilt(built, false))).toBe(git);
      }),
      40,
    );
  });

  it("rolls the selected ranges of the worktree back to HEAD's lines as git apply -R of their hunks would", async () => {
    await check(
      fc.property(versionPair(), crPolicy, mask, ([head, worktree], cr, m) => {
        const v = new FileVersions(seqOf(head), seqOf(head), seqOf(worktree), cr, new LineIds());
        const ranges = pick(v.headToWorktree, m);
        fc.pre(ranges.length > 0);
        // HEAD's lines take the worktree's terminator where git converts (git_rollback_lines does the same), so there
        // the oracle and the result are compared with LF for CRLF.
        const eol: Eol | undefined = cr === "ignore" ? dominantEol(worktree.eols) : undefined;
        const built = rollbackLines(v, { ranges }, { eol });
        const clean = cr === "ignore" ? cleaned(worktree) : worktree;
        const git = gitBuilds(v.headToWorktree, new Set(ranges), compared(head), compared(clean), true);
        fc.pre(git !== undefined);
        const mine = body(bytesOf({ bom: false, lines: built.lines, eols: built.eols }));
        const lf = (t: string) => (cr === "ignore" ? t.replace(/\r\n/g, "\n") : t);
        expect(lf(mine)).toBe(lf(git!));
      }),
      40,
    );
  });
});

/** Worktree lines picked by a mask, 1-based. */
const pickLines = (n: number, m: readonly boolean[]) => Array.from({ length: n }, (_, i) => i + 1).filter((l) => m[l % m.length]);

describe("line selections end where the whole file does (issue 20)", () => {
  const three = fc
    .tuple(version(), fc.array(versionEdit, { maxLength: 4 }), fc.array(versionEdit, { maxLength: 4 }), mask, crPolicy)
    .map(([head, e1, e2, m, cr]) => ({ head, worktree: edited(head, e1), other: edited(head, e2), m, cr }));
  const text = (b: { lines: readonly string[]; eols: readonly string[] }) => b.lines.map((l, i) => l + b.eols[i]).join("");

  it("staging some lines, then every range, leaves the worktree in the index (LF where git converts)", async () => {
    await check(
      fc.property(three, ({ head, worktree, m, cr }) => {
        const eol = cr === "ignore" ? "\n" : undefined;
        let v = new FileVersions(seqOf(head), seqOf(head), seqOf(worktree), cr, new LineIds());
        const first = stageLines(v, { lines: pickLines(worktree.lines.length, m) }, { eol });
        v = v.withIndex({ lines: first.lines, eols: first.eols });
        const all = v.headToWorktree.ranges.map((r) => r.id);
        const rest = stageLines(v, { ranges: all }, { eol });
        expect(text(rest)).toBe(text(cr === "ignore" ? cleaned(worktree) : worktree));
      }),
      300,
    );
  });

  it("unstaging some lines, then every range, leaves HEAD in the index", async () => {
    await check(
      fc.property(three, ({ head, worktree, m }) => {
        // Everything staged: the index is the worktree.
        let v = new FileVersions(seqOf(head), seqOf(worktree), seqOf(worktree), "exact", new LineIds());
        const first = unstageLines(v, { lines: pickLines(worktree.lines.length, m) });
        v = v.withIndex({ lines: first.lines, eols: first.eols });
        const rest = unstageLines(v, { ranges: v.headToWorktree.ranges.map((r) => r.id) });
        expect(text(rest)).toBe(text(head));
      }),
      300,
    );
  });

  it("rolling back some lines, then every range left, leaves HEAD in the worktree", async () => {
    await check(
      fc.property(three, ({ head, worktree, other, m }) => {
        // The index holds a third version: rollback does not look at it.
        const v = new FileVersions(seqOf(head), seqOf(other), seqOf(worktree), "exact", new LineIds());
        const first = rollbackLines(v, { lines: pickLines(worktree.lines.length, m) });
        const after = v.withWorktree({ lines: first.lines, eols: first.eols });
        const ids = after.headToWorktree.ranges.map((r) => r.id);
        const rest = ids.length ? rollbackLines(after, { ranges: ids }) : first;
        expect(text(rest)).toBe(text(head));
      }),
      300,
    );
  });
});

describe("a staged blob's bytes spliced from the worktree's (issue 23)", () => {
  // Lines with a `x` get characters of two, three and four UTF-8 bytes, so a byte offset taken for a character count fails.
  const wide = (v: Version): Version => ({ ...v, lines: v.lines.map((l) => (l.includes("x") ? `${l} é€😀` : l)) });
  const runs = fc
    .tuple(version(), fc.array(versionEdit, { maxLength: 5 }), fc.array(versionEdit, { maxLength: 3 }), mask, mask, crPolicy, fc.boolean(), fc.boolean())
    .map(([head, e1, e2, lines, ranges, cr, thirdIndex, indexBom]) => ({
      head: wide(head),
      index: wide({ ...(thirdIndex ? edited(head, e2) : head), bom: indexBom }),
      worktree: wide(edited(head, e1)),
      lines,
      ranges,
      cr,
    }));

  it("are serialize's bytes of the staged lines, whatever the selection, terminators and BOMs", async () => {
    await check(
      fc.property(runs, ({ head, index, worktree, lines, ranges, cr }) => {
        const bytes = bytesOf(worktree);
        const parsed = parseText(bytes, "f");
        const v = new FileVersions(seqOf(head), seqOf(index), parsed, cr, new LineIds());
        const sel = { lines: pickLines(parsed.lines.length, lines), ranges: pick(v.headToWorktree, ranges) };
        const built = stageLines(v, sel, { eol: cr === "ignore" ? "\n" : undefined });
        const doc = { bom: index.bom, lines: built.lines, eols: built.eols };
        expect(splicedBytes(doc, built.newLines, parsed, bytes).equals(serialize(doc))).toBe(true);
      }),
      400,
    );
  });
});
