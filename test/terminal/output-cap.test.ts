import { describe, expect, test } from "vitest";
import { MAX_OUTPUT_CHARS, capOutput, cutNote } from "../../src/terminal/output-cap.js";

const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join("");

describe("capOutput", () => {
  test("output within the cap is whole", () => {
    expect(capOutput({ head: "a\nb\n", tail: "", gap: null })).toEqual({ output: "a\nb\n", truncated: false });
  });

  test("a long output keeps its head and tail at line ends, with a note of what was cut, within the cap", () => {
    const text = lines(1, 20_000);
    const { output, truncated } = capOutput({ head: text, tail: "", gap: null });
    expect(truncated).toBe(true);
    expect(output.length).toBeLessThanOrEqual(MAX_OUTPUT_CHARS);
    expect(output.startsWith("line 1\nline 2\n")).toBe(true);
    expect(output.endsWith("line 19999\nline 20000\n")).toBe(true);
    const [head, tail] = output.split(/\n… \[.*\] …\n/);
    expect(head.endsWith("\n") || head.match(/line \d+$/)).toBeTruthy();
    const cut = text.length - head.length - tail.length;
    const note = /\[([\d,]+) lines \(([\d.]+ KiB)\) cut from the middle; output_file has the whole output\]/.exec(output)!;
    expect(Number(note[1].replace(/,/g, ""))).toBe(text.slice(head.length, head.length + cut).split("\n").length - 1);
    // The tail is the bigger share: a run's verdict comes at its end.
    expect(tail.length).toBeGreaterThan(head.length);
  });

  test("two ends of a large file and the gap between them: the note counts the gap and what the ends dropped", () => {
    const head = lines(1, 5000);
    const tail = lines(995_001, 1_000_000);
    const { output } = capOutput({ head, tail, gap: { bytes: 10_000_000, lines: 990_000 } });
    expect(output.length).toBeLessThanOrEqual(MAX_OUTPUT_CHARS);
    expect(output.startsWith("line 1\n")).toBe(true);
    expect(output.endsWith("line 1000000\n")).toBe(true);
    const shown = output.split("\n").filter((l) => l.startsWith("line ")).length;
    const note = /\[([\d,]+) lines/.exec(output)!;
    expect(Number(note[1].replace(/,/g, "")) + shown).toBe(1_000_000);
  });

  test("one huge line is cut inside it, never inside a surrogate pair", () => {
    const text = "😀".repeat(40_000);
    const { output } = capOutput({ head: text, tail: "", gap: null });
    expect(output.length).toBeLessThanOrEqual(MAX_OUTPUT_CHARS);
    expect(output).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  test("the note", () => {
    expect(cutNote(1, 10)).toBe("\n… [1 line (10 bytes) cut from the middle; output_file has the whole output] …\n");
    expect(cutNote(1234, 5 * 1024 * 1024)).toContain("1,234 lines (5.0 MiB)");
    expect(cutNote(null, 100 * 1024 * 1024)).toContain("[100.0 MiB cut from the middle");
    expect(cutNote(1, 1)).toContain("[1 line (1 byte) cut");
  });
});
