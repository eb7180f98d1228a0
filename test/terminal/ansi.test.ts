import { describe, expect, test } from "vitest";
import { AnsiStream, incompleteTailStart, stripAnsi } from "../../src/terminal/ansi.js";

describe("stripAnsi", () => {
  test.each([
    ["colours", "\x1b[31mred\x1b[0m and \x1b[1;32mgreen\x1b[m", "red and green"],
    ["cursor moves and erase", "a\x1b[2K\x1b[1Gb\x1b[?25l", "ab"],
    ["an OSC title ended by BEL", "\x1b]0;title\x07text", "text"],
    ["an OSC hyperlink ended by ST", "\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\", "link"],
    ["a DCS string", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"],
    ["a charset choice and two-character escapes", "\x1b(Bx\x1b7y\x1b8\x1b=z", "xyz"],
    ["8-bit CSI", "\u009b31mred", "red"],
    ["a stray ESC", "a\x1b", "a"],
    ["plain text, newlines and tabs kept", "a\tb\r\nc\n", "a\tb\r\nc\n"],
  ])("%s", (_what, input, want) => {
    expect(stripAnsi(input)).toBe(want);
  });
});

describe("incompleteTailStart", () => {
  test("finds an escape cut off at the end, and none when the text ends complete", () => {
    expect(incompleteTailStart("abc\x1b[31")).toBe(3);
    expect(incompleteTailStart("abc\x1b")).toBe(3);
    expect(incompleteTailStart("abc\x1b]0;tit")).toBe(3);
    expect(incompleteTailStart("abc\x1b[31mdef")).toBe(11);
    expect(incompleteTailStart("\x1bPdata\x1b\\after")).toBe(13);
  });
});

describe("AnsiStream", () => {
  test("a sequence split across chunks is removed whole", () => {
    const s = new AnsiStream();
    expect(s.push("red: \x1b[3")).toBe("red: ");
    expect(s.push("1mRED\x1b")).toBe("RED");
    expect(s.push("[0m done\n")).toBe(" done\n");
    expect(s.end()).toBe("");
  });

  test("an escape that never completes is dropped at the end; reset forgets it", () => {
    const s = new AnsiStream();
    expect(s.push("x\x1b]0;never ends")).toBe("x");
    expect(s.end()).toBe("");
    expect(s.push("\x1b[")).toBe("");
    s.reset();
    expect(s.push("plain")).toBe("plain");
  });
});
