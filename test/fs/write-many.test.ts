/** VersionedFiles.writeMany: several files under their hashes, all or none, on real files. */
import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash } from "../../src/core/hash.js";
import { toolErrorOf } from "../../src/errors.js";
import type { MultiWriteContext } from "../../src/fs/versioned-write.js";
import type { TextFile } from "../../src/fs/read-text.js";
import { EventBus } from "../../src/platform/bus.js";
import { Supervisor } from "../../src/platform/supervisor.js";
import { Workspace } from "../../src/workspace.js";
import { tmpWorkspace } from "../helpers/tmp.js";

beforeAll(initHash);

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/**
 * A folder nobody can create a file in: mode 0555 for an ordinary user; root ignores modes, so as root the folder is
 * made immutable (chattr +i). Returns what undoes it; undefined where neither works (a file system without attributes).
 */
function lockFolder(dir: string): (() => void) | undefined {
  if (process.getuid?.() !== 0) {
    chmodSync(dir, 0o555);
    return () => chmodSync(dir, 0o755);
  }
  try {
    execFileSync("chattr", ["+i", dir], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  let locked = true;
  return () => {
    if (locked) execFileSync("chattr", ["-i", dir]);
    locked = false;
  };
}

/** A workspace without its watcher (writeMany needs none) and a call's context as the dispatcher makes one. */
function setup(files: Record<string, string>) {
  const tmp = tmpWorkspace({ files });
  cleanups.push(tmp.cleanup);
  const ws = new Workspace({ root: tmp.dir }, new Supervisor(), new EventBus());
  const ctx = (dryRun = false): MultiWriteContext => ({
    sessionId: "s1",
    toolId: "lsp_rename",
    dryRun,
    signal: new AbortController().signal,
    commit: (step) => step(),
    lockFile: (real, work) => ws.lock.file(real, work),
    exclusive: (work) => ws.lock.exclusive(work),
  });
  const read = (rel: string) => readFileSync(path.join(tmp.dir, rel), "utf8");
  const hash = (rel: string) => fileHash(readFileSync(path.join(tmp.dir, rel)));
  const req = async (rel: string, text: string, expected = hash(rel)) => ({
    target: await ws.paths.resolve(rel),
    expected,
    needsExisting: true,
    produce: (_current: TextFile | undefined) => ({ bytes: Buffer.from(text) }),
  });
  return { dir: tmp.dir, ws, ctx, read, hash, req };
}

const leftovers = (dir: string) =>
  readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".tmp"));

describe("writeMany", () => {
  it("writes every file under its hash, and records that the session saw the new versions", async () => {
    const s = setup({ "a.ts": "a\n", "sub/b.ts": "b\n" });
    const out = await s.ws.files.writeMany(s.ctx(), [await s.req("a.ts", "A\n"), await s.req("sub/b.ts", "B\n")]);
    expect([s.read("a.ts"), s.read("sub/b.ts")]).toEqual(["A\n", "B\n"]);
    expect(out.map((o) => o.hash)).toEqual([fileHash(Buffer.from("A\n")), fileHash(Buffer.from("B\n"))]);
    expect(s.ws.views.seen("s1", "sub/b.ts")).toBe(fileHash(Buffer.from("B\n")));
    expect(leftovers(s.dir)).toEqual([]);
  });

  it("writes nothing when any file's hash is not the current one", async () => {
    const s = setup({ "a.ts": "a\n", "b.ts": "b\n" });
    const reqs = [await s.req("a.ts", "A\n"), await s.req("b.ts", "B\n", fileHash(Buffer.from("an older b\n")))];
    await expect(s.ws.files.writeMany(s.ctx(), reqs)).rejects.toMatchObject({ code: "HASH_MISMATCH", details: { current_hash: s.hash("b.ts") } });
    expect([s.read("a.ts"), s.read("b.ts")]).toEqual(["a\n", "b\n"]);
  });

  it("in a dry run checks and builds every version, writes none", async () => {
    const s = setup({ "a.ts": "a\n", "b.ts": "b\n" });
    const out = await s.ws.files.writeMany(s.ctx(true), [await s.req("a.ts", "A\n"), await s.req("b.ts", "B\n")]);
    expect(out.map((o) => o.hash)).toEqual([fileHash(Buffer.from("A\n")), fileHash(Buffer.from("B\n"))]);
    expect([s.read("a.ts"), s.read("b.ts")]).toEqual(["a\n", "b\n"]);
  });

  it("writes none when one file cannot be staged (its folder takes no new file), and leaves no temp file", async ({ skip }) => {
    const s = setup({ "a.ts": "a\n", "locked/b.ts": "b\n" });
    const unlock = lockFolder(path.join(s.dir, "locked"));
    if (!unlock) return skip("no way to lock a folder here");
    cleanups.unshift(unlock); // before the workspace's own cleanup removes the folder
    const failed = await s.ws.files.writeMany(s.ctx(), [await s.req("a.ts", "A\n"), await s.req("locked/b.ts", "B\n")]).catch((e: unknown) => e);
    expect(toolErrorOf(failed)?.code).toBe("PERMISSION_DENIED");
    expect([s.read("a.ts"), s.read("locked/b.ts")]).toEqual(["a\n", "b\n"]);
    unlock();
    expect(leftovers(s.dir)).toEqual([]);
  });

  it("leaves a file that would not change alone, and is NO_CHANGE when none would", async () => {
    const s = setup({ "a.ts": "a\n", "b.ts": "b\n" });
    const inode = statSync(path.join(s.dir, "b.ts")).ino;
    await s.ws.files.writeMany(s.ctx(), [await s.req("a.ts", "A\n"), await s.req("b.ts", "b\n")]);
    expect(s.read("a.ts")).toBe("A\n");
    expect(statSync(path.join(s.dir, "b.ts")).ino).toBe(inode); // not rewritten
    await expect(s.ws.files.writeMany(s.ctx(), [await s.req("a.ts", "A\n")])).rejects.toMatchObject({ code: "NO_CHANGE" });
  });

  it("refuses the same file twice in one batch", async () => {
    const s = setup({ "a.ts": "a\n" });
    const twice = [await s.req("a.ts", "A\n"), await s.req("a.ts", "B\n")];
    expect(() => s.ws.files.writeMany(s.ctx(), twice)).toThrow(/the same file twice/);
  });
});
