import { describe, expect, it } from "vitest";
import { tagOf } from "../../../src/core/hash.js";
import { type KeepEntry, renderSide, resolveBlock, resolveKeep, resolveTake } from "../../../src/core/merge/keep-table.js";
import type { ConflictBlock } from "../../../src/core/merge/three-way.js";
import { splitText } from "../../../src/core/text.js";
import { toolErrorFrom as failure } from "../../helpers/tool-error.js";

const side = (text: string) => ({ start: 0, ...splitText(text) });
const BLOCK: ConflictBlock = {
  base: side("let a = 1;\nlet b = 2;\n"),
  ours: side("let a = 10;\nlet b = 2;\nlog(a);\n"),
  theirs: side("let a = 1;\nlet b = 20;\n"),
};
const LF = { eol: "\n" as const, atEnd: false, label: "block 2" };

describe("renderSide", () => {
  it("numbers lines within the side and tags them as the file tools do", () => {
    expect(renderSide(BLOCK.theirs)).toEqual([`1|${tagOf("let a = 1;")} let a = 1;`, `2|${tagOf("let b = 20;")} let b = 20;`]);
    expect(renderSide({ lines: [] })).toEqual([]);
  });
});

describe("resolveKeep", () => {
  it("keeps the listed lines in order, mixing ours:N, theirs:N:TAG and new lines", () => {
    const keep: KeepEntry[] = ["ours:1", `theirs:2:${tagOf("let b = 20;")}`, { text: "// merged by hand" }, "ours:3"];
    expect(resolveKeep(BLOCK, keep, LF)).toEqual({
      lines: ["let a = 10;", "let b = 20;", "// merged by hand", "log(a);"],
      eols: ["\n", "\n", "\n", "\n"],
    });
  });

  it("accepts the N|TAG and N#TAG forms, any case, and base lines", () => {
    const tag = tagOf("let b = 2;").toLowerCase();
    expect(resolveKeep(BLOCK, [`base:2|${tag}`, `OURS:2#${tag}`], LF).lines).toEqual(["let b = 2;", "let b = 2;"]);
  });

  it("replaces the region with nothing for an empty table, and splits a new line's text on \\n", () => {
    expect(resolveKeep(BLOCK, [], LF)).toEqual({ lines: [], eols: [] });
    expect(resolveKeep(BLOCK, [{ text: "a\nb\n" }, { text: "" }], LF).lines).toEqual(["a", "b", ""]);
  });

  it("refuses a malformed entry (INVALID_PARAMS naming it)", () => {
    for (const bad of ["ours", "mine:1", "ours:x", "ours:1:ZZZZ", "ours:1:12345", 5, null, ["ours:1"], { text: 1 }, { text: "x", extra: true }, {}]) {
      const e = failure(() => resolveKeep(BLOCK, ["ours:1", bad as KeepEntry], LF));
      expect(e.code, JSON.stringify(bad)).toBe("INVALID_PARAMS");
      expect(e.message).toMatch(/^keep\[1\]: /);
    }
    expect(failure(() => resolveKeep(BLOCK, ["ours:0"], LF)).code).toBe("INVALID_PARAMS");
    expect(failure(() => resolveKeep(BLOCK, "ours:1" as unknown as KeepEntry[], LF)).code).toBe("INVALID_PARAMS");
  });

  it("refuses a line past the end of its side (NOT_FOUND, saying how many there are)", () => {
    const e = failure(() => resolveKeep(BLOCK, ["theirs:3"], LF));
    expect(e.code).toBe("NOT_FOUND");
    expect(e.message).toContain("block 2's theirs side has lines theirs:1-theirs:2");
    expect(failure(() => resolveKeep({ ...BLOCK, ours: side("") }, ["ours:1"], LF)).message).toContain("has no lines");
  });

  it("refuses a tag that is not that line's (TAG_MISMATCH, saying where the tag is)", () => {
    const tagB = tagOf("let b = 20;");
    const e = failure(() => resolveKeep(BLOCK, [`theirs:1:${tagB}`], LF));
    expect(e.code).toBe("TAG_MISMATCH");
    expect(e.message).toContain(`theirs line 1 has tag ${tagOf("let a = 1;")}, and tag ${tagB} is at theirs:2:${tagB}`);
    expect(e.details).toMatchObject({ field: "keep[0]", actual_tag: tagOf("let a = 1;"), now_at: [`theirs:2:${tagB}`] });
    const none = tagB === "0000" ? "0001" : "0000";
    expect(failure(() => resolveKeep(BLOCK, [`theirs:1:${none}`], LF)).message).toContain(`no theirs line has tag ${none}`);
  });
});

