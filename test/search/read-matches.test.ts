import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { rgPath } from "@vscode/ripgrep";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash, tagOf } from "../../src/core/hash.js";
import { type MatchSource, readMatches } from "../../src/search/read-matches.js";
import { LineSplitter, parseRecord } from "../../src/search/rg-output.js";
import { HEAD_KEPT_BYTES, type RgFile, ripgrepArgs } from "../../src/search/ripgrep.js";
import { tmpWorkspace } from "../helpers/tmp.js";

/**
 * rg reads a file, then the search reads it again for its hash and tags: what each saw is compared, so the hash and the
 * tags always describe one version. These tests let real rg read one version and change the file before the second read.
 */
describe("reading the files rg matched", () => {
  const ws = tmpWorkspace();
  const outside = tmpWorkspace({ files: { "secret.txt": "line\nneedle outside\n" } });
  const V1 = "first\nsecond needle\nthird\nfourth needle\n";
  let source: MatchSource;
  beforeAll(async () => {
    await initHash();
    source = {
      root: ws.dir,
      maxFileBytes: 1 << 20,
      isInside: (abs) => abs === ws.dir || abs.startsWith(`${ws.dir}/`),
      matchStart: async () => -1,
      budget: { chars: Infinity, full: false },
    };
  });
  afterAll(() => {
    ws.cleanup();
    outside.cleanup();
  });

  /** Writes `content`, and returns what real rg reports about it. */
  function rgSees(rel: string, content: string | Buffer, pattern = "needle"): RgFile {
    const abs = path.join(ws.dir, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, content);
    const out = execFileSync(rgPath, ripgrepArgs({ pattern, rel, context: 0, git: false }), { cwd: ws.dir });
    let file: RgFile | undefined;
    new LineSplitter((line) => {
      const r = parseRecord(line);
      if (!r) return;
      file ??= { pathBytes: Buffer.from(r.pathBytes), lines: [] };
      file.lines.push({
        line: r.line,
        offset: r.offset,
        match: r.match,
        head: r.head.subarray(0, HEAD_KEPT_BYTES),
        whole: !r.cut && r.head.length <= HEAD_KEPT_BYTES,
      });
    }).push(out);
    return file!;
  }

  it("takes the hash and the tags from the bytes it read, when they are what rg read", async () => {
    const rg = rgSees("same.txt", V1);
    const { file, note } = await readMatches(source, rg);
    expect(note).toBeUndefined();
    expect(file!.hash).toBe(fileHash(Buffer.from(V1)));
    expect(file!.lines.map((l) => [l.line, l.tag, l.text])).toEqual([
      [2, tagOf("second needle"), "second needle"],
      [4, tagOf("fourth needle"), "fourth needle"],
    ]);
  });

  it("takes a line ending in \\r as rg read it, before a CRLF and at the end of the file alike", async () => {
    for (const [name, content, line, text] of [
      ["cr-crlf.txt", "\nnee\rdle needle\r\r\n", 2, "nee\rdle needle\r"],
      ["cr-eof.txt", "a\nx needle\r", 2, "x needle\r"],
      ["crlf.txt", "x needle\r\n", 1, "x needle"],
    ] as const) {
      const { file, note } = await readMatches(source, rgSees(name, content));
      expect(note, name).toBeUndefined();
      expect(
        file!.lines.map((l) => [l.line, l.tag, l.text]),
        name,
      ).toEqual([[line, tagOf(text), text]]);
    }
  });

  it("leaves a file out, saying so, when a line was inserted or edited after rg read it", async () => {
    for (const [name, later] of [
      ["inserted.txt", `new first\n${V1}`],
      ["edited.txt", V1.replace("second needle", "SECOND needle")],
      ["shorter.txt", "first\n"],
    ]) {
      const rg = rgSees(name, V1);
      writeFileSync(path.join(ws.dir, name), later);
      const r = await readMatches(source, rg);
      expect(r.file, name).toBeUndefined();
      expect(r.note).toBe(`${name} changed while it was searched; its matches are left out: search again.`);
    }
  });

  it("keeps a file whose named lines did not change: an append after them leaves hash and tags of one version", async () => {
    const rg = rgSees("appended.txt", V1);
    const later = `${V1}fifth\n`;
    writeFileSync(path.join(ws.dir, "appended.txt"), later);
    const { file } = await readMatches(source, rg);
    expect(file!.hash).toBe(fileHash(Buffer.from(later)));
    expect(file!.lines.map((l) => l.tag)).toEqual([tagOf("second needle"), tagOf("fourth needle")]);
  });

  it("checks CRLF lines, a BOM and a last line without newline against rg's view", async () => {
    for (const [name, content] of [
      ["crlf.txt", "a\r\nneedle b\r\nc\r\n"],
      ["bom.txt", "\ufeffneedle first\nsecond needle\n"],
      ["noeol.txt", "x\nneedle last"],
    ]) {
      const { file, note } = await readMatches(source, rgSees(name, content));
      expect(note, name).toBeUndefined();
      expect(file!.hash).toBe(fileHash(Buffer.from(content)));
      for (const l of file!.lines) expect(l.tag).toBe(tagOf(l.text));
    }
  });

  it("leaves out a file deleted, replaced by a FIFO, or swapped for a link leading outside since rg read it", async () => {
    let rg = rgSees("gone.txt", V1);
    unlinkSync(path.join(ws.dir, "gone.txt"));
    expect((await readMatches(source, rg)).note).toBe("gone.txt was deleted while it was searched; its matches are left out.");

    rg = rgSees("fifo.txt", V1);
    unlinkSync(path.join(ws.dir, "fifo.txt"));
    execFileSync("mkfifo", [path.join(ws.dir, "fifo.txt")]);
    expect((await readMatches(source, rg)).note).toBe("fifo.txt is no longer a regular file; its matches are left out.");

    rg = rgSees("dir/secret.txt", "line\nneedle inside\n");
    rmSync(path.join(ws.dir, "dir"), { recursive: true });
    symlinkSync(outside.dir, path.join(ws.dir, "dir"));
    const swapped = await readMatches(source, rg);
    expect(swapped.file).toBeUndefined();
    expect(swapped.note).toMatch(/^dir\/secret\.txt now leads outside the workspace/);
  });

  it("leaves out a UTF-16 file, which rg decodes but the file tools take as binary", async () => {
    const rg = rgSees("utf16.txt", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("one\nneedle two\n", "utf16le")]));
    expect(rg.lines).toHaveLength(1);
    const r = await readMatches(source, rg);
    expect(r.file).toBeUndefined();
    expect(r.note).toBe("utf16.txt is binary to the file tools (UTF-16 or NUL bytes); its matches are left out.");
  });

  it("gives no hash or tags for a file over the size limit, and shows its lines from where rg found them", async () => {
    const big = `${"x".repeat(3000)}\nneedle here\n${"y".repeat(5000)}\n`;
    const rg = rgSees("big.txt", big);
    const { file, linesCut } = await readMatches({ ...source, maxFileBytes: 1000 }, rg);
    expect(file).toEqual({ path: "big.txt", hash: null, size: big.length, lines: [{ line: 2, tag: null, text: "needle here", match: true }] });
    expect(linesCut).toBe(false);
  });
});
