import { execFileSync } from "node:child_process";
import { rgPath } from "@vscode/ripgrep";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initHash } from "../../src/core/hash.js";
import { shownText, trimAfterCap, MAX_SEARCH_LINE_CHARS } from "../../src/search/render.js";
import { LONG_JSON_LINE_CHARS, parseLongRgLine, parseRgLine, stripTerminator } from "../../src/search/rg-json.js";
import { regexProblem, ripgrepArgs } from "../../src/search/ripgrep.js";
import { tmpWorkspace } from "../helpers/tmp.js";

/** What the real rg prints for these files, parsed both ways. */
describe("reading rg --json", () => {
  const long = `${"é".repeat(10_000)}"quoted" \\ NEEDLE tail\t${"z".repeat(9000)}`;
  const ws = tmpWorkspace({
    files: {
      "a.txt": 'plain NEEDLE\r\nwith "quotes" and \\ NEEDLE\nlone \r NEEDLE\n',
      "long.txt": `${long}\n`,
      "latin.txt": Buffer.from("caf\xe9 NEEDLE\n", "latin1"),
    },
  });
  let lines: string[];
  beforeAll(async () => {
    await initHash();
    lines = execFileSync(rgPath, ["--json", "-C1", "-e", "NEEDLE", "--", "./"], { cwd: ws.dir, encoding: "utf8", maxBuffer: 1 << 26 }).split("\n").filter(Boolean);
  });
  afterAll(() => ws.cleanup());

  it("reads match and context lines, and skips begin, end and summary", () => {
    const parsed = lines.map((l) => parseRgLine(l)).filter((x) => x !== undefined);
    expect(parsed.length).toBe(5);
    const a = parsed.filter((p) => p.path === "./a.txt");
    expect(a.map((p) => p.bytes.toString())).toEqual(["plain NEEDLE", 'with "quotes" and \\ NEEDLE', "lone \r NEEDLE"]);
    expect(a.map((p) => p.matchStart)).toEqual([6, 20, 7]);
    const latin = parsed.find((p) => p.path === "./latin.txt")!;
    expect(latin.bytes).toEqual(Buffer.from("caf\xe9 NEEDLE", "latin1"));
  });

  it("reads a long line field by field, to the same record JSON.parse gives", () => {
    const json = lines.find((l) => l.includes("long.txt") && l.startsWith('{"type":"match"'))!;
    expect(json.length).toBeGreaterThan(LONG_JSON_LINE_CHARS);
    const fast = parseRgLine(json)!;
    expect(fast.bytes.toString("utf8")).toBe(long);
    expect(fast.matchStart).toBe(Buffer.byteLength(long.slice(0, long.indexOf("NEEDLE"))));
    // the slow path on the same line, and the fast path on every short line, agree
    const data = JSON.parse(json).data;
    expect(fast).toEqual({ path: data.path.text, line: data.line_number, match: true, bytes: Buffer.from(data.lines.text.slice(0, -1)), matchStart: data.submatches[0].start });
    for (const l of lines) expect(parseLongRgLine(l)).toEqual(parseRgLine(l));
  });

  it("strips only a \\n or \\r\\n terminator (SPEC 4)", () => {
    expect(stripTerminator(Buffer.from("a\r\n")).toString()).toBe("a");
    expect(stripTerminator(Buffer.from("a\n")).toString()).toBe("a");
    expect(stripTerminator(Buffer.from("a\r")).toString()).toBe("a\r");
    expect(stripTerminator(Buffer.from("\n")).toString()).toBe("");
    expect(stripTerminator(Buffer.from("a")).toString()).toBe("a");
  });
});

describe("showing lines", () => {
  it("leaves a short line alone", () => {
    expect(shownText(Buffer.from("short"), 0)).toEqual({ text: "short", cut: false });
    const exact = "é".repeat(MAX_SEARCH_LINE_CHARS);
    expect(shownText(Buffer.from(exact), 0)).toEqual({ text: exact, cut: false });
  });

  it("cuts a long line around the first match, on character boundaries, saying how long it was", () => {
    for (const filler of ["x", "é", "😀"]) {
      const line = `${filler.repeat(5000)}MATCH${filler.repeat(5000)}`;
      const bytes = Buffer.from(line);
      const { text, cut } = shownText(bytes, bytes.indexOf("MATCH"));
      expect(cut).toBe(true);
      expect(text).toContain("MATCH");
      expect(text).not.toContain("\ufffd");
      expect(text.startsWith("… ")).toBe(true);
      expect(text.endsWith(`… [line cut: ${bytes.length} bytes]`)).toBe(true);
      expect(text.length).toBeLessThan(MAX_SEARCH_LINE_CHARS + 40);
    }
    const start = shownText(Buffer.from("y".repeat(3000)), -1).text;
    expect(start.startsWith("yyy")).toBe(true);
  });

  it("after the cap, keeps the last match's after-context and drops the next match's before-context", () => {
    const l = (line: number, match: boolean) => ({ line, tag: "0000", text: "", match });
    const files = [
      { path: "a", lines: [l(1, true), l(2, false)] },
      { path: "b", lines: [l(4, false), l(5, true), l(6, false), l(7, false), l(8, false)] },
      { path: "c", lines: [l(1, false)] },
    ];
    expect(trimAfterCap([...files.slice(0, 2)], 1).map((f) => f.lines.map((x) => x.line))).toEqual([[1, 2], [4, 5, 6]]);
    expect(trimAfterCap(files, 1).map((f) => f.path)).toEqual(["a", "b"]);
  });
});

describe("the rg command line", () => {
  it("puts the pattern after -e and the path after --, and .git/ last among the globs", () => {
    const args = ripgrepArgs({ pattern: "--files", rel: "-src", glob: ["*.ts"], context: 2, hidden: true });
    expect(args.slice(-4)).toEqual(["-e", "--files", "--", "-src"]);
    expect(args.indexOf("--glob=!.git")).toBeGreaterThan(args.indexOf("--glob=*.ts"));
    expect(args).toContain("--smart-case");
    expect(ripgrepArgs({ pattern: "a", rel: "", context: 0, caseSensitive: false })).toContain("--ignore-case");
    expect(ripgrepArgs({ pattern: "a", rel: "", context: 0, caseSensitive: true })).toContain("--case-sensitive");
  });

  it("reduces rg's two-engine regex error to what is wrong", () => {
    let stderr = "";
    try {
      execFileSync(rgPath, ["--engine=auto", "-e", "a(", "--", "/dev/null"], { stdio: ["ignore", "pipe", "pipe"] });
    } catch (e) {
      stderr = String((e as { stderr: Buffer }).stderr);
    }
    expect(regexProblem(stderr.replace(/^rg: /gm, ""))).toMatch(/^unclosed group; with PCRE2: .*missing closing parenthesis/);
  });
});
