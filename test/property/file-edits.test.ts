/**
 * Issue 20, properties (c): file_write's hash-tagged edit batches (core/edits.ts) against a reference model of SPEC 5
 * written here from the spec's words, on random files (CRLF mixes, no final newline, BOMs, empty files) and batches
 * (replace, delete and insert by `N:TAG` and bare-tag anchors, auto-indent on and off, overlaps, bad anchors); and every
 * diff of a write (core/render.ts docDiff, the `diff` file_write returns) is a patch `git apply` takes that makes
 * exactly the new file.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { type Edit, applyEdits, editedBytes } from "../../src/core/edits.js";
import { initHash, tagOf } from "../../src/core/hash.js";
import { docDiff } from "../../src/core/render.js";
import { type Eol, serialize } from "../../src/core/text.js";
import { ToolError } from "../../src/errors.js";
import { applyPatch, scratch } from "./git-oracle.js";
import { check } from "./runs.js";
import { type Version, bytesOf, lineText, version } from "./versions.js";

await initHash();
const tmp = scratch();
afterAll(tmp.cleanup);

/** An edit as generated: line numbers (1-based, possibly past the end), how to write each anchor, the content. */
interface EditSpec {
  type: "replace" | "delete" | "insert";
  start?: number;
  end?: number;
  /** "numbered" N:TAG, "bare" TAG, "wrong" N:TAG with another line's tag. */
  form: "numbered" | "bare" | "wrong";
  content: string;
  autoIndent?: boolean;
}

type Outcome = { bytes: Buffer } | { code: string };

/** SPEC 5's `content`: split on \n, one trailing \n ignored, "" one empty line; a \r before \n belongs to the terminator. */
function contentLines(content: string): string[] {
  const lines = content.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
}

const blank = (l: string) => l.trim() === "";
const indentOf = (l: string) => /^[ \t]*/.exec(l)![0];

/** The reference model: what SPEC 5 says the batch makes of `doc`, or the error code it says the batch gets. */
function model(doc: Version, edits: readonly EditSpec[]): Outcome {
  const tags = doc.lines.map(tagOf);
  const n = doc.lines.length;
  type Op = { index: number; from: number; count: number; lines: string[] };
  const ops: Op[] = [];
  for (const [index, e] of edits.entries()) {
    const anchor = (line: number | undefined): number | string | undefined => {
      if (line === undefined) return undefined;
      if (e.form === "bare") {
        const tag = line <= n ? tags[line - 1] : "0000";
        const at = tags.flatMap((t, i) => (t === tag ? [i + 1] : []));
        return at.length === 1 ? at[0] : at.length ? "TAG_AMBIGUOUS" : "TAG_NOT_FOUND";
      }
      if (line > n || e.form === "wrong") return "TAG_MISMATCH";
      return line;
    };
    const s = anchor(e.start);
    if (typeof s === "string") return { code: s };
    const t = anchor(e.end);
    if (typeof t === "string") return { code: t };
    let lines = e.type === "delete" ? [] : contentLines(e.content);
    const anchorLine = e.type === "insert" ? (s ?? t) : s;
    if (e.autoIndent !== false && anchorLine !== undefined) {
      const indent = indentOf(doc.lines[anchorLine - 1]);
      const first = lines.find((l) => !blank(l));
      if (indent && first !== undefined && indentOf(first) === "") lines = lines.map((l) => (blank(l) ? l : indent + l));
    }
    if (e.type === "insert") {
      let after: number;
      if (s !== undefined && t !== undefined) {
        if (t !== s + 1) return { code: "INVALID_PARAMS" };
        after = s;
      } else if (s !== undefined) after = s;
      else if (t !== undefined) after = t - 1;
      else if (n === 0) after = 0;
      else return { code: "INVALID_PARAMS" };
      ops.push({ index, from: after, count: 0, lines });
    } else {
      if (s === undefined) return { code: "INVALID_PARAMS" };
      const last = t ?? s;
      if (last < s) return { code: "INVALID_PARAMS" };
      ops.push({ index, from: s - 1, count: last - s + 1, lines });
    }
  }
  // Overlapping ranges, or an insert point strictly inside a replaced or deleted range.
  const ranges = ops.filter((o) => o.count > 0);
  for (const a of ranges) for (const b of ranges) if (a !== b && a.from < b.from + b.count && b.from < a.from + a.count) return { code: "OVERLAP" };
  for (const i of ops.filter((o) => o.count === 0)) for (const r of ranges) if (r.from < i.from && i.from < r.from + r.count) return { code: "OVERLAP" };

  const crlf = doc.eols.filter((x) => x === "\r\n").length;
  const lf = doc.eols.filter((x) => x === "\n").length;
  const eol: Eol = crlf > lf ? "\r\n" : "\n";
  const finalNewline = n === 0 || doc.eols[n - 1] !== "";
  const lines: string[] = [];
  const eols: ("" | Eol)[] = [];
  for (let gap = 0; gap <= n; gap++) {
    // Before old line gap+1: the inserts after line `gap` in batch order, then a range starting there.
    for (const o of ops.filter((x) => x.count === 0 && x.from === gap).sort((x, y) => x.index - y.index))
      for (const l of o.lines) lines.push(l), eols.push(eol);
    if (gap === n) break;
    const range = ranges.find((r) => r.from === gap);
    if (range) for (const l of range.lines) lines.push(l), eols.push(eol);
    if (!ranges.some((r) => r.from <= gap && gap < r.from + r.count)) lines.push(doc.lines[gap]), eols.push(doc.eols[gap] || eol);
  }
  if (eols.length) eols[eols.length - 1] = finalNewline ? eols[eols.length - 1] : "";
  const bytes = bytesOf({ bom: doc.bom, lines, eols });
  return bytes.equals(bytesOf(doc)) ? { code: "NO_CHANGE" } : { bytes };
}

