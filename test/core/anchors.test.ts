import { describe, expect, it } from "vitest";
import { TagLookup, findTag, linesWithTag, parseAnchor, resolveAnchor } from "../../src/core/anchors.js";
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
    expect(codeOf(() => resolveAnchor(parseAnchor("9:AAAA", "f"), TAGS.slice(0, 1), "f")).message).toContain("the file has only 1 line,");
    const e = codeOf(() => resolveAnchor(parseAnchor("1:0000", "f"), TAGS, "f"));
    expect(e.code).toBe("TAG_MISMATCH");
    expect(e.message).toContain("no line has tag 0000");
  });

  it("is TAG_NOT_FOUND for a well-formed tag no line has", () => {
    expect(codeOf(() => resolveAnchor(parseAnchor("0000", "f"), TAGS, "f")).code).toBe("TAG_NOT_FOUND");
    expect(codeOf(() => resolveAnchor(parseAnchor("0000", "f"), [], "f")).code).toBe("TAG_NOT_FOUND");
  });
});

describe("the per-snapshot tag index", () => {
  it("finds every line of a tag in file order, in either case, and nothing for an absent one", () => {
    const tags = ["00FF", "ABCD", "00ff".toUpperCase(), "FFFF", "0000", "ABCD"];
    expect(findTag(tags, "abcd")).toEqual([2, 6]);
    expect(findTag(tags, "00FF")).toEqual([1, 3]);
    expect(findTag(tags, "FFFF")).toEqual([4]);
    expect(findTag(tags, "0000")).toEqual([5]);
    expect(findTag(tags, "1234")).toEqual([]);
  });

  it("agrees with a scan on a large snapshot, for every tag", () => {
    const tags = Array.from({ length: 70_000 }, (_, i) => ((i * 2654435761) >>> 16).toString(16).toUpperCase().padStart(4, "0"));
    for (const tag of new Set(tags.slice(0, 500))) expect(findTag(tags, tag)).toEqual(linesWithTag(tags, tag));
  });

  it("lists at most 20 candidates of an ambiguous tag, and says how many there are", () => {
    const many = Array.from({ length: 50 }, () => "7D2A");
    const e = codeOf(() => resolveAnchor(parseAnchor("7D2A", "f"), many, "f"));
    expect(e.details.candidates).toHaveLength(20);
    expect(e.message).toContain("(50 in all)");
  });
});

describe("TagLookup", () => {
  it("finds each tag's lines as a scan does, one index for every anchor it resolves, the tags read once", () => {
    let reads = 0;
    const tags = Array.from({ length: 300 }, (_, i) => ["AAAA", "7D2A", "bbbb"][(i % 7) % 3] ?? "CCCC");
    const lookup = new TagLookup({ length: tags.length, at: (i) => tags[i], all: () => (reads++, tags) });
    for (const tag of ["AAAA", "7D2A", "BBBB", "CCCC", "0000"])
      expect(lookup.find(tag), tag).toEqual(
        linesWithTag(
          tags.map((t) => t.toUpperCase()),
          tag,
        ),
      );
    expect(resolveAnchor(parseAnchor("2:7D2A", "f"), lookup, "f")).toBe(2);
    expect(reads).toBe(1);
  });
});
