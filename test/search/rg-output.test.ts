import { execFileSync } from "node:child_process";
import { rgPath } from "@vscode/ripgrep";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_SEARCH_LINE_CHARS, shownStart, shownText } from "../../src/search/render.js";
import { LONG_LINE_MARKER, LineSplitter, MAX_RECORD_BYTES, RG_PREVIEW_BYTES, parseRecord, shownPath } from "../../src/search/rg-output.js";
import { regexProblem, ripgrepArgs, trimAfterCap } from "../../src/search/ripgrep.js";
import { tmpWorkspace } from "../helpers/tmp.js";

/** What the real rg prints for these files with the search's own arguments. */
describe("reading rg's output", () => {
  const long = `${"é".repeat(10_000)}"quoted" \\ NEEDLE tail\t${"z".repeat(9000)}`;
  const ws = tmpWorkspace({
    files: {
      "a.txt": 'plain NEEDLE\r\nwith "quotes" and \\ NEEDLE\nlone \r NEEDLE\n',
      "long.txt": `${long}\n`,
      "latin.txt": Buffer.from("caf\xe9 NEEDLE\n", "latin1"),
      "bom.txt": "\ufeffNEEDLE first\nsecond NEEDLE\n",
      "odd:name-1-2.txt": "x\nNEEDLE\n",
    },
  });
  let records: ReturnType<typeof parseRecord>[];
  beforeAll(() => {
    const out = execFileSync(rgPath, ripgrepArgs({ pattern: "NEEDLE", rel: "", context: 1, git: true }), { cwd: ws.dir, maxBuffer: 1 << 26 });
    records = [];
    const splitter = new LineSplitter((line) => records.push(parseRecord(line)));
    splitter.push(out);
    splitter.end();
  });
  afterAll(() => ws.cleanup());

  const of = (name: string) => records.filter((r) => r && shownPath(r.pathBytes) === name);

  it("reads match and context lines with their numbers and byte offsets, and skips rg's notes", () => {
    expect(records.filter((r) => r === undefined).length).toBeGreaterThan(0); // the `--` between groups
    const a = of("a.txt");
    expect(a.map((r) => [r!.line, r!.offset, r!.match, r!.head.toString(), r!.cut])).toEqual([
      [1, 0, true, "plain NEEDLE", false], // the \r of CRLF is not content
      [2, 14, true, 'with "quotes" and \\ NEEDLE', false],
      [3, 41, true, "lone \r NEEDLE", false],
    ]);
    expect(of("latin.txt")[0]!.head).toEqual(Buffer.from("caf\xe9 NEEDLE", "latin1"));
    // a path holding the separators (`:`, `-`, digits) is still read right: it ends at the NUL
    expect(of("odd:name-1-2.txt").map((r) => [r!.line, r!.offset, r!.match])).toEqual([
      [1, 0, false],
      [2, 2, true],
    ]);
  });

  it("takes rg's offsets after a BOM, which rg strips", () => {
    expect(of("bom.txt").map((r) => [r!.line, r!.offset, r!.head.toString()])).toEqual([
      [1, 0, "NEEDLE first"],
      [2, 13, "second NEEDLE"],
    ]);
  });

  it("gets a long line cut by rg itself, to its first characters", () => {
    const [r] = of("long.txt");
    expect(r!.cut).toBe(true);
    expect(r!.head.toString()).toBe("é".repeat(RG_PREVIEW_BYTES)); // rg's preview counts characters
  });

  it("parses by hand what it cannot get from rg: a bad line, a context record, a line ending like the marker", () => {
    expect(parseRecord(Buffer.from("no nul here"))).toBeUndefined();
    expect(parseRecord(Buffer.from("p\0x:1:t"))).toBeUndefined();
    expect(parseRecord(Buffer.from("p\x001:2-t"))).toBeUndefined();
    expect(parseRecord(Buffer.from("p\x0012-34-ctx\r"))).toMatchObject({ line: 12, offset: 34, match: false, cut: false });
    const short = parseRecord(Buffer.concat([Buffer.from("p\x001:0:abc"), LONG_LINE_MARKER]))!;
    expect(short.cut).toBe(false); // a short line that happens to end in the marker's words is not cut
    expect(short.head.toString()).toBe(`abc${LONG_LINE_MARKER}`);
  });
});

