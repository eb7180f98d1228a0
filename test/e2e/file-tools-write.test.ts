import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileHash, initHash, tagOf } from "../../src/core/hash.js";
import { type DaemonClient, bodyLines, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

await initHash();

const HELLO = '#include<iostream>\nusing namespace std;\nint main()\n{\n   cout<<"Hello WOrld!"<<endl;\n}\n';
const hashOf = (s: string | Buffer) => fileHash(typeof s === "string" ? Buffer.from(s) : s);

const ws = tmpWorkspace({ git: true });
let d: DaemonClient;
daemonForSuite(ws, (c) => (d = c));
const at = (rel: string) => path.join(ws.dir, rel);
const read = (rel: string) => readFileSync(at(rel), "utf8");
let n = 0;
/** A fresh file per test, so tests do not depend on each other. */
function file(content: string | Buffer): string {
  const rel = `f${++n}.txt`;
  writeFileSync(at(rel), content);
  return rel;
}

async function failure(tool: string, params: Record<string, unknown>, opts: { session?: string; approved?: boolean } = {}) {
  const r = await d.call(tool, params, opts);
  expect(r.success, JSON.stringify(r.result)).toBe(false);
  return r.result;
}

describe("file_write by tag", () => {
  it("applies the design document's example", async () => {
    const rel = file(HELLO);
    const r = await d.ok("file_write", {
      path: rel,
      hash: hashOf(HELLO),
      edits: [{ type: "replace", startline: "14C3", endline: "14C3", content: 'cout<<"Hello World!"<<endl;' }],
    });
    const after = HELLO.replace("WOrld", "World");
    expect(read(rel)).toBe(after);
    expect(r).toMatchObject({ path: rel, hash: hashOf(after), previous_hash: hashOf(HELLO), total_lines: 6 });
    expect(r.text).toBe(
      `file ${rel} · hash ${hashOf(after)} (was ${hashOf(HELLO)}) · 6 lines\n3|4127 int main()\n4|91FC {\n5|EB50    cout<<"Hello World!"<<endl;\n6|BB18 }`,
    );
    expect(r.shifts).toEqual([]);
    expect(r.diff).toContain('-   cout<<"Hello WOrld!"<<endl;\n+   cout<<"Hello World!"<<endl;');
    expect(r.dry_run).toBeUndefined();
    const again = await d.ok("file_read", { path: rel });
    expect(again.hash).toBe(r.hash);
  });

  it("refuses bad anchors, overlaps and no-ops with the right code, changing nothing", async () => {
    const text = "{\n  a\n}\n{\n  b\n}\n";
    const rel = file(text);
    const h = hashOf(text);
    const close = tagOf("}");
    const cases: [unknown[], string][] = [
      [[{ type: "delete", startline: "0000" }], "TAG_NOT_FOUND"],
      [[{ type: "delete", startline: close }], "TAG_AMBIGUOUS"],
      [[{ type: "delete", startline: `2:${close}` }], "TAG_MISMATCH"],
      [[{ type: "delete", startline: "zz" }], "INVALID_PARAMS"],
      [
        [
          { type: "delete", startline: `3:${close}`, endline: `6:${close}` },
          { type: "delete", startline: `5:${tagOf("  b")}` },
        ],
        "OVERLAP",
      ],
      [[{ type: "replace", startline: `2:${tagOf("  a")}`, content: "a" }], "NO_CHANGE"],
      [[{ type: "move", startline: close }], "INVALID_PARAMS"],
      [[{ type: "delete", startline: close, content: "x" }], "INVALID_PARAMS"],
    ];
    for (const [edits, code] of cases) {
      const r = await failure("file_write", { path: rel, hash: h, edits });
      expect(r.code, JSON.stringify(edits)).toBe(code);
    }
    const ambiguous = await failure("file_write", { path: rel, hash: h, edits: [{ type: "delete", startline: close }] });
    expect(ambiguous.message).toContain(`3:${close}, 6:${close}`);
    expect(read(rel)).toBe(text);
  });

  it("refuses a stale hash with the current hash and a diff from the caller's version", async () => {
    const rel = file("one\ntwo\n");
    const mine = await d.ok("file_read", { path: rel }, { session: "a" });
    writeFileSync(at(rel), "one\nTWO\n");
    const r = await failure("file_write", { path: rel, hash: mine.hash, edits: [{ type: "delete", startline: tagOf("one") }] }, { session: "a" });
    expect(r).toMatchObject({ code: "HASH_MISMATCH", current_hash: hashOf("one\nTWO\n") });
    expect(r.diff).toContain("-two\n+TWO");
    expect(read(rel)).toBe("one\nTWO\n");
    const unknown = await failure("file_write", { path: rel, hash: "0123456789abcdef", content: "x\n" });
    expect(unknown.code).toBe("HASH_MISMATCH");
    expect(unknown.diff).toBeUndefined();
  });

  it("keeps CRLF, the BOM and a missing final newline", async () => {
    const text = "\ufeffa\r\nb\r\nc";
    const rel = file(text);
    await d.ok("file_write", { path: rel, hash: hashOf(text), edits: [{ type: "insert", startline: tagOf("c"), content: "d\ne" }] });
    expect(read(rel)).toBe("\ufeffa\r\nb\r\nc\r\nd\r\ne");
  });
});

describe("file_write with content", () => {
  it("creates a file and its parents, and refuses to create over an existing one", async () => {
    const r = await d.ok("file_write", { path: "new/deep/x.ts", content: "export {};\n" });
    expect(r).toMatchObject({ created: true, previous_hash: null, hash: hashOf("export {};\n"), total_lines: 1 });
    expect(read("new/deep/x.ts")).toBe("export {};\n");
    const again = await failure("file_write", { path: "new/deep/x.ts", content: "y\n" });
    expect(again).toMatchObject({ code: "ALREADY_EXISTS", current_hash: r.hash });
    expect((await failure("file_write", { path: "new/deep/x.ts", hash: null, content: "y\n" })).code).toBe("ALREADY_EXISTS");
  });

  it("says which file already exists, as a write of several files (an LSP rename) does", async () => {
    const r = await d.ok("file_write", { path: "named/exists.ts", content: "export {};\n" });
    const again = await failure("file_write", { path: "./named/../named/exists.ts", content: "y\n" });
    expect(again).toMatchObject({ code: "ALREADY_EXISTS", current_hash: r.hash, path: "named/exists.ts" });
  });

  it("needs exactly one of edits and content, and an existing file for edits or a hash", async () => {
    const rel = file("x\n");
    expect((await failure("file_write", { path: rel, hash: hashOf("x\n") })).code).toBe("INVALID_PARAMS");
    expect((await failure("file_write", { path: rel, hash: hashOf("x\n"), content: "y\n", edits: [{ type: "delete", startline: tagOf("x") }] })).code).toBe(
      "INVALID_PARAMS",
    );
    expect((await failure("file_write", { path: "missing.txt", edits: [{ type: "insert", content: "x" }] })).code).toBe("NOT_FOUND");
    expect((await failure("file_write", { path: "missing.txt", hash: hashOf("x\n"), content: "x\n" })).code).toBe("NOT_FOUND");
    expect((await failure("file_write", { path: rel, hash: "nothex", content: "y\n" })).code).toBe("INVALID_PARAMS");
    const blocked = await failure("file_write", { path: `${rel}/deeper/x.txt`, content: "x\n" }, { approved: false });
    expect(blocked.code).toBe("NOT_A_FILE");
    expect((await failure("file_write", { path: `${rel}/x.txt`, content: "x\n" })).code).toBe("NOT_A_FILE");
    expect(read(rel)).toBe("x\n");
    mkdirSync(at("adir"), { recursive: true });
    expect((await failure("file_write", { path: "adir", hash: hashOf("x\n"), content: "y\n" })).code).toBe("NOT_A_FILE");
  });

  it("keeps the BOM and CRLF of the file it overwrites; the final newline is as given", async () => {
    const text = "\ufeffa\r\nb\r\n";
    const rel = file(text);
    await d.ok("file_write", { path: rel, hash: hashOf(text), content: "x\ny" });
    expect(read(rel)).toBe("\ufeffx\r\ny");
  });

  it("is NO_CHANGE when the content is what the file already holds", async () => {
    const rel = file("same\n");
    expect((await failure("file_write", { path: rel, hash: hashOf("same\n"), content: "same\n" })).code).toBe("NO_CHANGE");
  });
});

describe("dry runs change nothing", () => {
  it("previews an edit, a creation and a delete with the hash the file would have", async () => {
    const rel = file(HELLO);
    const before = statSync(at(rel));
    const edits = [{ type: "replace", startline: "14C3", content: 'cout<<"Hi"<<endl;' }];
    const preview = await d.ok("file_write", { path: rel, hash: hashOf(HELLO), edits }, { approved: false });
    expect(preview.dry_run).toBe(true);
    expect(preview.diff).toContain('+   cout<<"Hi"<<endl;');
    const del = await d.ok("file_delete", { path: rel, hash: hashOf(HELLO) }, { approved: false });
    expect(del).toMatchObject({ dry_run: true, deleted: false });
    const created = await d.ok("file_write", { path: "dry/new.txt", content: "x\n" }, { approved: false });
    expect(created).toMatchObject({ dry_run: true, created: true, hash: hashOf("x\n") });

    expect(read(rel)).toBe(HELLO);
    expect(statSync(at(rel)).mtimeMs).toBe(before.mtimeMs);
    expect(() => statSync(at("dry"))).toThrow();
    const real = await d.ok("file_write", { path: rel, hash: hashOf(HELLO), edits });
    expect(real.hash).toBe(preview.hash);
  });

  it("still checks everything in a dry run", async () => {
    const rel = file("a\n");
    expect((await failure("file_write", { path: rel, hash: "0123456789abcdef", content: "b\n" }, { approved: false })).code).toBe("HASH_MISMATCH");
    expect((await failure("file_delete", { path: rel, hash: "0123456789abcdef" }, { approved: false })).code).toBe("HASH_MISMATCH");
  });
});

describe("symlinks and modes", () => {
  it("writes through a symlink inside the root and keeps the link", async () => {
    const target = file("t\n");
    symlinkSync(target, at("link.txt"));
    const r = await d.ok("file_write", { path: "link.txt", hash: hashOf("t\n"), content: "T\n" });
    expect(r.path).toBe("link.txt");
    expect(lstatSync(at("link.txt")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(at("link.txt"))).toBe(target);
    expect(read(target)).toBe("T\n");
  });

  it("keeps the file's mode", async () => {
    const rel = file("#!/bin/sh\n");
    chmodSync(at(rel), 0o750);
    await d.ok("file_write", { path: rel, hash: hashOf("#!/bin/sh\n"), content: "#!/bin/sh\necho hi\n" });
    expect(statSync(at(rel)).mode & 0o7777).toBe(0o750);
  });
});

describe("file_delete", () => {
  it("deletes the version named by its hash, and refuses another", async () => {
    const rel = file("bye\n");
    expect((await failure("file_delete", { path: rel, hash: hashOf("other\n") })).code).toBe("HASH_MISMATCH");
    expect((await failure("file_delete", { path: rel })).code).toBe("INVALID_PARAMS");
    const r = await d.ok("file_delete", { path: rel, hash: hashOf("bye\n") });
    expect(r).toMatchObject({ deleted: true, previous_hash: hashOf("bye\n") });
    expect(() => statSync(at(rel))).toThrow();
    expect((await failure("file_delete", { path: rel, hash: hashOf("bye\n") })).code).toBe("NOT_FOUND");
  });

  it("removes a symlink, not its target; refuses folders; deletes a binary file by the hash BINARY_FILE gave", async () => {
    const target = file("keep\n");
    symlinkSync(target, at("dlink.txt"));
    await d.ok("file_delete", { path: "dlink.txt", hash: hashOf("keep\n") });
    expect(() => lstatSync(at("dlink.txt"))).toThrow();
    expect(read(target)).toBe("keep\n");
    mkdirSync(at("folder"), { recursive: true });
    expect((await failure("file_delete", { path: "folder", hash: hashOf("") })).code).toBe("NOT_A_FILE");
    const bin = file(Buffer.from([1, 0, 2]));
    const refused = await failure("file_read", { path: bin });
    await d.ok("file_delete", { path: bin, hash: refused.hash });
    expect(() => statSync(at(bin))).toThrow();
  });
});

describe("what a write's text says (SPEC 5 header, shifts)", () => {
  it("starts with the header line, (was none) on create", async () => {
    const r = await d.ok("file_write", { path: "hdr/new.txt", content: "a\nb\n" });
    expect(r.text.split("\n")[0]).toBe(`file hdr/new.txt · hash ${hashOf("a\nb\n")} (was none) · 2 lines`);
    expect(bodyLines(r.text)).toEqual([`1|${tagOf("a")} a`, `2|${tagOf("b")} b`]);
  });

  it("says how old line numbers moved, so old N:TAG anchors can be used again without a re-read", async () => {
    const text = Array.from({ length: 60 }, (_, i) => (i % 10 === 9 ? "}" : `line ${i + 1}`)).join("\n") + "\n";
    const rel = file(text);
    const close = tagOf("}");
    const first = await d.ok("file_write", {
      path: rel,
      hash: hashOf(text),
      edits: [
        { type: "insert", startline: `5:${tagOf("line 5")}`, content: "new a\nnew b" },
        { type: "delete", startline: `30:${close}` },
      ],
    });
    expect(first.shifts).toEqual([
      { from: 6, to: 29, by: 2 },
      { from: 31, to: 60, by: 1 },
    ]);
    expect(first.text.split("\n")[1]).toBe("moved: old lines 6-29 → 8-31, 31-60 → 32-61");
    // The model held 40:} and 50:} from its first read; the shift gives their new numbers.
    const second = await d.ok("file_write", {
      path: rel,
      hash: first.hash,
      edits: [
        { type: "replace", startline: `${40 + 1}:${close}`, content: "} // forty" },
        { type: "replace", startline: `${50 + 1}:${close}`, content: "} // fifty" },
      ],
    });
    const lines = read(rel).split("\n");
    expect(lines[40]).toBe("} // forty");
    expect(lines[50]).toBe("} // fifty");
    expect(second.shifts).toEqual([]);
  });

  it("gives shifts for a whole-content overwrite too", async () => {
    const rel = file("a\nb\nc\nd\n");
    const r = await d.ok("file_write", { path: rel, hash: hashOf("a\nb\nc\nd\n"), content: "a\nc\nd\n" });
    expect(r.shifts).toEqual([{ from: 3, to: 4, by: -1 }]);
  });
});

describe("diffs git apply accepts", () => {
  it("keeps a CRLF file's \\r in the diff of an edit and of a content write (git apply --check passes)", async () => {
    const text = "\ufeffone\r\ntwo\r\nthree\r\n";
    const rel = file(text);
    const edit = await d.ok(
      "file_write",
      { path: rel, hash: hashOf(text), edits: [{ type: "replace", startline: tagOf("two"), content: "TWO" }] },
      { approved: false },
    );
    const whole = await d.ok("file_write", { path: rel, hash: hashOf(text), content: "one\ntwo\nTHREE\n" }, { approved: false });
    for (const diff of [edit.diff, whole.diff]) {
      expect(diff).toContain("\r\n");
      execFileSync("git", ["apply", "--check", "-"], { cwd: ws.dir, input: diff });
    }
    execFileSync("git", ["apply", "-"], { cwd: ws.dir, input: edit.diff });
    expect(read(rel)).toBe("\ufeffone\r\nTWO\r\nthree\r\n");
  });

  it("gives an edit beside blank lines its three lines of trailing context, the diff HASH_MISMATCH shows of the same change (issue 20)", async () => {
    const text = "a\nb\n\n\n\nc\nd\ne\n";
    const after = "a\n\n\n\n\nc\nd\ne\n";
    const rel = file(text);
    await d.ok("file_read", { path: rel }, { session: "blank" });
    const edit = await d.ok(
      "file_write",
      { path: rel, hash: hashOf(text), edits: [{ type: "replace", startline: `2:${tagOf("b")}`, content: "" }] },
      { approved: false },
    );
    expect(edit.diff).toBe(`--- a/${rel}\n+++ b/${rel}\n@@ -1,5 +1,5 @@\n a\n-b\n+\n \n \n \n`);
    execFileSync("git", ["apply", "--check", "-"], { cwd: ws.dir, input: edit.diff });
    writeFileSync(at(rel), after);
    const stale = await failure("file_write", { path: rel, hash: hashOf(text), content: "x\n" }, { session: "blank" });
    expect(stale.diff).toBe(edit.diff);
    writeFileSync(at(rel), text);
    execFileSync("git", ["apply", "-"], { cwd: ws.dir, input: edit.diff });
    expect(read(rel)).toBe(after);
  });

  it("cuts a diff longer than the text cap and says so", async () => {
    const big = Array.from({ length: 20_000 }, (_, i) => `row ${i}`).join("\n") + "\n";
    const r = await d.ok("file_write", { path: "bigdiff.txt", content: big });
    expect(r.diff_truncated).toBe(true);
    expect(r.diff.length).toBeLessThanOrEqual(100_000);
    const small = await d.ok("file_write", { path: "smalldiff.txt", content: "x\n" });
    expect(small.diff_truncated).toBeUndefined();
  });
});

describe("converting a file that is not UTF-8 text", () => {
  it("allows a content overwrite with the right hash; edits stay refused", async () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a]);
    const rel = file(latin1);
    const refused = await failure("file_read", { path: rel });
    expect(refused.code).toBe("ENCODING");
    expect((await failure("file_write", { path: rel, hash: refused.hash, edits: [{ type: "insert", endline: "0000", content: "x" }] })).code).toBe("ENCODING");
    expect((await failure("file_write", { path: rel, hash: hashOf("other"), content: "café\n" })).code).toBe("HASH_MISMATCH");
    const r = await d.ok("file_write", { path: rel, hash: refused.hash, content: "café\n" });
    expect(readFileSync(at(rel))).toEqual(Buffer.from("café\n"));
    expect(r).toMatchObject({ previous_hash: refused.hash, converted_from: "ENCODING", hash: hashOf("café\n"), diff: "" });
    expect(r.text).toBe(`file ${rel} · hash ${hashOf("café\n")} (was ${refused.hash}, not UTF-8 text) · 1 line\n1|${tagOf("café")} café`);
    const bin = file(Buffer.from([1, 0, 2]));
    const binHash = (await failure("file_read", { path: bin })).hash;
    expect((await d.ok("file_write", { path: bin, hash: binHash, content: "text now\n" })).converted_from).toBe("BINARY_FILE");
  });
});

