import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileHash, initHash, tagOf } from "../../src/core/hash.js";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

await initHash();

const hashOf = (s: string | Buffer) => fileHash(typeof s === "string" ? Buffer.from(s) : s);
const ws = tmpWorkspace({ git: true, files: { ".gitignore": "ignored/\n*.log\n" } });
let d: DaemonClient;
daemonForSuite(ws, (c) => (d = c));
const at = (rel: string) => path.join(ws.dir, rel);
const read = (rel: string) => readFileSync(at(rel), "utf8");

async function failure(tool: string, params: Record<string, unknown>, opts: { session?: string; approved?: boolean } = {}) {
  const r = await d.call(tool, params, opts);
  expect(r.success, JSON.stringify(r.result)).toBe(false);
  return r.result;
}

/** The fs.changed entry for `rel` of `kind`, once the watcher reports it. */
async function change(rel: string, kind: string): Promise<any> {
  const line = await d
    .waitFor((l) => l.event === "fs.changed" && l.data.changes.some((c: any) => c.path === rel && c.kind === kind), 15_000)
    .catch(() => {
      const seen = d.events.filter((x) => x.event === "fs.changed").flatMap((x) => x.data.changes.map((c: any) => `${c.kind}:${c.path}`));
      throw new Error(`no ${kind} of ${rel}; changes so far: ${seen.join(", ")}`);
    });
  return line.data.changes.find((c: any) => c.path === rel && c.kind === kind);
}