describe("LineSplitter", () => {
  const split = (chunks: string[], max = MAX_RECORD_BYTES) => {
    const out: [string, boolean][] = [];
    const s = new LineSplitter((l, overlong) => out.push([l.toString(), overlong]), max);
    for (const c of chunks) s.push(Buffer.from(c));
    s.end();
    return out;
  };

  it("joins lines across chunks and delivers a last line without a newline", () => {
    expect(split(["ab", "c\nde\n", "\nf"])).toEqual([
      ["abc", false],
      ["de", false],
      ["", false],
      ["f", false],
    ]);
  });

  it("never holds more than its bound of a line: it delivers the start and skips the rest to the newline", () => {
    expect(split(["0123", "456789", "abc\nnext\n"], 5)).toEqual([
      ["01234", true],
      ["next", false],
    ]);
    const huge: string[] = Array.from({ length: 100 }, () => "x".repeat(1 << 20));
    const out = split([...huge, "\nok"], 1024);
    expect(out).toEqual([
      ["x".repeat(1024), true],
      ["ok", false],
    ]);
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
    expect(shownStart(Buffer.from("z".repeat(2001)))).toBe(`${"z".repeat(MAX_SEARCH_LINE_CHARS)}… [line cut: over 2001 bytes]`);
  });

  it("after the cap, keeps the last match's after-context and drops the next match's before-context", () => {
    const l = (line: number, match: boolean) => ({ line, tag: "0000", text: "", match });
    const files = [
      { path: "a", lines: [l(1, true), l(2, false)] },
      { path: "b", lines: [l(4, false), l(5, true), l(6, false), l(7, false), l(8, false)] },
      { path: "c", lines: [l(1, false)] },
    ];
    expect(trimAfterCap([...files.slice(0, 2)], 1).map((f) => f.lines.map((x) => x.line))).toEqual([
      [1, 2],
      [4, 5, 6],
    ]);
    expect(trimAfterCap(files, 1).map((f) => f.path)).toEqual(["a", "b"]);
  });
});

describe("the rg command line", () => {
  it("puts the pattern after -e and the path after --, and .git/ last among the globs", () => {
    const args = ripgrepArgs({ pattern: "--files", rel: "-src", glob: ["*.ts"], context: 2, hidden: true, git: true });
    expect(args.slice(-4)).toEqual(["-e", "--files", "--", "-src"]);
    expect(args.indexOf("--glob=!.git")).toBeGreaterThan(args.indexOf("--glob=*.ts"));
    expect(args).toContain("--smart-case");
    // a user's ripgreprc never changes the format read here; rg cuts long lines itself; no --column (see ripgrepArgs)
    expect(args).toEqual(expect.arrayContaining(["--no-config", "--null", "--byte-offset", "--max-columns-preview", `--max-columns=${RG_PREVIEW_BYTES}`]));
    expect(args).not.toContain("--column");
    expect(args).not.toContain("--json");
    expect(args.some((a) => a.startsWith("--ignore-file"))).toBe(false);
    expect(ripgrepArgs({ pattern: "a", rel: "", context: 0, git: false, defaultIgnores: "/x/ignores" })).toContain("--ignore-file=/x/ignores");
    expect(ripgrepArgs({ pattern: "a", rel: "", context: 0, git: true, caseSensitive: false })).toContain("--ignore-case");
    expect(ripgrepArgs({ pattern: "a", rel: "", context: 0, git: true, caseSensitive: true })).toContain("--case-sensitive");
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
