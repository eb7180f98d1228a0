/**
 * Generators of file versions for the property tests: code-like lines drawn from a small pool (so braces, blank lines
 * and repeated statements meet the ambiguous cases of a diff), LF, CRLF and mixed line endings, a missing final newline,
 * a BOM, empty files; and edits of a version (insert, delete, replace, move, a terminator changed) that make the next.
 */
import fc from "fast-check";
import type { LineSeq } from "../../src/core/line-diff.js";
import type { Eol } from "../../src/core/text.js";

/** A version of a file: its lines without terminators, each one's terminator ("" only for a last line), its BOM. */
export interface Version {
  bom: boolean;
  lines: string[];
  eols: ("" | Eol)[];
}

const POOL = ["}", "", "  return x;", "  x += 1;", "function f() {", "  // note", "  if (a) {", "    b();", "  }", "const y = 2;", "\tdeep();", "a", "b"];

/** One line's text: mostly from the pool, else one of a few numbered lines (rare lines anchor the histogram). */
export const lineText = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...POOL) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 30 }).map((n) => `line ${n}`) },
);

export type EolStyle = "lf" | "crlf" | "mixed";
export const eolStyle = fc.constantFrom<EolStyle>("lf", "lf", "crlf", "mixed");

/** A terminator drawn for a style; `pick` in [0,1) decides a mixed one. */
const eolFor = (style: EolStyle, pick: number): Eol => (style === "lf" ? "\n" : style === "crlf" ? "\r\n" : pick < 0.5 ? "\n" : "\r\n");

/** A version of up to `max` lines in one line-ending style, with or without its final newline and a BOM. */
export function version(opts: { max?: number; bom?: boolean } = {}): fc.Arbitrary<Version> {
  return fc
    .record({
      texts: fc.array(fc.tuple(lineText, fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })), { maxLength: opts.max ?? 24 }),
      style: eolStyle,
      final: fc.boolean(),
      bom: opts.bom === false ? fc.constant(false) : fc.boolean(),
    })
    .map(({ texts, style, final, bom }) => {
      const eols: ("" | Eol)[] = texts.map(([, p]) => eolFor(style, p));
      if (eols.length && !final) eols[eols.length - 1] = "";
      return settled({ bom, lines: texts.map(([t]) => t), eols });
    });
}

/** One edit of a version; positions are fractions of its length, so any edit applies to any version. */
export type VersionEdit =
  | { kind: "insert"; at: number; texts: string[] }
  | { kind: "delete" | "move"; at: number; count: number; to: number }
  | { kind: "replace"; at: number; count: number; texts: string[] }
  | { kind: "eol"; at: number }
  | { kind: "final" };

const fraction = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
export const versionEdit: fc.Arbitrary<VersionEdit> = fc.oneof(
  fc.record({ kind: fc.constant("insert" as const), at: fraction, texts: fc.array(lineText, { minLength: 1, maxLength: 4 }) }),
  fc.record({ kind: fc.constantFrom("delete" as const, "move" as const), at: fraction, count: fc.integer({ min: 1, max: 3 }), to: fraction }),
  fc.record({
    kind: fc.constant("replace" as const),
    at: fraction,
    count: fc.integer({ min: 1, max: 3 }),
    texts: fc.array(lineText, { minLength: 1, maxLength: 3 }),
  }),
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("eol" as const), at: fraction }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("final" as const) }) },
);

/** `v` with the edits applied; new lines take the version's usual terminator, as an editor would write them. */
export function edited(v: Version, edits: readonly VersionEdit[]): Version {
  const lines = v.lines.slice();
  const eols = v.eols.slice();
  const final = !eols.length || eols[eols.length - 1] !== "";
  const usual: Eol = eols.filter((e) => e === "\r\n").length > eols.filter((e) => e === "\n").length ? "\r\n" : "\n";
  const at = (f: number, extra = 0) => Math.floor(f * (lines.length + extra));
  for (let k = 0; k < eols.length; k++) if (eols[k] === "") eols[k] = usual;
  for (const e of edits) {
    if (e.kind === "insert") {
      const i = at(e.at, 1);
      lines.splice(i, 0, ...e.texts);
      eols.splice(i, 0, ...e.texts.map(() => usual));
    } else if (e.kind === "eol") {
      if (!lines.length) continue;
      const i = at(e.at);
      eols[i] = eols[i] === "\n" ? "\r\n" : "\n";
    } else if (e.kind === "final") {
      // toggles the final line break once, after the loop, whatever the edits did to the lines
    } else {
      if (!lines.length) continue;
      const i = at(e.at);
      const gone = lines.splice(i, e.count);
      const goneEols = eols.splice(i, e.count);
      if (e.kind === "replace") {
        lines.splice(i, 0, ...e.texts);
        eols.splice(i, 0, ...e.texts.map(() => usual));
      } else if (e.kind === "move") {
        const j = at(e.to, 1);
        lines.splice(j, 0, ...gone);
        eols.splice(j, 0, ...goneEols);
      }
    }
  }
  const toggles = edits.filter((e) => e.kind === "final").length % 2 === 1;
  if (eols.length && final !== toggles) eols[eols.length - 1] = eols[eols.length - 1] || usual;
  else if (eols.length) eols[eols.length - 1] = "";
  return settled({ bom: v.bom, lines, eols });
}

/** An empty last line without terminator is no line at all (SPEC 4): drop it, as reading the bytes would. */
function settled(v: Version): Version {
  while (v.lines.length && v.lines[v.lines.length - 1] === "" && v.eols[v.eols.length - 1] === "") {
    v.lines.pop();
    v.eols.pop();
  }
  return v;
}

/** A version and the next one, made from it by a few edits. */
export const versionPair = (opts: { max?: number; bom?: boolean } = {}) =>
  fc.tuple(version(opts), fc.array(versionEdit, { maxLength: 5 })).map(([a, edits]) => [a, edited(a, edits)] as const);

/** A version's bytes (BOM first, each line with its terminator). */
export function bytesOf(v: Version): Buffer {
  return Buffer.from((v.bom ? "\ufeff" : "") + v.lines.map((l, i) => l + v.eols[i]).join(""), "utf8");
}

export const seqOf = (v: Version): LineSeq => ({ lines: v.lines, eols: v.eols });
export const EMPTY_VERSION: Version = { bom: false, lines: [], eols: [] };
