/**
 * Random texts for the merge and changelist properties: lines of a few words from a small alphabet (so the sides'
 * changes meet and conflict), each version an edit of the base, with CRLF lines and a missing final newline now and then.
 */
import fc from "fast-check";

const WORDS = ["a", "b", "c", "x"] as const;

export interface Line {
  text: string;
  eol: "\n" | "\r\n";
}

export const lineText = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }).map((ws) => ws.join(" "));
const eol = fc.constantFrom<Line["eol"]>("\n", "\n", "\n", "\r\n");
export const line = fc.record({ text: lineText, eol });

export interface Edit {
  op: "insert" | "delete" | "replace" | "word";
  at: number;
  line: Line;
  word: string;
}

/** One edit of a list of lines: `at` is taken modulo the length, so every edit applies. */
const edit: fc.Arbitrary<Edit> = fc.record({
  op: fc.constantFrom<Edit["op"]>("insert", "delete", "replace", "word"),
  at: fc.nat(),
  line,
  word: fc.constantFrom<string>(...WORDS, "y", "z"),
});

export function applyEdits(lines: readonly Line[], edits: readonly Edit[]): Line[] {
  const out = [...lines];
  for (const e of edits) {
    const at = e.at % (out.length + 1);
    if (e.op === "insert") out.splice(at, 0, e.line);
    else if (!out.length || at === out.length) continue;
    else if (e.op === "delete") out.splice(at, 1);
    else if (e.op === "replace") out[at] = e.line;
    else {
      const words = out[at].text.split(" ");
      words[e.at % words.length] = e.word;
      out[at] = { ...out[at], text: words.join(" ") };
    }
  }
  return out;
}

/** A version's text: its lines, the last one without its terminator when `finalNewline` is false. */
export function textOf(lines: readonly Line[], finalNewline: boolean): string {
  return lines.map((l, i) => (i === lines.length - 1 && !finalNewline ? l.text : l.text + l.eol)).join("");
}

export const edits = fc.array(edit, { minLength: 1, maxLength: 4 });
export const lines = (maxLength: number) => fc.array(line, { minLength: 1, maxLength });
/** The final newline is there three times in four. */
export const finalNewline = fc.constantFrom(true, true, true, false);

/** base, ours and theirs: two edits of one base. */
export const threeVersions = fc
  .record({ base: lines(8), ours: edits, theirs: edits, finals: fc.tuple(finalNewline, finalNewline, finalNewline) })
  .map(({ base, ours, theirs, finals }) => ({
    base: textOf(base, finals[0]),
    ours: textOf(applyEdits(base, ours), finals[1]),
    theirs: textOf(applyEdits(base, theirs), finals[2]),
  }));

/**
 * base, ours and theirs of lines too frequent for git's histogram diff (each of a few lines occurring well over its 64),
 * so it falls back to its Myers on the whole file; the sides insert, delete and replace lines here and there.
 */
const frequentLine = fc.record({ text: fc.constantFrom("{", "}", ""), eol: fc.constant<Line["eol"]>("\n") });
const frequentEdit: fc.Arbitrary<Edit> = fc.record({
  op: fc.constantFrom<Edit["op"]>("insert", "delete", "replace"),
  at: fc.nat(),
  line: fc.oneof(frequentLine, fc.record({ text: fc.constantFrom("x", "y"), eol: fc.constant<Line["eol"]>("\n") })),
  word: fc.constant("z"),
});
export const frequentThreeVersions = fc
  .record({
    base: fc.array(frequentLine, { minLength: 200, maxLength: 300 }),
    ours: fc.array(frequentEdit, { minLength: 1, maxLength: 8 }),
    theirs: fc.array(frequentEdit, { minLength: 1, maxLength: 8 }),
  })
  .map(({ base, ours, theirs }) => ({ base: textOf(base, true), ours: textOf(applyEdits(base, ours), true), theirs: textOf(applyEdits(base, theirs), true) }));
