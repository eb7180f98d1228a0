import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { LineReader, LineWriter, MAX_LINE_CHARS } from "../../../src/protocol/jsonl/framing.js";

function read(chunks: (string | Buffer)[]) {
  const input = new PassThrough();
  const lines: string[] = [];
  let overflows = 0;
  const ended = new Promise<void>(
    (resolve) =>
      new LineReader(
        input,
        (l) => lines.push(l),
        () => overflows++,
        resolve,
      ),
  );
  for (const c of chunks) input.write(c);
  input.end();
  return ended.then(() => ({ lines, overflows }));
}

describe("LineReader", () => {
  it("splits on \\n, strips one trailing \\r, keeps an unterminated last line", async () => {
    expect((await read(["a\nb\r\n", "c"])).lines).toEqual(["a", "b", "c"]);
  });

  it("joins lines split across chunks, even inside a multi-byte character", async () => {
    const bytes = Buffer.from('{"x":"é€"}\n', "utf8");
    const chunks = [...bytes].map((b) => Buffer.from([b]));
    expect((await read(chunks)).lines).toEqual(['{"x":"é€"}']);
  });

  it("answers a line over MAX_LINE_CHARS once as an overflow, drops it, and reads the next line", async () => {
    const chunk = "x".repeat(1024 * 1024);
    const chunks: string[] = Array.from({ length: MAX_LINE_CHARS / chunk.length + 2 }, () => chunk);
    const { lines, overflows } = await read([...chunks, "tail of the long line\nnext\n"]);
    expect(overflows).toBe(1);
    expect(lines).toEqual(["next"]);
  });

  it("strips a BOM at the start of a line", async () => {
    expect((await read(["\ufeff{}\r\n", "\ufeff\n"])).lines).toEqual(["{}", ""]);
  });

  it("keeps empty lines for the caller to skip", async () => {
    expect((await read(["\n\nx\n"])).lines).toEqual(["", "", "x"]);
  });
});

describe("LineWriter", () => {
  it("writes whole lines in order and waits for drain", async () => {
    const written: string[] = [];
    let calls = 0;
    const slow = new Writable({
      highWaterMark: 8,
      write(chunk, _enc, cb) {
        written.push(String(chunk));
        calls++;
        setImmediate(cb);
      },
    });
    const w = new LineWriter(slow);
    for (let i = 0; i < 50; i++) w.write({ i, pad: "x".repeat(20) });
    await w.idle();
    expect(calls).toBe(50);
    expect(written.map((l) => JSON.parse(l).i)).toEqual([...Array(50).keys()]);
    expect(written.every((l) => l.endsWith("\n") && l.indexOf("\n") === l.length - 1)).toBe(true);
  });

  it("is idle only once the stream has written the bytes out, not when its buffer took them (a pipe on exit)", async () => {
    const held: (() => void)[] = [];
    const written: string[] = [];
    // Room for everything, so every write says yes at once; the bytes leave only when released (an async pipe).
    const pipe = new Writable({
      highWaterMark: 1 << 20,
      write(chunk, _enc, cb) {
        held.push(() => (written.push(String(chunk)), cb()));
      },
    });
    const w = new LineWriter(pipe);
    for (let i = 0; i < 5; i++) w.write({ i });
    await new Promise((r) => setImmediate(r)); // answers leave at the end of the turn they were written in
    let idle = false;
    const done = w.idle().then(() => (idle = true));
    while (held.length) {
      await new Promise((r) => setImmediate(r)); // a turn for idle to resolve too early, if it would
      expect(idle).toBe(false);
      held.shift()?.();
    }
    await done;
    expect(written.filter((l) => l !== "").map((l) => JSON.parse(l).i)).toEqual([0, 1, 2, 3, 4]);
  });
});
