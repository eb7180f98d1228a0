import { describe, expect, it } from "vitest";
import { type Edit, applyEdits, autoIndent, splitContent } from "../../src/core/edits.js";
import { initHash } from "../../src/core/hash.js";
import { parseText, serialize } from "../../src/core/text.js";
import { ToolError } from "../../src/errors.js";
import { LineTags } from "../../src/core/line-tags.js";

await initHash();

/** Applies a batch to `text` and returns the new text. */
function apply(text: string, edits: Edit[]): string {
  const bytes = Buffer.from(text, "utf8");
  return serialize(applyEdits(parseText(bytes, "f"), new LineTags(bytes).all(), edits).doc).toString("utf8");
}

function failure(text: string, edits: Edit[]): ToolError {
  try {
    apply(text, edits);
  } catch (e) {
    if (e instanceof ToolError) return e;
    throw e;
  }
  throw new Error("expected a ToolError");
}

const tags = (text: string) => new LineTags(Buffer.from(text, "utf8")).all();
const HELLO = '#include<iostream>\nusing namespace std;\nint main()\n{\n   cout<<"Hello WOrld!"<<endl;\n}\n';
// Tags of "a".."f", one per line.
const ABC = "a\nb\nc\nd\ne\nf\n";
const [A, B, C, D, E, F] = tags(ABC);

describe("the design document's example", () => {
  it("replaces the cout line by its tag, keeps its indentation, and changes no other tag", () => {
    const out = apply(HELLO, [{ type: "replace", startline: "14C3", endline: "14C3", content: 'cout<<"Hello World!"<<endl;' }]);
    expect(out).toBe(HELLO.replace("WOrld", "World"));
    expect(tags(out)).toEqual(["6F28", "8EAB", "4127", "91FC", "EB50", "BB18"]);
  });
});

describe("content", () => {
  it('splits on \\n, ignores one trailing \\n, and takes "" as one empty line', () => {
    expect(splitContent("x\ny")).toEqual(["x", "y"]);
    expect(splitContent("x\ny\n")).toEqual(["x", "y"]);
    expect(splitContent("x\n\n")).toEqual(["x", ""]);
    expect(splitContent("")).toEqual([""]);
    expect(splitContent("\n")).toEqual([""]);
    expect(splitContent("x\r\ny\r\n")).toEqual(["x", "y"]);
  });

  it('replacing with "" leaves one empty line', () => {
    expect(apply(ABC, [{ type: "replace", startline: B, endline: C, content: "" }])).toBe("a\n\nd\ne\nf\n");
  });
});

describe("replace, delete, insert", () => {
  it("replaces a range with more or fewer lines", () => {
    expect(apply(ABC, [{ type: "replace", startline: B, endline: D, content: "X" }])).toBe("a\nX\ne\nf\n");
    expect(apply(ABC, [{ type: "replace", startline: B, content: "X\nY\nZ" }])).toBe("a\nX\nY\nZ\nc\nd\ne\nf\n");
  });

  it("deletes a line, a range, and everything", () => {
    expect(apply(ABC, [{ type: "delete", startline: C }])).toBe("a\nb\nd\ne\nf\n");
    expect(apply(ABC, [{ type: "delete", startline: B, endline: E }])).toBe("a\nf\n");
    expect(apply(ABC, [{ type: "delete", startline: A, endline: F }])).toBe("");
  });

  it("inserts after startline, before endline, between both, at the top and at the end", () => {
    expect(apply(ABC, [{ type: "insert", startline: B, content: "X" }])).toBe("a\nb\nX\nc\nd\ne\nf\n");
    expect(apply(ABC, [{ type: "insert", endline: B, content: "X" }])).toBe("a\nX\nb\nc\nd\ne\nf\n");
    expect(apply(ABC, [{ type: "insert", startline: B, endline: C, content: "X" }])).toBe("a\nb\nX\nc\nd\ne\nf\n");
    expect(apply(ABC, [{ type: "insert", endline: A, content: "top" }])).toBe("top\na\nb\nc\nd\ne\nf\n");
    expect(apply(ABC, [{ type: "insert", startline: F, content: "end" }])).toBe("a\nb\nc\nd\ne\nf\nend\n");
  });

  it("inserts with neither anchor only into an empty file", () => {
    expect(apply("", [{ type: "insert", content: "first\nsecond" }])).toBe("first\nsecond\n");
    expect(failure(ABC, [{ type: "insert", content: "X" }]).code).toBe("INVALID_PARAMS");
  });

  it("refuses an insert between lines that are not adjacent", () => {
    const e = failure(ABC, [{ type: "insert", startline: B, endline: D, content: "X" }]);
    expect(e.code).toBe("INVALID_PARAMS");
    expect(e.message).toContain("adjacent");
  });

  it("refuses an endline before the startline", () => {
    expect(failure(ABC, [{ type: "delete", startline: D, endline: B }]).code).toBe("INVALID_PARAMS");
  });

  it("uses N:TAG to pick one of two identical lines", () => {
    const text = "{\n}\n{\n}\n";
    const close = tags(text)[1];
    expect(apply(text, [{ type: "replace", startline: `4:${close}`, content: "} // end" }])).toBe("{\n}\n{\n} // end\n");
    expect(failure(text, [{ type: "replace", startline: close, content: "x" }]).code).toBe("TAG_AMBIGUOUS");
  });
});

