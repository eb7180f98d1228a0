import { PassThrough } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import { initHash } from "../../../src/core/hash.js";
import { LineTags } from "../../../src/core/line-tags.js";
import { renderLine, splitText } from "../../../src/core/text.js";
import { tagOf } from "../../../src/core/hash.js";
import { LineWriter } from "../../../src/protocol/jsonl/framing.js";
import { windowLiteral } from "../../../src/protocol/jsonl/json-text.js";

/** What file_read's text must be: the header line if any, then SPEC 5's rendering, line by line, as plain strings. */
function expected(text: string, from: number, to: number, header = ""): string {
  const { lines } = splitText(text.startsWith("\ufeff") ? text.slice(1) : text);
  const rendered = lines.slice(from, to).map((l, i) => renderLine(from + i + 1, tagOf(l), l));
  return (header ? [header, ...rendered] : rendered).join("\n");
}

/** A deterministic generator, so a failure can be replayed. */
function rng(seed: number) {
  return () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

const PIECES = ['"', "\\", "\t", "\r", "\u0001", "\u001f", "\u007f", "é", "€", "😀", "\u2028", " ", "x", "ab", '"\\"', "}", "{", "\n", "\r\n"];

describe("the pre-encoded text of file_read", () => {
  beforeAll(initHash);

  it("encodes windows byte for byte as JSON.stringify of the plain rendering", () => {
    const next = rng(42);
    let literal_count = 0;
    for (let n = 0; n < 3000; n++) {
      let text = next() < 0.1 ? "\ufeff" : "";
      const pieces = Math.floor(next() * 60);
      for (let k = 0; k < pieces; k++) text += PIECES[Math.floor(next() * PIECES.length)];
      const bytes = Buffer.from(text, "utf8");
      const tags = new LineTags(bytes);
      if (n % 2) tags.rememberTags(); // kept tags (a file's facts, fs/window-cache.ts): computed once, then reused
      const from = Math.floor(next() * (tags.length + 1));
      const to = from + Math.floor(next() * (tags.length - from + 1));
      const header = next() < 0.5 ? `file "q\\é".ts · hash ${n}` : "";
      const rendered = tags.render(from, to, header);
      const plain = expected(text, from, to, header);
      expect(rendered.toString(), JSON.stringify(text)).toBe(plain);
      const literal = windowLiteral(rendered);
      if (literal) {
        literal_count++;
        expect(literal.literal.toString("utf8"), JSON.stringify(text)).toBe(JSON.stringify(plain));
        expect(literal.toString()).toBe(plain);
        // Again from the same LineTags: its kept tags (odd n) give the same bytes.
        expect(windowLiteral(tags.render(from, to, header))!.literal.equals(literal.literal)).toBe(true);
        expect(tags.render(from, to, header).toString()).toBe(plain);
      }
    }
    // Most windows take the fast path, or this test would not test it.
    expect(literal_count).toBeGreaterThan(2000);
  });

  it("falls back to the plain rendering where a line must be cut, with the same result", () => {
    const long = "y".repeat(2500);
    const bytes = Buffer.from(`a\n${long}\n"q"\n`);
    const rendered = new LineTags(bytes).render(0, 3);
    const plain = expected(bytes.toString(), 0, 3);
    expect(windowLiteral(rendered)).toBeUndefined();
    expect(String(rendered)).toBe(plain);
    expect(plain).toContain("[line cut: 2500 chars]");
  });

  it("frames a response line that parses to the same object as the plain one", async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on("data", (c: Buffer) => chunks.push(c));
    const writer = new LineWriter(out);
    const bytes = Buffer.from('  say("hi\\t")\r\n\tx = "é"\n');
    const tags = new LineTags(bytes);
    const text = windowLiteral(tags.render(0, tags.length));
    expect(text).toBeDefined();
    writer.writeResult("id-1", { path: "a.ts", hash: "0123456789abcdef", total_lines: 2 }, text);
    writer.writeResult(7, {}, windowLiteral(new LineTags(Buffer.from("z\n")).render(0, 1)));
    await writer.idle();
    const lines = Buffer.concat(chunks).toString("utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(JSON.parse(lines[0])).toEqual({
      call_id: "id-1",
      success: true,
      result: { path: "a.ts", hash: "0123456789abcdef", total_lines: 2, text: expected(bytes.toString(), 0, 2) },
    });
    expect(JSON.parse(lines[1])).toEqual({ call_id: 7, success: true, result: { text: expected("z\n", 0, 1) } });
  });
});
