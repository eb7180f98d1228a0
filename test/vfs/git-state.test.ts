import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { initHash } from "../../src/core/hash.js";
import { indexFingerprint } from "../../src/vfs/git-state.js";
import { git, tmpWorkspace, writeFile } from "../helpers/tmp.js";

describe("indexFingerprint", () => {
  const cleanups: (() => void)[] = [];
  beforeAll(() => initHash());
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  function repo() {
    const ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n", "b.txt": "b\n" } });
    cleanups.push(ws.cleanup);
    git(ws.dir, "add", "-A");
    return { dir: ws.dir, index: path.join(ws.dir, ".git", "index") };
  }

  it("moves when an entry does, not when the index is rewritten as it was", async () => {
    const { dir, index } = repo();
    const first = await indexFingerprint(index);
    writeFileSync(index, readFileSync(index)); // rewritten byte for byte, as `git status` may
    expect(await indexFingerprint(index)).toBe(first);
    writeFile(dir, "a.txt", "changed\n");
    git(dir, "add", "a.txt");
    expect(await indexFingerprint(index)).not.toBe(first);
    expect(await indexFingerprint(path.join(dir, ".git", "no-index"))).toBeNull();
  });

  it("reads the header and the trailing checksum, not the entries between", async () => {
    const { index } = repo();
    const first = await indexFingerprint(index);
    const bytes = readFileSync(index);
    bytes[bytes.length >> 1] ^= 0xff; // an entry's byte changed, the checksum kept: git would call the file corrupt
    writeFileSync(index, bytes);
    expect(await indexFingerprint(index)).toBe(first);
  });

  it("hashes the whole index when it has no checksum (index.skipHash)", async () => {
    const { index } = repo();
    const bytes = readFileSync(index);
    bytes.fill(0, bytes.length - 20);
    writeFileSync(index, bytes);
    const first = await indexFingerprint(index);
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(index, bytes);
    expect(await indexFingerprint(index)).not.toBe(first);
  });
});
