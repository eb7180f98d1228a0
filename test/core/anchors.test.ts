import { describe, expect, it } from "vitest";
import { parseAnchor, resolveAnchor } from "../../src/core/anchors.js";
import { ToolError } from "../../src/errors.js";

function codeOf(fn: () => unknown): { code: string; message: string; details: Record<string, unknown> } {
  try {
    fn();
  } catch (e) {
    if (e instanceof ToolError) return { code: e.code, message: e.message, details: e.details };
    throw e;
  }
  throw new Error("expected a ToolError");
}

const TAGS = ["AAAA", "7D2A", "BBBB", "7D2A", "CCCC"];

describe("parseAnchor", () => {
  it("accepts every form, case-insensitively", () => {
    expect(parseAnchor("14c3", "f")).toEqual({ raw: "14c3", tag: "14C3" });
    expect(parseAnchor("5:14C3", "f")).toMatchObject({ tag: "14C3", line: 5 });
    expect(parseAnchor("5|14c3", "f")).toMatchObject({ tag: "14C3", line: 5 });
    expect(parseAnchor("12#abCD", "f")).toMatchObject({ tag: "ABCD", line: 12 });
    expect(parseAnchor(" 5:14C3 ", "f")).toMatchObject({ tag: "14C3", line: 5 });
  });

  it("refuses malformed anchors with INVALID_PARAMS naming the field", () => {
    for (const bad of ["", "14C", "14C3A", "XYZW", "5", "0:14C3", "5-14C3", "5:", ":14C3", "5|14C3 cout", "-1:14C3"]) {
      const e = codeOf(() => parseAnchor(bad, "edits[0].startline"));
      expect(e.code, bad).toBe("INVALID_PARAMS");
      expect(e.message).toContain("edits[0].startline");
    }
  });
});

describe("resolveAnchor", () => {
  it("resolves a unique tag", () => {
    expect(resolveAnchor(parseAnchor("bbbb", "f"), TAGS, "f")).toBe(3);
  });

  it("lists candidates as N:TAG for an ambiguous tag", () => {
    const e = codeOf(() => resolveAnchor(parseAnchor("7D2A", "f"), TAGS, "f"));
    expect(e.code).toBe("TAG_AMBIGUOUS");
    expect(e.message).toContain("2:7D2A, 4:7D2A");
    expect(e.details.candidates).toEqual(["2:7D2A", "4:7D2A"]);
  });

  it("picks one of several identical lines by N:TAG", () => {
    expect(resolveAnchor(parseAnchor("4:7D2A", "f"), TAGS, "f")).toBe(4);
  });

  it("says where a mismatched tag is now", () => {
    const e = codeOf(() => resolveAnchor(parseAnchor("2:CCCC", "f"), TAGS, "f"));
    expect(e.code).toBe("TAG_MISMATCH");
    expect(e.message).toContain("line 2 has tag 7D2A");
    expect(e.message).toContain("5:CCCC");
    expect(e.details.now_at).toEqual(["5:CCCC"]);
  });

  it("is TAG_MISMATCH when the numbered line is gone or the tag is nowhere", () => {
    expect(codeOf(() => resolveAnchor(parseAnchor("9:AAAA", "f"), TAGS, "f")).message).toContain("only 5 lines");
    const e = codeOf(() => resolveAnchor(parseAnchor("1:0000", "f"), TAGS, "f"));
    expect(e.code).toBe("TAG_MISMATCH");
    expect(e.message).toContain("no line has tag 0000");
  });

  it("is TAG_NOT_FOUND for a well-formed tag no line has", () => {
    expect(codeOf(() => resolveAnchor(parseAnchor("0000", "f"), TAGS, "f")).code).toBe("TAG_NOT_FOUND");
    expect(codeOf(() => resolveAnchor(parseAnchor("0000", "f"), [], "f")).code).toBe("TAG_NOT_FOUND");
  });
});
