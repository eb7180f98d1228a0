import { mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash, tagOf } from "../../src/core/hash.js";
import { type DaemonClient, bodyLines, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

await initHash();

const HELLO = '#include<iostream>\nusing namespace std;\nint main()\n{\n   cout<<"Hello WOrld!"<<endl;\n}\n';
const hashOf = (s: string | Buffer) => fileHash(typeof s === "string" ? Buffer.from(s) : s);

let ws: ReturnType<typeof tmpWorkspace>;
let d: DaemonClient;
let sibling: string;
const at = (rel: string) => path.join(ws.dir, rel);
const read = (rel: string) => readFileSync(at(rel), "utf8");

beforeAll(async () => {
  ws = tmpWorkspace({ git: true, files: { "hello.cpp": HELLO } });
  sibling = `${ws.dir}-backup`;
  mkdirSync(sibling, { recursive: true });
  writeFileSync(path.join(sibling, "secret.txt"), "secret\n");
  d = await startDaemon(ws.dir);
});
afterAll(async () => {
  await d.close();
  ws.cleanup();
  rmSync(sibling, { recursive: true, force: true });
});

async function failCode(tool: string, params: Record<string, unknown>, opts: { session?: string; approved?: boolean } = {}) {
  const r = await d.call(tool, params, opts);
  expect(r.success, JSON.stringify(r.result)).toBe(false);
  expect(typeof r.result.message).toBe("string");
  return r.result;
}

describe("file_read", () => {
  it("reads the design document's example with its tags and the file hash", async () => {
    const r = await d.ok("file_read", { path: "hello.cpp" });
    expect(r).toMatchObject({ path: "hello.cpp", hash: hashOf(HELLO), total_lines: 6, start_line: 1, end_line: 6, next_offset: null, eol: "lf" });
    expect(r.text.split("\n")[0]).toBe(`file hello.cpp · hash ${hashOf(HELLO)} · lines 1-6 of 6`);
    expect(bodyLines(r.text)).toEqual([
      "1|6F28 #include<iostream>",
      "2|8EAB using namespace std;",
      "3|4127 int main()",
      "4|91FC {",
      '5|14C3    cout<<"Hello WOrld!"<<endl;',
      "6|BB18 }",
    ]);
  });

  it("pages with offset, limit and next_offset, clamps the limit, and refuses an offset past the end", async () => {
    writeFileSync(at("long.txt"), Array.from({ length: 2500 }, (_, i) => `l${i + 1}`).join("\n") + "\n");
    const first = await d.ok("file_read", { path: "long.txt" });
    expect(first).toMatchObject({ start_line: 1, end_line: 150, next_offset: 151, total_lines: 2500 });
    const mid = await d.ok("file_read", { path: "long.txt", offset: 2499, limit: 10 });
    expect(mid).toMatchObject({ start_line: 2499, end_line: 2500, next_offset: null });
    expect(bodyLines(mid.text).join("\n")).toBe(`2499|${tagOf("l2499")} l2499\n2500|${tagOf("l2500")} l2500`);
    expect(first.text.split("\n")[0]).toMatch(/^file long\.txt · hash [0-9a-f]{16} · lines 1-150 of 2500 · next offset 151$/);
    const clamped = await d.ok("file_read", { path: "long.txt", limit: 5000 });
    expect(bodyLines(clamped.text)).toHaveLength(2000);
    expect(clamped.next_offset).toBe(2001);
    const past = await failCode("file_read", { path: "long.txt", offset: 2501 });
    expect(past.code).toBe("INVALID_PARAMS");
    expect(past.message).toContain("2500 lines");
  });

  it("pages a wide file by next_offset without skipping a line: the window is cut to fit text, and says so", async () => {
    const LINES = 3000;
    const wide = (n: number) => `${n}:`.padEnd(200, "w");
    writeFileSync(at("wide-many.txt"), Array.from({ length: LINES }, (_, i) => wide(i + 1)).join("\n") + "\n");
    const seen: number[] = [];
    let offset: number | null = 1;
    let calls = 0;
    while (offset !== null) {
      const r: any = await d.ok("file_read", { path: "wide-many.txt", offset, limit: 2000 });
      calls++;
      const [header, ...body] = r.text.split("\n");
      expect(r.start_line).toBe(offset);
      expect(header).toBe(
        `file wide-many.txt · hash ${r.hash} · lines ${r.start_line}-${r.end_line} of ${LINES}${r.next_offset ? ` · next offset ${r.next_offset}` : ""}`,
      );
      const numbers = body.map((l: string) => Number(l.split("|")[0]));
      expect(numbers[0]).toBe(r.start_line);
      expect(numbers[numbers.length - 1]).toBe(r.end_line);
      expect(r.next_offset).toBe(r.end_line < LINES ? r.end_line + 1 : null);
      if (r.end_line < Math.min(LINES, offset + 1999)) expect(r.truncated).toBe(true);
      for (const [i, l] of body.entries()) expect(l).toBe(`${numbers[i]}|${tagOf(wide(numbers[i]))} ${wide(numbers[i])}`);
      expect(r.text.length).toBeLessThanOrEqual(100_000);
      seen.push(...numbers);
      offset = r.next_offset;
    }
    expect(calls).toBeGreaterThan(2); // the cap cut the 2000-line windows
    expect(seen).toEqual(Array.from({ length: LINES }, (_, i) => i + 1));
  });

  it("bounds tag mode to 2000 lines", async () => {
    const r = await failCode("file_read", { path: "hello.cpp", lines: Array.from({ length: 2001 }, (_, i) => i + 1) });
    expect(r.code).toBe("INVALID_PARAMS");
    expect(r.message).toContain("2000");
  });

  it("reads an empty file as zero lines", async () => {
    writeFileSync(at("empty.txt"), "");
    expect(await d.ok("file_read", { path: "empty.txt" })).toMatchObject({
      total_lines: 0,
      text: `file empty.txt · hash ${hashOf("")} · empty`,
      next_offset: null,
      eol: "none",
      hash: hashOf(""),
    });
  });

  it("returns only tags in lines mode and lists missing lines", async () => {
    const r = await d.ok("file_read", { path: "hello.cpp", lines: [5, 1, 40] });
    expect(r.text).toBe(`file hello.cpp · hash ${hashOf(HELLO)} · 6 lines · tags\n1|6F28\n5|14C3`);
    expect(r.missing).toEqual([40]);
    expect(r.hash).toBe(hashOf(HELLO));
    expect((await failCode("file_read", { path: "hello.cpp", lines: [1], offset: 2 })).code).toBe("INVALID_PARAMS");
  });

  it("cuts a very long line in text but tags the whole line", async () => {
    const line = "x".repeat(2500);
    writeFileSync(at("wide.txt"), `${line}\n`);
    const r = await d.ok("file_read", { path: "wide.txt" });
    expect(bodyLines(r.text)[0].startsWith(`1|${tagOf(line)} ${"x".repeat(2000)}`)).toBe(true);
    expect(r.text).toContain("line cut");
    expect(r.text.length).toBeLessThan(2200);
  });

  it("tags CRLF lines like LF ones, hides the BOM, and reports the line endings", async () => {
    writeFileSync(at("crlf.txt"), "\ufeffa\r\nb\r\n");
    const r = await d.ok("file_read", { path: "crlf.txt" });
    expect(r).toMatchObject({ eol: "crlf", total_lines: 2 });
    expect(bodyLines(r.text)).toEqual([`1|${tagOf("a")} a`, `2|${tagOf("b")} b`]);
    writeFileSync(at("mixed.txt"), "a\r\nb\n");
    expect((await d.ok("file_read", { path: "mixed.txt" })).eol).toBe("mixed");
  });

  it("counts one line in the singular in its headers and messages", async () => {
    writeFileSync(at("one.txt"), "only\n");
    const r = await d.ok("file_read", { path: "one.txt" });
    expect((await d.ok("file_read", { path: "one.txt", since: r.hash })).text).toMatch(/^file one\.txt · hash \w+ · 1 line · unchanged since/);
    expect((await d.ok("file_read", { path: "one.txt", lines: [1] })).text).toBe(`file one.txt · hash ${r.hash} · 1 line · tags\n1|${tagOf("only")}`);
    expect((await failCode("file_read", { path: "one.txt", offset: 3 })).message).toContain("one.txt has 1 line.");
    const w = await d.ok("file_write", { path: "one.txt", hash: r.hash, content: "still one\n" });
    expect(w.text.split("\n")[0]).toBe(`file one.txt · hash ${w.hash} (was ${r.hash}) · 1 line`);
  });

  it("answers since: unchanged, a diff with the changed regions, or a normal read", async () => {
    writeFileSync(at("since.txt"), "one\ntwo\nthree\n");
    const first = await d.ok("file_read", { path: "since.txt" });
    const same = await d.ok("file_read", { path: "since.txt", since: first.hash });
    expect(same).toMatchObject({ unchanged: true, hash: first.hash, total_lines: 3 });
    expect(same.text).toBe(`file since.txt · hash ${first.hash} · 3 lines · unchanged since ${first.hash}: your tags are still valid`);
    writeFileSync(at("since.txt"), "one\nTWO\nthree\n");
    const changed = await d.ok("file_read", { path: "since.txt", since: first.hash });
    expect(changed).toMatchObject({ unchanged: false, since: first.hash, hash: hashOf("one\nTWO\nthree\n") });
    expect(changed.diff).toContain("-two\n+TWO");
    expect(changed.text).toBe(
      `file since.txt · hash ${changed.hash} · 3 lines · changed since ${first.hash}\n1|${tagOf("one")} one\n2|${tagOf("TWO")} TWO\n3|${tagOf("three")} three`,
    );
    writeFileSync(at("since.txt"), "zero\none\nTWO\nthree\n");
    const moved = await d.ok("file_read", { path: "since.txt", since: changed.hash });
    expect(moved.shifts).toEqual([{ from: 1, to: 3, by: 1 }]);
    expect(moved.text.split("\n")[1]).toBe("moved: old lines 1-3 → 2-4");
    const unknown = await d.ok("file_read", { path: "since.txt", since: "0123456789abcdef" });
    expect(bodyLines(unknown.text)).toHaveLength(4);
    expect(unknown.unchanged).toBeUndefined();
  });

  it("refuses what is not a readable text file", async () => {
    mkdirSync(at("dir"), { recursive: true });
    writeFileSync(at("bin.dat"), Buffer.from([0x61, 0x00, 0x62]));
    writeFileSync(at("latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect((await failCode("file_read", { path: "nope.txt" })).code).toBe("NOT_FOUND");
    expect((await failCode("file_read", { path: "dir" })).code).toBe("NOT_A_FILE");
    const bin = await failCode("file_read", { path: "bin.dat" });
    expect(bin).toMatchObject({ code: "BINARY_FILE", hash: hashOf(Buffer.from([0x61, 0x00, 0x62])) });
    expect((await failCode("file_read", { path: "latin1.txt" })).code).toBe("ENCODING");
    const unknown = await failCode("file_read", { path: "hello.cpp", offest: 2 });
    expect(unknown).toMatchObject({ code: "INVALID_PARAMS" });
    expect(unknown.message).toContain("offest");
  });

  it("tells info its size limit and the watcher's state", async () => {
    const info = await d.ok("info", { tool_id: "file_read" });
    expect(info.state.max_file_bytes).toBe(10 * 1024 * 1024);
    // One naming in `state`: snake_case throughout.
    for (const key of Object.keys(info.state)) expect(key, key).toMatch(/^[a-z0-9_]+$/);
    expect(info.mutating).toBe(false);
    expect((await d.ok("info", { tool_id: "file_write" })).mutating).toBe(true);
  });

  it("refuses files over the size limit", async () => {
    const small = await startDaemon(ws.dir, ["--max-file-bytes", "64"]);
    try {
      writeFileSync(at("big.txt"), "y\n".repeat(100));
      const r = await small.call("file_read", { path: "big.txt" });
      expect(r.result).toMatchObject({ code: "TOO_LARGE", size: 200, max_bytes: 64 });
    } finally {
      await small.close();
    }
  });
});

describe("paths (the MCP filesystem server's advisories)", () => {
  it("refuses everything outside the root and inside .git/", async () => {
    symlinkSync(path.join(sibling, "secret.txt"), at("escape.txt"));
    symlinkSync(sibling, at("escape-dir"));
    const outside = [
      `../${path.basename(sibling)}/secret.txt`,
      path.join(sibling, "secret.txt"),
      "/etc/passwd",
      "../../etc/passwd",
      "escape.txt",
      "escape-dir/secret.txt",
    ];
    for (const p of outside) {
      expect((await failCode("file_read", { path: p })).code, p).toBe("PATH_OUTSIDE_ROOT");
      expect((await failCode("file_write", { path: p, hash: hashOf("secret\n"), content: "pwned\n" })).code, p).toBe("PATH_OUTSIDE_ROOT");
      expect((await failCode("file_delete", { path: p, hash: hashOf("secret\n") })).code, p).toBe("PATH_OUTSIDE_ROOT");
    }
    expect((await failCode("file_write", { path: "escape-dir/new.txt", content: "x\n" })).code).toBe("PATH_OUTSIDE_ROOT");
    expect(readFileSync(path.join(sibling, "secret.txt"), "utf8")).toBe("secret\n");
    expect(() => statSync(path.join(sibling, "new.txt"))).toThrow();
    expect((await failCode("file_read", { path: "a\0b" })).code).toBe("INVALID_PARAMS");
    expect((await failCode("file_read", { path: ".git/config" })).code).toBe("PATH_FORBIDDEN");
    expect((await failCode("file_write", { path: ".git/hooks/pre-commit", content: "x\n" })).code).toBe("PATH_FORBIDDEN");
    expect((await failCode("file_delete", { path: ".git/HEAD", hash: hashOf(read(".git/HEAD")) })).code).toBe("PATH_FORBIDDEN");
  });

  it("forbids a .git component at any depth: a nested repository's .git/, a .git file, and through a symlink", async () => {
    mkdirSync(at("emb/.git"), { recursive: true });
    writeFileSync(at("emb/.git/config"), "[core]\n");
    mkdirSync(at("sub"), { recursive: true });
    writeFileSync(at("sub/.git"), "gitdir: ../.git/modules/sub\n");
    symlinkSync("emb/.git", at("emb-git-link"));
    const forbidden = ["emb/.git/config", "emb/.git", "sub/.git", "emb-git-link/config", "./emb/../emb/.git/hooks/pre-commit"];
    for (const p of forbidden) {
      expect((await failCode("file_read", { path: p })).code, p).toBe("PATH_FORBIDDEN");
      expect((await failCode("file_write", { path: p, content: "[core]\n\tfsmonitor = touch /tmp/pwned\n" })).code, p).toBe("PATH_FORBIDDEN");
      expect((await failCode("file_write", { path: p, hash: hashOf("[core]\n"), content: "x\n" })).code, p).toBe("PATH_FORBIDDEN");
      expect((await failCode("file_delete", { path: p, hash: hashOf("[core]\n") })).code, p).toBe("PATH_FORBIDDEN");
    }
    expect((await failCode("file_write", { path: "deep/er/.git/config", content: "x\n" })).code).toBe("PATH_FORBIDDEN");
    expect(read("emb/.git/config")).toBe("[core]\n");
    expect(read("sub/.git")).toBe("gitdir: ../.git/modules/sub\n");
    expect(() => statSync(at("deep"))).toThrow();
    // Names that only look alike are ordinary files.
    await d.ok("file_write", { path: "sub/.gitignore", content: "x\n" });
    await d.ok("file_write", { path: "sub/.git-blame-ignore", content: "x\n" });
  });

  it("accepts an absolute path inside the root", async () => {
    expect((await d.ok("file_read", { path: at("hello.cpp") })).path).toBe("hello.cpp");
  });
});