describe("a batch", () => {
  it("resolves every anchor against the same snapshot", () => {
    const out = apply(ABC, [
      { type: "insert", endline: A, content: "0\n1\n2" },
      { type: "replace", startline: C, content: "C" },
      { type: "delete", startline: E },
    ]);
    expect(out).toBe("0\n1\n2\na\nb\nC\nd\nf\n");
  });

  it("applies in file order whatever the batch order", () => {
    const fwd = apply(ABC, [
      { type: "replace", startline: A, content: "A" },
      { type: "replace", startline: F, content: "F" },
    ]);
    const back = apply(ABC, [
      { type: "replace", startline: F, content: "F" },
      { type: "replace", startline: A, content: "A" },
    ]);
    expect(fwd).toBe("A\nb\nc\nd\ne\nF\n");
    expect(back).toBe(fwd);
  });

  it("puts several inserts at one point in batch order", () => {
    const out = apply(ABC, [
      { type: "insert", startline: B, content: "1" },
      { type: "insert", endline: C, content: "2" },
      { type: "insert", startline: B, endline: C, content: "3" },
    ]);
    expect(out).toBe("a\nb\n1\n2\n3\nc\nd\ne\nf\n");
  });

  it("allows inserts right before and right after a replaced range", () => {
    const out = apply(ABC, [
      { type: "replace", startline: C, endline: D, content: "X" },
      { type: "insert", endline: C, content: "before" },
      { type: "insert", startline: D, content: "after" },
    ]);
    expect(out).toBe("a\nb\nbefore\nX\nafter\ne\nf\n");
  });

  it("refuses overlapping ranges and inserts strictly inside a range, changing nothing", () => {
    const cases: Edit[][] = [
      [
        { type: "replace", startline: B, endline: D, content: "X" },
        { type: "delete", startline: D, endline: E },
      ],
      [
        { type: "delete", startline: C },
        { type: "delete", startline: C },
      ],
      [
        { type: "replace", startline: A, endline: F, content: "X" },
        { type: "replace", startline: C, content: "Y" },
      ],
      [
        { type: "delete", startline: B, endline: D },
        { type: "insert", startline: C, content: "X" },
      ],
      [
        { type: "insert", endline: D, content: "X" },
        { type: "replace", startline: B, endline: D, content: "Y" },
      ],
    ];
    for (const edits of cases) expect(failure(ABC, edits).code, JSON.stringify(edits)).toBe("OVERLAP");
  });

  it("fails as a whole when one anchor is bad", () => {
    const e = failure(ABC, [
      { type: "replace", startline: A, content: "A" },
      { type: "delete", startline: "0000" },
    ]);
    expect(e.code).toBe("TAG_NOT_FOUND");
    expect(e.message).toContain("edits[1].startline");
  });
});

