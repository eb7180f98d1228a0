import { describe, expect, it } from "vitest";
import { codePointColumn, placeOf, symbolOffsets, toLspPosition, utf16Offset } from "../../src/lsp/positions.js";
import { toolErrorFrom as errorOf } from "../helpers/tool-error.js";

describe("code points and UTF-16", () => {
  const line = 'const face = "😀😀"; const naïve = add(1, 2);';

  it("converts a code-point column to a UTF-16 offset past astral characters", () => {
    const cp = [...line.slice(0, line.indexOf("naïve"))].length;
    expect(utf16Offset(line, cp)).toBe(line.indexOf("naïve"));
    expect(codePointColumn(line, line.indexOf("naïve"))).toBe(cp);
    // Two emoji are four UTF-16 units but two columns: the two counts differ by two after them.
    expect(line.indexOf("naïve") - cp).toBe(2);
  });

  it("round-trips every column of a mixed line and clamps past the end", () => {
    const mixed = "é😀a\u0301b𝒳";
    const cps = [...mixed].length;
    for (let c = 0; c <= cps; c++) expect(codePointColumn(mixed, utf16Offset(mixed, c))).toBe(c);
    expect(utf16Offset(mixed, cps + 10)).toBe(mixed.length);
    expect(codePointColumn(mixed, mixed.length + 10)).toBe(cps);
  });
});

describe("symbolOffsets", () => {
  it("finds whole identifiers only", () => {
    expect(symbolOffsets("add(address, add2, add)", "add")).toEqual([0, 19]);
    expect(symbolOffsets("naïve = naïvety + naïve", "naïve")).toEqual([0, 18]);
    expect(symbolOffsets("$x = x$ + $x", "$x")).toEqual([0, 10]);
  });

  it("matches operators and dotted names as text", () => {
    expect(symbolOffsets("a.b + a.b; a.bc", "a.b")).toEqual([0, 6]);
    expect(symbolOffsets("x => y => z", "=>")).toEqual([2, 7]);
  });
});

describe("toLspPosition", () => {
  const lines = ['import { add as sum } from "./math.js";', 'const s = "ü😀"; const t = sum(sum(1, 2), 3);'];

  it("points at the Nth occurrence of a symbol, in UTF-16 units", () => {
    expect(toLspPosition(lines, { line: 1, symbol: "sum" }, "a.ts")).toEqual({ line: 0, character: 16 });
    const second = toLspPosition(lines, { line: 2, symbol: "sum", occurrence: 2 }, "a.ts");
    expect(second).toEqual({ line: 1, character: lines[1].lastIndexOf("sum(1") });
  });

  it("converts a 1-based code-point column", () => {
    const cp = [...lines[1].slice(0, lines[1].indexOf("const t"))].length + 1;
    expect(toLspPosition(lines, { line: 2, column: cp }, "a.ts")).toEqual({ line: 1, character: lines[1].indexOf("const t") });
  });

  it("is NOT_FOUND when the symbol is not on that line, or not that often", () => {
    const missing = errorOf(() => toLspPosition(lines, { line: 1, symbol: "add2" }, "a.ts"));
    expect(missing.code).toBe("NOT_FOUND");
    expect(missing.message).toContain("a.ts:1");
    const third = errorOf(() => toLspPosition(lines, { line: 2, symbol: "sum", occurrence: 3 }, "a.ts"));
    expect(third.code).toBe("NOT_FOUND");
    expect(third.details).toMatchObject({ occurrences: 2 });
  });

  it("refuses bad lines, columns and occurrences as INVALID_PARAMS", () => {
    for (const spec of [
      { line: 0, column: 1 },
      { line: 3, column: 1 },
      { line: 1.5, column: 1 },
      { line: 1, column: 0 },
      { line: 1 },
      { line: 1, symbol: "sum", occurrence: 0 },
    ]) {
      expect(errorOf(() => toLspPosition(lines, spec, "a.ts")).code, JSON.stringify(spec)).toBe("INVALID_PARAMS");
    }
  });
});

describe("placeOf", () => {
  it("gives 1-based code-point columns, or UTF-16 + 1 when the lines are unknown", () => {
    const lines = ["😀😀 add"];
    const range = { start: { line: 0, character: 5 }, end: { line: 0, character: 8 } };
    expect(placeOf("a.ts", range, lines)).toEqual({ path: "a.ts", line: 1, column: 4, end_line: 1, end_column: 7 });
    expect(placeOf("a.ts", range, undefined)).toMatchObject({ column: 6, end_column: 9 });
  });
});