describe("params and messages", () => {
  it("says both were given for {content, edits: []}, and that an empty batch is empty", async () => {
    const rel = file("x\n");
    const both = await failure("file_write", { path: rel, hash: hashOf("x\n"), content: "y\n", edits: [] });
    expect(both.code).toBe("INVALID_PARAMS");
    expect(both.message).toContain("both were given");
    const empty = await failure("file_write", { path: rel, hash: hashOf("x\n"), edits: [] });
    expect(empty.message).toContain("edits: the batch is empty");
  });

  it("words NO_CHANGE for a content write without talking of edits", async () => {
    const rel = file("same\n");
    const r = await failure("file_write", { path: rel, hash: hashOf("same\n"), content: "same\n" });
    expect(r.message).toMatch(/^The change leaves .* byte-identical/);
    expect(r.message).not.toMatch(/edits/i);
  });
});

describe("read-only files", () => {
  it("refuses to write or delete a mode-0444 file unless force_readonly, and keeps its mode", async () => {
    const rel = file("locked\n");
    chmodSync(at(rel), 0o444);
    const refused = await failure("file_write", { path: rel, hash: hashOf("locked\n"), content: "changed\n" });
    expect(refused.code).toBe("PERMISSION_DENIED");
    expect(refused.message).toContain(`${rel} is read-only (mode 0444)`);
    expect(refused.message).toContain("force_readonly");
    expect((await failure("file_write", { path: rel, hash: hashOf("locked\n"), content: "changed\n" }, { approved: false })).code).toBe("PERMISSION_DENIED");
    expect((await failure("file_delete", { path: rel, hash: hashOf("locked\n") })).code).toBe("PERMISSION_DENIED");
    expect(read(rel)).toBe("locked\n");
    await d.ok("file_write", { path: rel, hash: hashOf("locked\n"), content: "changed\n", force_readonly: true });
    expect(read(rel)).toBe("changed\n");
    expect(statSync(at(rel)).mode & 0o7777).toBe(0o444);
    await d.ok("file_delete", { path: rel, hash: hashOf("changed\n"), force_readonly: true });
    expect(() => statSync(at(rel))).toThrow();
  });
});