describe("auto-indent", () => {
  const code = "def f():\n\tif x:\n\t\treturn 1\n\treturn 2\n";
  const [, IF, RET1] = tags(code);

  it("prefixes the anchor's indentation (tabs stay tabs), keeping relative indentation", () => {
    expect(apply(code, [{ type: "replace", startline: IF, endline: RET1, content: "if y:\n\treturn 3\n\nelse:\n\tpass" }])).toBe(
      "def f():\n\tif y:\n\t\treturn 3\n\n\telse:\n\t\tpass\n\treturn 2\n",
    );
  });

  it("leaves content alone when its first line is already indented", () => {
    expect(apply(code, [{ type: "replace", startline: RET1, content: "  return 9" }])).toBe("def f():\n\tif x:\n  return 9\n\treturn 2\n");
  });

  it("takes an insert's indentation from startline, else endline", () => {
    expect(apply(code, [{ type: "insert", startline: RET1, content: "log()" }])).toBe("def f():\n\tif x:\n\t\treturn 1\n\t\tlog()\n\treturn 2\n");
    expect(apply(code, [{ type: "insert", endline: IF, content: "log()" }])).toBe("def f():\n\tlog()\n\tif x:\n\t\treturn 1\n\treturn 2\n");
  });

  it("is off with auto_indent:false", () => {
    expect(apply(code, [{ type: "replace", startline: RET1, content: "return 9", auto_indent: false }])).toBe("def f():\n\tif x:\nreturn 9\n\treturn 2\n");
  });

  it("skips blank first lines when deciding", () => {
    expect(autoIndent(["", "x", "  y"], "    anchor")).toEqual(["", "    x", "      y"]);
    expect(autoIndent(["x"], "anchor")).toEqual(["x"]);
  });
});

describe("line endings, BOM and final newline", () => {
  it("gives new lines CRLF in a CRLF file", () => {
    const text = "a\r\nb\r\nc\r\n";
    const [, b] = tags(text);
    expect(apply(text, [{ type: "replace", startline: b, content: "X\nY" }])).toBe("a\r\nX\r\nY\r\nc\r\n");
  });

  it("uses the majority's ending in a mixed file and keeps untouched lines' own", () => {
    const text = "a\r\nb\nc\r\nd\r\n";
    const [, b] = tags(text);
    expect(apply(text, [{ type: "insert", startline: b, content: "X" }])).toBe("a\r\nb\nX\r\nc\r\nd\r\n");
  });

  it("keeps the BOM", () => {
    const text = "\ufeffa\nb\n";
    const [a] = tags(text);
    expect(apply(text, [{ type: "replace", startline: a, content: "A" }])).toBe("\ufeffA\nb\n");
  });

  it("keeps a missing final newline, also when appending after the last line", () => {
    const text = "a\nb";
    const [a, b] = tags(text);
    expect(apply(text, [{ type: "replace", startline: b, content: "B" }])).toBe("a\nB");
    expect(apply(text, [{ type: "insert", startline: b, content: "c" }])).toBe("a\nb\nc");
    expect(apply(text, [{ type: "delete", startline: b }])).toBe("a");
    expect(apply(text, [{ type: "insert", endline: a, content: "0" }])).toBe("0\na\nb");
  });

  it("keeps a final CRLF when the last line is replaced", () => {
    const text = "a\r\nb\r\n";
    const [, b] = tags(text);
    expect(apply(text, [{ type: "replace", startline: b, content: "B" }])).toBe("a\r\nB\r\n");
  });
});

describe("large batches", () => {
  const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

  it("applies thousands of disjoint edits (sorted overlap check) and still finds the one overlap among them", () => {
    const N = 20_000;
    const text = numbered(N);
    const t = tags(text);
    const edits: Edit[] = [];
    for (let i = 0; i < N; i += 4) edits.push({ type: "replace", startline: `${i + 1}:${t[i]}`, endline: `${i + 2}:${t[i + 1]}`, content: "r" });
    for (let i = 2; i < N; i += 4) edits.push({ type: "insert", startline: `${i + 1}:${t[i]}`, content: "ins" });
    const out = apply(text, edits).split("\n");
    expect(out.slice(0, 5)).toEqual(["r", "line 3", "ins", "line 4", "r"]);
    // One insert strictly inside a replaced range (after its first line), far from the others.
    const bad = [...edits, { type: "insert" as const, startline: `${4001}:${t[4000]}`, content: "x" }];
    const e = failure(text, bad);
    expect(e.code).toBe("OVERLAP");
    expect(e.message).toContain(`edits[${bad.length - 1}] (insert after line 4001) overlaps`);
    // And a range overlapping the last range of the batch.
    const overlapping = [...edits, { type: "delete" as const, startline: `${N - 2}:${t[N - 3]}`, endline: `${N - 1}:${t[N - 2]}` }];
    expect(failure(text, overlapping).code).toBe("OVERLAP");
  });
});