describe("line endings of the replacement (SPEC 5)", () => {
  const crlf: ConflictBlock = { base: side("a\r\n"), ours: side("A\r\n"), theirs: side("B\r\n") };

  it("gives new lines the file's line ending and keeps each side line's", () => {
    expect(resolveKeep(crlf, ["ours:1", { text: "new" }], { eol: "\r\n", atEnd: false })).toEqual({ lines: ["A", "new"], eols: ["\r\n", "\r\n"] });
  });

  it("gives side lines the file's ending when the index and the worktree differ in line endings", () => {
    const lf: ConflictBlock = { base: side("a\n"), ours: side("A\n"), theirs: side("B\n") };
    expect(resolveTake(lf, "both", { eol: "\r\n", atEnd: false, lineEols: "file" }).eols).toEqual(["\r\n", "\r\n"]);
  });

  it("ends the file as the kept side did when the region is last, and terminates a former last line otherwise", () => {
    const eof: ConflictBlock = { base: side("a"), ours: side("A"), theirs: side("B\n") };
    expect(resolveTake(eof, "ours", { eol: "\n", atEnd: true }).eols).toEqual([""]);
    expect(resolveTake(eof, "theirs", { eol: "\n", atEnd: true }).eols).toEqual(["\n"]);
    expect(resolveTake(eof, "ours", { eol: "\n", atEnd: false }).eols).toEqual(["\n"]);
    expect(resolveTake(eof, "both", { eol: "\n", atEnd: true })).toEqual({ lines: ["A", "B"], eols: ["\n", "\n"] });
    expect(resolveKeep(eof, ["ours:1", { text: "end" }], { eol: "\n", atEnd: true }).eols).toEqual(["\n", "\n"]);
  });
});

describe("resolveTake and resolveBlock", () => {
  it("takes a whole side, both sides (ours first), or the automatic resolution", () => {
    expect(resolveTake(BLOCK, "ours", LF).lines).toEqual(BLOCK.ours.lines);
    expect(resolveTake(BLOCK, "theirs", LF).lines).toEqual(BLOCK.theirs.lines);
    expect(resolveTake(BLOCK, "base", LF).lines).toEqual(BLOCK.base.lines);
    expect(resolveTake(BLOCK, "both", LF).lines).toEqual([...BLOCK.ours.lines, ...BLOCK.theirs.lines]);
    expect(resolveTake(BLOCK, "auto", LF).lines).toEqual(["let a = 10;", "let b = 20;", "log(a);"]);
  });

  it("refuses auto for a block with no automatic resolution (CONFLICT)", () => {
    const clash: ConflictBlock = { base: side("x = 1\n"), ours: side("x = 2\n"), theirs: side("x = 3\n") };
    const e = failure(() => resolveTake(clash, "auto", LF));
    expect(e.code).toBe("CONFLICT");
    expect(e.message).toContain("block 2 has no automatic resolution");
    expect(failure(() => resolveTake(BLOCK, "mine" as "ours", LF)).code).toBe("INVALID_PARAMS");
  });

  it("needs exactly one of take and keep", () => {
    expect(failure(() => resolveBlock(BLOCK, {}, LF)).code).toBe("INVALID_PARAMS");
    expect(failure(() => resolveBlock(BLOCK, { take: "ours", keep: [] }, LF)).code).toBe("INVALID_PARAMS");
    expect(resolveBlock(BLOCK, { keep: ["theirs:1"] }, LF).lines).toEqual(["let a = 1;"]);
    expect(resolveBlock(BLOCK, { take: "theirs" }, LF).lines).toEqual(BLOCK.theirs.lines);
  });
});
