import { beforeAll, describe, expect, it } from "vitest";
import { initHash, tagOf } from "../../src/core/hash.js";
import { ToolError } from "../../src/errors.js";
import {
  applyTextEdits,
  fromLspDiagnostic,
  fromTsServerDiagnostic,
  hoverText,
  normalizeWorkspaceEdit,
  placesOf,
  renderPlace,
  symbolsOf,
} from "../../src/lsp/convert.js";

beforeAll(initHash);

const pathOf = (uri: string) => uri.replace("file:///root/", "");
const noLines = () => undefined;
const edit = (line: number, from: number, to: number, newText: string) => ({
  range: { start: { line, character: from }, end: { line, character: to } },
  newText,
});

describe("normalizeWorkspaceEdit", () => {
  it("gives tsls `changes` and pyright `documentChanges` with version null one shape", () => {
    const tsls = normalizeWorkspaceEdit({ changes: { "file:///root/b.ts": [edit(0, 0, 3, "x")], "file:///root/a.ts": [edit(1, 2, 5, "x")] } }, pathOf, () => 1);
    const pyright = normalizeWorkspaceEdit(
      {
        documentChanges: [
          { textDocument: { uri: "file:///root/b.ts", version: null }, edits: [edit(0, 0, 3, "x")] },
          { textDocument: { uri: "file:///root/a.ts", version: null }, edits: [edit(1, 2, 5, "x")] },
        ],
      },
      pathOf,
      () => 1,
    );
    expect(pyright).toEqual(tsls);
    expect(tsls.map((f) => f.path)).toEqual(["a.ts", "b.ts"]);
  });

  it("refuses a versioned edit about another version, and file operations", () => {
    const stale = () => normalizeWorkspaceEdit({ documentChanges: [{ textDocument: { uri: "file:///root/a.ts", version: 3 }, edits: [] }] }, pathOf, () => 4);
    expect(stale).toThrow(ToolError);
    expect(() => normalizeWorkspaceEdit({ documentChanges: [{ kind: "create", uri: "file:///root/n.ts" }] }, pathOf, () => 1)).toThrow(/create/);
    expect(normalizeWorkspaceEdit({ documentChanges: [{ textDocument: { uri: "file:///root/a.ts", version: 4 }, edits: [] }] }, pathOf, () => 4)).toEqual([
      { path: "a.ts", edits: [] },
    ]);
    expect(normalizeWorkspaceEdit(null, pathOf, () => 1)).toEqual([]);
  });
});

describe("applyTextEdits", () => {
  it("applies edits in any order, keeping CRLF terminators and UTF-16 columns", () => {
    const text = 'import { add } from "m";\r\nconst s = "😀"; add(add(1, 2), 3);\r\n';
    const line1 = text.split("\r\n")[1];
    const first = line1.indexOf("add");
    const second = line1.indexOf("add", first + 1);
    const out = applyTextEdits(text, [edit(1, second, second + 3, "plus"), edit(0, 9, 12, "plus"), edit(1, first, first + 3, "plus")]);
    expect(out).toBe('import { plus } from "m";\r\nconst s = "😀"; plus(plus(1, 2), 3);\r\n');
  });

  it("refuses overlapping edits", () => {
    expect(() => applyTextEdits("abcdef", [edit(0, 0, 3, "x"), edit(0, 2, 4, "y")])).toThrow(/overlap/);
  });

  it("inserts at the end of a file without a final newline", () => {
    expect(applyTextEdits("a\nb", [edit(1, 1, 1, "c"), edit(5, 0, 5, "!")])).toBe("a\nbc!");
  });
});

describe("diagnostics", () => {
  const lines = ['const face = "😀😀"; export const naïve: string = 1;'];
  const at = lines[0].indexOf("naïve");

  it("converts tsserver's 1-based UTF-16 offsets and categories", () => {
    const d = fromTsServerDiagnostic(
      { start: { line: 1, offset: at + 1 }, end: { line: 1, offset: at + 6 }, text: "bad", code: 2322, category: "suggestion" },
      lines,
    );
    expect(d).toEqual({ line: 1, column: at - 1, end_line: 1, end_column: at + 4, severity: "hint", code: 2322, source: "typescript", message: "bad" });
  });

  it("converts LSP diagnostics, reading a missing severity as an error", () => {
    const d = fromLspDiagnostic(
      { range: { start: { line: 0, character: at }, end: { line: 0, character: at + 5 } }, message: "m", source: "Pyright", code: "reportX" },
      lines,
    );
    expect(d).toMatchObject({ line: 1, column: at - 1, end_column: at + 4, severity: "error", code: "reportX", source: "Pyright" });
  });
});

describe("places, symbols and hovers", () => {
  it("reads Location, Location[] and LocationLink[] (a link names its target's name)", () => {
    const range = { start: { line: 2, character: 4 }, end: { line: 2, character: 7 } };
    expect(placesOf({ uri: "file:///root/a.py", range }, pathOf, noLines)).toEqual([{ path: "a.py", line: 3, column: 5, end_line: 3, end_column: 8 }]);
    const link = {
      targetUri: "file:///root/b.py",
      targetRange: { start: { line: 0, character: 0 }, end: { line: 5, character: 0 } },
      targetSelectionRange: range,
    };
    expect(placesOf([link], pathOf, noLines)).toEqual([{ path: "b.py", line: 3, column: 5, end_line: 3, end_column: 8 }]);
    expect(placesOf(null, pathOf, noLines)).toEqual([]);
  });

  it("flattens a document outline with depth and container", () => {
    const r = (line: number) => ({ start: { line, character: 0 }, end: { line, character: 1 } });
    const symbols = symbolsOf(
      [{ name: "C", kind: 5, range: r(0), selectionRange: r(0), children: [{ name: "m", kind: 6, range: r(1), selectionRange: r(1) }] }],
      pathOf,
      noLines,
      "a.ts",
    );
    expect(symbols).toEqual([
      { name: "C", kind: "class", depth: 0, place: { path: "a.ts", line: 1, column: 1, end_line: 1, end_column: 2 } },
      { name: "m", kind: "method", container: "C", depth: 1, place: { path: "a.ts", line: 2, column: 1, end_line: 2, end_column: 2 } },
    ]);
  });

  it("renders hover contents of every shape", () => {
    expect(hoverText({ contents: { kind: "markdown", value: " **x** " } })).toBe("**x**");
    expect(hoverText({ contents: [{ language: "ts", value: "let x" }, "doc"] })).toBe("```ts\nlet x\n```\n\ndoc");
    expect(hoverText(null)).toBe("");
  });

  it("renders a place as path:N|TAG content from the current lines", () => {
    const lines = ["a", "  return x;"];
    expect(renderPlace({ path: "a.ts", line: 2, column: 3 }, lines)).toBe(`a.ts:2|${tagOf("  return x;")}   return x;`);
    expect(renderPlace({ path: "a.ts", line: 9, column: 1 }, lines)).toBe("a.ts:9");
  });
});