/** What core/edits.ts makes of the batch: the new bytes, or the code of the ToolError it throws. */
function implementation(doc: Version, specs: readonly EditSpec[]): Outcome & { doc?: Version } {
  const tags = doc.lines.map(tagOf);
  const anchor = (e: EditSpec, line: number | undefined) => {
    if (line === undefined) return undefined;
    const tag = line <= doc.lines.length ? tags[line - 1] : "0000";
    if (e.form === "bare") return tag;
    const other = tags.find((t) => t !== tag) ?? (tag === "0000" ? "0001" : "0000");
    return `${line}:${e.form === "wrong" ? other : tag}`;
  };
  const edits: Edit[] = specs.map((e) => ({
    type: e.type,
    ...(e.start !== undefined ? { startline: anchor(e, e.start) } : {}),
    ...(e.end !== undefined ? { endline: anchor(e, e.end) } : {}),
    ...(e.type !== "delete" ? { content: e.content } : {}),
    ...(e.autoIndent !== undefined ? { auto_indent: e.autoIndent } : {}),
  }));
  try {
    const applied = applyEdits({ bom: doc.bom, lines: doc.lines.slice(), eols: doc.eols.slice() }, tags, edits);
    const bytes = serialize(applied.doc);
    // file_write writes the spliced bytes: they must be the document's, byte for byte.
    const spliced = editedBytes(bytesOf(doc), doc, applied);
    if (!spliced.equals(bytes)) return { code: `SPLICE_DIFFERS: ${JSON.stringify(spliced.toString("latin1"))} vs ${JSON.stringify(bytes.toString("latin1"))}` };
    return bytes.equals(bytesOf(doc)) ? { code: "NO_CHANGE" } : { bytes, doc: applied.doc };
  } catch (e) {
    if (e instanceof ToolError) return { code: e.code };
    throw e;
  }
}