describe("file_move", () => {
  it("moves a file by its hash, attributes both sides to the session, and carries views: the reader is not stale and its hash still works", async () => {
    writeFileSync(at("a.txt"), "one\ntwo\n");
    await change("a.txt", "created"); // known to the watcher, so its move is a delete and a create
    const seen = await d.ok("file_read", { path: "a.txt" }, { session: "reader" });
    const r = await d.ok("file_move", { from: "a.txt", to: "moved/deep/b.txt", hash: seen.hash }, { session: "mover" });
    expect(r).toMatchObject({ from: "a.txt", to: "moved/deep/b.txt", kind: "file", hash: seen.hash, moved: true });
    expect(r.text).toContain(`edit it at moved/deep/b.txt with hash ${seen.hash}`);
    expect(existsSync(at("a.txt"))).toBe(false);
    expect(read("moved/deep/b.txt")).toBe("one\ntwo\n");
    const created = await change("moved/deep/b.txt", "created");
    expect(created).toMatchObject({ origin: "tool", by: "mover", tool: "file_move", hash: seen.hash });
    expect(created.stale_sessions).not.toContain("reader");
    const deleted = await change("a.txt", "deleted");
    expect(deleted).toMatchObject({ origin: "tool", by: "mover", tool: "file_move" });
    // The reader edits at the new path with the hash and tags it read at the old one.
    await d.ok(
      "file_write",
      { path: "moved/deep/b.txt", hash: seen.hash, edits: [{ type: "replace", startline: tagOf("two"), content: "TWO" }] },
      { session: "reader" },
    );
    expect(read("moved/deep/b.txt")).toBe("one\nTWO\n");
  });

  it("an outside append to the moved file made on its answer is external, not the move's", async () => {
    writeFileSync(at("race.txt"), "race\n");
    await change("race.txt", "created");
    const appended = "race\n// appended by an editor\n";
    const r = await d.ok("file_move", { from: "race.txt", to: "raced.txt", hash: hashOf("race\n") }, { session: "mover" }).then((answer) => {
      writeFileSync(at("raced.txt"), appended); // at once, within the watcher's batch and the old window's grace
      return answer;
    });
    expect(r).toMatchObject({ moved: true, hash: hashOf("race\n") });
    const isAppended = (c: any) => c.path === "raced.txt" && c.hash === hashOf(appended);
    const line = await d.waitFor((l) => l.event === "fs.changed" && l.data.changes.some(isAppended), 15_000);
    expect(line.data.changes.find(isAppended)).toMatchObject({ origin: "external", by: null, tool: null });
    // The move's own side of it is still the move's.
    expect(await change("race.txt", "deleted")).toMatchObject({ origin: "tool", by: "mover", tool: "file_move" });
  });

  it("refuses a stale hash, a missing hash, an existing destination and a folder into itself, moving nothing", async () => {
    writeFileSync(at("keep.txt"), "keep\n");
    writeFileSync(at("there.txt"), "there\n");
    mkdirSync(at("adir"), { recursive: true });
    symlinkSync("nowhere.txt", at("dangling.txt"));
    expect((await failure("file_move", { from: "keep.txt", to: "k2.txt", hash: hashOf("other\n") })).code).toBe("HASH_MISMATCH");
    expect((await failure("file_move", { from: "keep.txt", to: "k2.txt" })).code).toBe("INVALID_PARAMS");
    for (const to of ["there.txt", "adir", "dangling.txt"]) {
      const r = await failure("file_move", { from: "keep.txt", to, hash: hashOf("keep\n") });
      expect(r.code, to).toBe("ALREADY_EXISTS");
      expect(r.message).toContain("never overwrites");
    }
    expect((await failure("file_move", { from: "keep.txt", to: "keep.txt", hash: hashOf("keep\n") })).code).toBe("INVALID_PARAMS");
    expect((await failure("file_move", { from: "adir", to: "adir/inner" })).code).toBe("INVALID_PARAMS");
    expect((await failure("file_move", { from: "nope.txt", to: "x.txt", hash: hashOf("") })).code).toBe("NOT_FOUND");
    expect((await failure("file_move", { from: "keep.txt", to: "../outside.txt", hash: hashOf("keep\n") })).code).toBe("PATH_OUTSIDE_ROOT");
    expect((await failure("file_move", { from: "keep.txt", to: "sub/.git/config", hash: hashOf("keep\n") })).code).toBe("PATH_FORBIDDEN");
    expect((await failure("file_move", { from: "keep.txt", to: "there.txt/x.txt", hash: hashOf("keep\n") })).code).toBe("NOT_A_FILE");
    expect(read("keep.txt")).toBe("keep\n");
    expect(read("there.txt")).toBe("there\n");
    expect(existsSync(at("k2.txt"))).toBe(false);
  });

  it("previews a move in a dry run without moving, bound by preview_id", async () => {
    writeFileSync(at("dry.txt"), "dry\n");
    const preview = await d.ok("file_move", { from: "dry.txt", to: "dry2.txt", hash: hashOf("dry\n") }, { approved: false });
    expect(preview).toMatchObject({ dry_run: true, moved: false, kind: "file" });
    expect(preview.text).toMatch(/^Would move dry\.txt to dry2\.txt/);
    expect(typeof preview.preview_id).toBe("string");
    expect(existsSync(at("dry.txt"))).toBe(true);
    expect(existsSync(at("dry2.txt"))).toBe(false);
    await d.ok("file_move", { from: "dry.txt", to: "dry2.txt", hash: hashOf("dry\n"), preview_id: preview.preview_id });
    expect(read("dry2.txt")).toBe("dry\n");
  });

  it("moves a folder without a hash, with every file in it, attributed, and refuses a hash for it", async () => {
    mkdirSync(at("pkg/inner"), { recursive: true });
    writeFileSync(at("pkg/x.ts"), "x\n");
    writeFileSync(at("pkg/inner/y.ts"), "y\n");
    await change("pkg/inner/y.ts", "created");
    await change("pkg/x.ts", "created");
    await d.ok("file_read", { path: "pkg/inner/y.ts" }, { session: "reader" });
    expect((await failure("file_move", { from: "pkg", to: "lib", hash: hashOf("x\n") })).code).toBe("INVALID_PARAMS");
    const r = await d.ok("file_move", { from: "pkg", to: "lib" }, { session: "mover" });
    expect(r).toMatchObject({ kind: "folder", files: 2, hash: null });
    expect(read("lib/inner/y.ts")).toBe("y\n");
    expect(existsSync(at("pkg"))).toBe(false);
    const created = await change("lib/inner/y.ts", "created");
    expect(created).toMatchObject({ origin: "tool", by: "mover", tool: "file_move" });
    expect(created.stale_sessions).not.toContain("reader");
    expect(await change("pkg/x.ts", "deleted")).toMatchObject({ origin: "tool", by: "mover" });
  });

  it("moves a symlink as the link itself", async () => {
    writeFileSync(at("target.txt"), "t\n");
    symlinkSync("target.txt", at("ln.txt"));
    await d.ok("file_move", { from: "ln.txt", to: "ln2.txt", hash: hashOf("t\n") });
    expect(lstatSync(at("ln2.txt")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(at("ln2.txt"))).toBe("target.txt");
    expect(read("target.txt")).toBe("t\n");
  });

  it("moves a symlink to a folder without a hash", async () => {
    mkdirSync(at("realdir"), { recursive: true });
    symlinkSync("realdir", at("dirlink"));
    expect((await failure("file_move", { from: "dirlink", to: "dirlink2", hash: hashOf("") })).code).toBe("INVALID_PARAMS");
    expect(await d.ok("file_move", { from: "dirlink", to: "dirlink2" })).toMatchObject({ kind: "symlink", hash: null });
    expect(readlinkSync(at("dirlink2"))).toBe("realdir");
  });

  it("moves a read-only file (a rename changes no content) and keeps its mode", async () => {
    writeFileSync(at("ro.txt"), "ro\n");
    chmodSync(at("ro.txt"), 0o444);
    await d.ok("file_move", { from: "ro.txt", to: "ro2.txt", hash: hashOf("ro\n") });
    expect(lstatSync(at("ro2.txt")).mode & 0o777).toBe(0o444);
  });
});

describe("list_dir", () => {
  it("lists a compact tree with sizes and line counts, leaving ignored paths and .git out", async () => {
    mkdirSync(at("tree/src/deep/deeper"), { recursive: true });
    mkdirSync(at("tree/ignored"), { recursive: true });
    writeFileSync(at("tree/README.md"), "# t\n\nhello\n");
    writeFileSync(at("tree/src/a.ts"), "a\nb");
    writeFileSync(at("tree/src/deep/b.ts"), "b\n");
    writeFileSync(at("tree/src/deep/deeper/c.ts"), "c\n");
    writeFileSync(at("tree/bin.dat"), Buffer.from([0, 1, 2]));
    writeFileSync(at("tree/ignored/x.txt"), "x\n");
    writeFileSync(at("tree/debug.log"), "log\n");
    await change("tree/src/deep/deeper/c.ts", "created");
    await change("tree/bin.dat", "created");
    const r = await d.ok("list_dir", { path: "tree" });
    expect(r.text.split("\n")).toEqual([
      "dir tree · 5 files (ignored paths left out) · depth 2",
      "src/ (3 files)",
      "  deep/ (2 files, not expanded)",
      "  a.ts · 3 B · 2 lines",
      "README.md · 11 B · 3 lines",
      "bin.dat · 3 B · binary",
    ]);
    expect(r.entries).toContainEqual({ path: "src/a.ts", kind: "file", size: 3, lines: 2 });
    expect(r.total_files).toBe(5);
    const deep = await d.ok("list_dir", { path: "tree/src", depth: 3 });
    expect(deep.text).toContain("    c.ts · 2 B · 1 line");
    const root = await d.ok("list_dir", {});
    expect(root.text).not.toMatch(/^\.git[/ ]/m);
    expect(root.text).toContain("\ntree/ (5 files)\n");
  });

  it("caps a big listing with a note, and refuses a file or a path outside", async () => {
    mkdirSync(at("many"), { recursive: true });
    for (let i = 0; i < 450; i++) writeFileSync(at(`many/f${String(i).padStart(3, "0")}.txt`), `${i}\n`);
    await change("many/f449.txt", "created");
    const r = await d.ok("list_dir", { path: "many" });
    expect(r.truncated).toBe(true);
    expect(r.entries).toHaveLength(400);
    expect(r.text).toContain("… 50 more entries not shown");
    writeFileSync(at("plain.txt"), "p\n");
    expect((await failure("list_dir", { path: "plain.txt" })).code).toBe("NOT_A_FILE");
    expect((await failure("list_dir", { path: "../" })).code).toBe("PATH_OUTSIDE_ROOT");
    expect((await failure("list_dir", { path: ".git" })).code).toBe("PATH_FORBIDDEN");
    expect((await failure("list_dir", { path: "nowhere" })).code).toBe("NOT_FOUND");
  });
});
