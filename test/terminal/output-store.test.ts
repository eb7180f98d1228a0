import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, writeSync, closeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { MAX_OUTPUT_CHARS } from "../../src/terminal/output-cap.js";
import { KEPT_FILES, OutputStore, PAGE_BYTES, readCapped, readPage } from "../../src/terminal/output-store.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "tool-layer-output-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string | Buffer): string {
  const f = path.join(dir, name);
  writeFileSync(f, content);
  return f;
}

describe("readCapped", () => {
  test("a small output whole, escapes removed", async () => {
    expect(await readCapped(file("a.log", "\x1b[32mok\x1b[0m\nü\n"))).toEqual({ output: "ok\nü\n", truncated: false, bytes: 15 });
  });

  test("a large output (past the whole-read size): head and tail, the lines between counted, within the cap", async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `\x1b[2mline\x1b[0m ${i + 1} ü\n`).join("");
    const r = await readCapped(file("big.log", lines));
    expect(r.bytes).toBe(Buffer.byteLength(lines));
    expect(r.truncated).toBe(true);
    expect(r.output.length).toBeLessThanOrEqual(MAX_OUTPUT_CHARS);
    expect(r.output).not.toContain("\x1b");
    expect(r.output.startsWith("line 1 ü\nline 2 ü\n")).toBe(true);
    expect(r.output.endsWith("line 200000 ü\n")).toBe(true);
    const shown = r.output.split("\n").filter((l) => /^line \d+ ü$/.test(l)).length;
    expect(Number(/\[([\d,]+) lines/.exec(r.output)![1].replace(/,/g, "")) + shown).toBe(200_000);
  });
});

describe("readPage", () => {
  test("pages never split a character or an escape, and chain by next", async () => {
    // A two-byte character straddles the first page's end; an escape sequence the second's.
    const one = "x".repeat(PAGE_BYTES - 1);
    const two = "y".repeat(PAGE_BYTES - 4);
    const f = file("p.log", `${one}é${two}\x1b[31mred\x1b[0m end\n`);
    const first = await readPage(f, 0);
    expect(first.data === one).toBe(true);
    expect(first.next).toBe(PAGE_BYTES - 1);
    const second = await readPage(f, first.next);
    expect(second.data === `é${two}`).toBe(true);
    const third = await readPage(f, second.next);
    expect(third.data).toBe("red end\n");
    expect(third.next).toBe(third.size);
    expect(await readPage(f, third.next)).toMatchObject({ data: "", next: third.size });
  });

  test("an offset inside a character starts at the next whole one", async () => {
    const f = file("q.log", "éa\n");
    expect((await readPage(f, 1)).data).toBe("a\n");
  });
});

describe("OutputStore", () => {
  test("keeps the newest files, never a busy one, and removes its folder on dispose", async () => {
    const store = new OutputStore(dir, "/nonexistent-root");
    const busy = store.create("busy");
    const made: string[] = [];
    for (let i = 0; i < KEPT_FILES + 5; i++) {
      const { file: f, fd } = store.create(`run-${i}`);
      writeSync(fd, `output ${i}\n`);
      closeSync(fd);
      await store.done(f);
      made.push(f);
    }
    closeSync(busy.fd);
    expect(store.kept(busy.file)).toBe(true);
    expect(made.slice(0, 6).map((f) => store.kept(f) || existsSync(f))).toEqual(Array(6).fill(false));
    expect(made.slice(6).every((f) => store.kept(f) && existsSync(f))).toBe(true);
    const folder = store.folder();
    expect(path.dirname(folder)).toBe(path.join(dir, "terminal"));
    expect(path.basename(folder).startsWith(`${process.pid}-`)).toBe(true);
    store.dispose();
    expect(existsSync(folder)).toBe(false);
  });

  test("sweeps the folders of daemons that are gone; never uses a folder inside the workspace", async () => {
    const stale = path.join(dir, "terminal", "999999999-abc");
    mkdirSync(stale, { recursive: true });
    const store = new OutputStore(dir, "/nonexistent-root");
    store.folder();
    await expect.poll(() => existsSync(stale)).toBe(false);
    store.dispose();
    const inside = new OutputStore(path.join(dir, "state"), dir);
    expect(inside.folder().startsWith(dir)).toBe(false);
    expect(readdirSync(dir)).not.toContain("state");
    inside.dispose();
  });
});