const INDENTED = ["    x = 1;", "\tif (b) {", "  // two", "", "   ", "y", "z();"];
const content = fc.oneof(
  fc.array(fc.oneof(lineText, fc.constantFrom(...INDENTED)), { minLength: 1, maxLength: 4 }).map((ls) => ls.join("\n")),
  fc.array(lineText, { minLength: 1, maxLength: 3 }).map((ls) => `${ls.join("\r\n")}\n`),
  fc.constant(""),
);
/**
 * A batch for a file of `n` lines: mostly well-formed edits on its lines (an empty file takes inserts without anchors);
 * `sloppy` batches also anchor past the end, with a wrong tag, with an insert's two anchors apart or an end before the
 * start, which the model says how to refuse.
 */
const batch = (doc: Version, sloppy: boolean) => {
  const n = doc.lines.length;
  const tags = doc.lines.map(tagOf);
  const unique = (l: number | undefined) => l !== undefined && l <= n && tags.filter((t) => t === tags[l - 1]).length === 1;
  const line = fc.integer({ min: 1, max: Math.max(1, sloppy ? n + 1 : n) });
  const spec = fc
    .record({
      type: n || sloppy ? fc.constantFrom<EditSpec["type"]>("replace", "replace", "delete", "insert", "insert") : fc.constant<EditSpec["type"]>("insert"),
      start: n || sloppy ? fc.option(line, { nil: undefined, freq: sloppy ? 6 : 1000 }) : fc.constant(undefined),
      endOffset: fc.option(fc.integer({ min: sloppy ? -1 : 0, max: 3 }), { nil: undefined }),
      form: sloppy
        ? fc.constantFrom<EditSpec["form"]>("numbered", "numbered", "bare", "wrong")
        : fc.constantFrom<EditSpec["form"]>("numbered", "numbered", "numbered", "bare"),
      content,
      autoIndent: fc.constantFrom(undefined, undefined, true, false),
      endOnly: fc.boolean(),
    })
    .map(({ start, endOffset, endOnly, ...rest }): EditSpec => {
      if (rest.type === "insert") {
        // An insert names its point by startline, endline, or both (adjacent; apart only when sloppy).
        if (start === undefined) return rest;
        if (endOnly) return { ...rest, end: start };
        return endOffset === undefined ? { ...rest, start } : { ...rest, start, end: Math.max(1, start + (sloppy ? endOffset : 1)) };
      }
      const end = endOffset === undefined || start === undefined ? undefined : Math.min(Math.max(1, start + endOffset), sloppy ? n + 1 : n);
      return { ...rest, start, end };
    })
    .map((e): EditSpec => {
      // A careful caller writes a bare tag only where it is unique.
      const bareOk = (e.start === undefined || unique(e.start)) && (e.end === undefined || unique(e.end));
      return !sloppy && e.form === "bare" && !bareOk ? { ...e, form: "numbered" } : e;
    });
  return fc.array(spec, { minLength: 1, maxLength: 5 });
};
const fileAndBatch = fc.tuple(version({ max: 16 }), fc.boolean()).chain(([doc, sloppy]) => batch(doc, sloppy).map((edits) => ({ doc, edits })));

describe("file_write edits against SPEC 5's model (issue 20)", () => {
  it("makes the file the model makes, or refuses the batch with the model's code", async () => {
    await check(
      fc.property(fileAndBatch, ({ doc, edits }) => {
        const mine = implementation(doc, edits);
        const spec = model(doc, edits);
        if ("code" in spec) expect(mine).toMatchObject({ code: spec.code });
        else expect(("bytes" in mine ? mine.bytes : mine).toString()).toBe(spec.bytes.toString());
      }),
      400,
    );
  });

  it("returns a diff git apply takes, which makes exactly the new file", async () => {
    await check(
      fc.property(fileAndBatch, ({ doc, edits }) => {
        const mine = implementation(doc, edits);
        fc.pre("bytes" in mine && mine.doc !== undefined);
        const { diff } = docDiff("f", doc, mine.doc!);
        const git = applyPatch(tmp.dir, bytesOf(doc), diff);
        expect(git.refused).toBe("");
        expect(git.after!.equals((mine as { bytes: Buffer }).bytes)).toBe(true);
      }),
      60,
    );
  });
});
