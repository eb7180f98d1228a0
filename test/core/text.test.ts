import { beforeAll, describe, expect, it } from "vitest";
import xxhash from "xxhash-wasm";
import { fileHash, initHash, tagOf } from "../../src/core/hash.js";
import { LineTags, tagOfRange, xxh32 } from "../../src/core/line-tags.js";
import { dominantEol, eolStyle, parseText, plural, serialize, splitText } from "../../src/core/text.js";

beforeAll(initHash);

const HELLO = '#include<iostream>\nusing namespace std;\nint main()\n{\n   cout<<"Hello WOrld!"<<endl;\n}\n';

describe("line splitting (SPEC 4)", () => {
  it("counts lines as the spec says", () => {
    expect(splitText("a\nb\n").lines).toEqual(["a", "b"]);
    expect(splitText("a\nb").lines).toEqual(["a", "b"]);
    expect(splitText("").lines).toEqual([]);
    expect(splitText("\n").lines).toEqual([""]);
    expect(splitText("\n\n").lines).toEqual(["", ""]);
  });

  it("gives a \\r before \\n to the terminator", () => {
    const { lines, eols } = splitText("a\r\nb\nc");
    expect(lines).toEqual(["a", "b", "c"]);
    expect(eols).toEqual(["\r\n", "\n", ""]);
  });

  it("keeps a lone \\r inside the line", () => {
    expect(splitText("a\rb\n").lines).toEqual(["a\rb"]);
  });

  it("round-trips bytes, BOM included", () => {
    for (const s of ["", "\n", "a", "a\r\nb\n", "\ufeffx\r\ny", "a\n\r\n\nb"]) {
      const bytes = Buffer.from(s, "utf8");
      expect(serialize(parseText(bytes, "f")).equals(bytes)).toBe(true);
    }
  });

  it("classifies line endings", () => {
    expect(eolStyle(splitText("a\nb\n").eols)).toBe("lf");
    expect(eolStyle(splitText("a\r\nb\r\n").eols)).toBe("crlf");
    expect(eolStyle(splitText("a\r\nb\n").eols)).toBe("mixed");
    expect(eolStyle(splitText("a").eols)).toBe("none");
    expect(dominantEol(splitText("a\r\nb\r\nc\n").eols)).toBe("\r\n");
    expect(dominantEol(splitText("a\r\nb\nc\n").eols)).toBe("\n");
  });
});

describe("tags and hashes", () => {
  it("tags the design document's example with the spec's values", () => {
    expect(new LineTags(Buffer.from(HELLO)).all()).toEqual(["6F28", "8EAB", "4127", "91FC", "14C3", "BB18"]);
    expect(tagOf('   cout<<"Hello World!"<<endl;')).toBe("EB50");
  });

  it("tags CRLF and LF lines alike, and ignores the BOM", () => {
    const lf = new LineTags(Buffer.from("x = 1\ny = 2\n")).all();
    expect(new LineTags(Buffer.from("x = 1\r\ny = 2\r\n")).all()).toEqual(lf);
    expect(new LineTags(Buffer.from("\ufeffx = 1\ny = 2")).all()).toEqual(lf);
  });

  it("gives identical lines the same tag", () => {
    const tags = new LineTags(Buffer.from("}\nx\n}\n")).all();
    expect(tags[0]).toBe(tags[2]);
  });

  it("tags a window from the raw bytes exactly as the whole file", () => {
    const bytes = Buffer.from("\ufeffa\r\nb\nc\r\nd\ne");
    const lazy = new LineTags(bytes);
    expect(Array.from({ length: 5 }, (_, i) => lazy.at(i))).toEqual(["a", "b", "c", "d", "e"].map(tagOf));
    expect(Array.from({ length: 5 }, (_, i) => lazy.text(i))).toEqual(["a", "b", "c", "d", "e"]);
    expect(lazy.eolStyle()).toBe("mixed");
  });

  it("hashes the raw bytes as 16 lower-case hex digits", () => {
    expect(fileHash(Buffer.from(""))).toBe("ef46db3751d8e999");
    expect(fileHash(Buffer.from("a\n"))).not.toBe(fileHash(Buffer.from("a\r\n")));
  });
});

describe("the in-place tagger", () => {
  it("agrees with the WebAssembly XXH32 on every length around the 16-byte stripes and on random bytes", async () => {
    const wasm = await xxhash();
    const tagOfBytes = (b: Uint8Array) => (wasm.h32Raw(b, 0) & 0xffff).toString(16).toUpperCase().padStart(4, "0");
    let seed = 7;
    const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
    for (let len = 0; len < 200; len++) {
      for (let trial = 0; trial < 5; trial++) {
        const bytes = Buffer.from(Array.from({ length: len + 3 }, rand));
        expect(tagOfRange(bytes, 3, bytes.length), `len ${len}`).toBe(tagOfBytes(bytes.subarray(3)));
        expect(xxh32(bytes, 3, bytes.length) & 0xffff).toBe(parseInt(tagOfBytes(bytes.subarray(3)), 16));
      }
    }
    expect(tagOfRange(Buffer.from("ü€😀 x"), 0, Buffer.byteLength("ü€😀 x"))).toBe(tagOf("ü€😀 x"));
  });

  it("tags lines lazily exactly as the split lines tag one by one", () => {
    const bytes = Buffer.from("\ufeffa\r\nb\n\nc\r\n\r\nd");
    const lazy = new LineTags(bytes);
    expect(lazy.length).toBe(6);
    const oneByOne = splitText(bytes.toString("utf8").slice(1)).lines.map(tagOf);
    expect(oneByOne).toHaveLength(6);
    expect(Array.from({ length: 6 }, (_, i) => lazy.at(i))).toEqual(oneByOne);
    expect(lazy.all()).toEqual(oneByOne);
    expect(new LineTags(Buffer.from("")).length).toBe(0);
    expect(new LineTags(Buffer.from("\n")).length).toBe(1);
  });
});

describe("a last line ending in a lone \\r", () => {
  it("keeps the \\r in the line and its tag, everywhere", () => {
    const bytes = Buffer.from("a\r\nb\r");
    expect(parseText(bytes, "f").lines).toEqual(["a", "b\r"]);
    const expected = [tagOf("a"), tagOf("b\r")];
    expect(new LineTags(bytes).all()).toEqual(expected);
    expect(new LineTags(bytes).all()).toEqual(expected);
    expect(new LineTags(bytes).text(1)).toBe("b\r");
    expect(new LineTags(bytes).eolStyle()).toBe("crlf");
  });
});

describe("plural", () => {
  it("gives a count its noun, singular for one only", () => {
    expect([0, 1, 2].map((n) => plural(n, "line"))).toEqual(["0 lines", "1 line", "2 lines"]);
    expect(plural(1, "entry", "entries")).toBe("1 entry");
    expect(plural(3, "entry", "entries")).toBe("3 entries");
  });
});
