import { execFileSync } from "node:child_process";
import { closeSync, constants, lstatSync, openSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash } from "../../src/core/hash.js";
import { SYNC_READ_MAX_BYTES, newScratch, probe, readCapped, readRegular, readSmallText } from "../../src/vfs/file-probe.js";
import { tmpWorkspace, writeFile } from "../helpers/tmp.js";

const MAX = 4 * 1024 * 1024;

describe("file-probe", () => {
  const ws = tmpWorkspace();
  const root = ws.dir;
  beforeAll(async () => {
    await initHash();
    writeFile(root, "small.txt", "hello\n");
    writeFile(root, "big.bin", Buffer.alloc(SYNC_READ_MAX_BYTES * 3 + 17, 7)); // read in async chunks
    writeFile(root, "huge.bin", Buffer.alloc(MAX + 1, 1));
    writeFile(root, "sub/target.ts", "export {};\n");
    symlinkSync("sub/target.ts", path.join(root, "link.ts"));
    symlinkSync("/proc/self/pagemap", path.join(root, "pagemap"));
    symlinkSync("/dev/zero", path.join(root, "zero"));
    symlinkSync("missing.txt", path.join(root, "dangling"));
    symlinkSync("sub", path.join(root, "folder-link"));
    symlinkSync("loop-b", path.join(root, "loop-a"));
    symlinkSync("loop-a", path.join(root, "loop-b"));
    execFileSync("mkfifo", [path.join(root, "fifo")]);
    writeFile(path.dirname(root), `${path.basename(root)}-outside.txt`, "outside\n");
    symlinkSync(`../${path.basename(root)}-outside.txt`, path.join(root, "sibling"));
  });
  afterAll(() => {
    ws.cleanup();
    execFileSync("rm", ["-f", `${root}-outside.txt`]);
  });

  it("reads and hashes a small file, and a larger one in chunks", async () => {
    expect(await probe(root, "small.txt", MAX)).toMatchObject({ kind: "file", real: "small.txt", size: 6, hash: fileHash(Buffer.from("hello\n")) });
    const big = await probe(root, "big.bin", MAX);
    expect(big).toMatchObject({ kind: "file", size: SYNC_READ_MAX_BYTES * 3 + 17, hash: fileHash(Buffer.alloc(SYNC_READ_MAX_BYTES * 3 + 17, 7)) });
  });

  it("with a scratch buffer, hashes a file and hands back no content; a kept one's bytes stay its own", async () => {
    const kept = await probe(root, "small.txt", MAX);
    writeFile(root, "other.txt", "another file\n");
    const scratch = newScratch();
    const small = await probe(root, "small.txt", MAX, scratch);
    const other = await probe(root, "other.txt", MAX, scratch);
    const big = await probe(root, "big.bin", MAX, scratch);
    expect(small).toEqual({ ...kept, content: undefined });
    expect(small).not.toHaveProperty("content");
    expect(other).toMatchObject({ kind: "file", size: 13, hash: fileHash(Buffer.from("another file\n")) });
    expect(other).not.toHaveProperty("content");
    expect(big).toMatchObject({ hash: fileHash(Buffer.alloc(SYNC_READ_MAX_BYTES * 3 + 17, 7)) });
    expect(big).not.toHaveProperty("content");
    expect(kept.kind === "file" && kept.content?.toString()).toBe("hello\n"); // not overwritten by the reads after it
  });

  it("reads a file longer than its stat said whole, in the scratch buffer or not", async () => {
    const expected = Buffer.alloc(SYNC_READ_MAX_BYTES * 3 + 17, 7);
    for (const scratch of [undefined, newScratch()]) {
      const fd = openSync(path.join(root, "big.bin"), constants.O_RDONLY);
      try {
        expect((await readCapped(fd, 10, MAX, scratch))?.equals(expected), `scratch ${scratch !== undefined}`).toBe(true);
      } finally {
        closeSync(fd);
      }
    }
  });

  it("does not read a file over the limit", async () => {
    expect(await probe(root, "huge.bin", MAX)).toMatchObject({ kind: "file", size: MAX + 1, hash: null });
  });

  it("reads a link inside the root as its target, under the target's path", async () => {
    expect(await probe(root, "link.ts", MAX)).toMatchObject({ kind: "file", real: "sub/target.ts", hash: fileHash(Buffer.from("export {};\n")) });
  });

  it("never opens what is not a regular file inside the root", async () => {
    for (const rel of ["pagemap", "zero", "dangling", "folder-link", "loop-a", "fifo", "sibling"]) {
      expect(await probe(root, rel, MAX), rel).toEqual({ kind: "other" });
    }
    expect(await probe(root, "sub", MAX)).toEqual({ kind: "folder" });
    expect(await probe(root, "nothing-here", MAX)).toEqual({ kind: "gone" });
  });

  it("refuses a descriptor that is not the file the lstat saw", async () => {
    // What a swap between the lstat and the open looks like: the stats of one file, the path of another.
    const stale = lstatSync(path.join(root, "small.txt"));
    expect(await readRegular(path.join(root, "sub/target.ts"), "sub/target.ts", stale, MAX)).toEqual({ kind: "unstable" });
    expect(await readRegular(path.join(root, "link.ts"), "link.ts", lstatSync(path.join(root, "sub/target.ts")), MAX)).toEqual({ kind: "unstable" });
  });

  it("caps a read by the bytes read, not by what fstat says", async () => {
    // /dev/zero and /proc/self/pagemap both say size 0 and never end (pagemap: 8 bytes per page of address space, and
    // it refuses reads that are not a multiple of 8: EINVAL, which the probe takes as unreadable).
    for (const source of ["/dev/zero", "/proc/self/pagemap"]) {
      const fd = openSync(source, constants.O_RDONLY);
      try {
        expect(await readCapped(fd, 0, 3 * 1024 * 1024).catch(() => null), source).toBeNull();
      } finally {
        closeSync(fd);
      }
    }
  });

  it("reads a .gitignore only as a small regular file, never through a link", async () => {
    writeFile(root, "ignore-me", "*.log\n");
    symlinkSync("ignore-me", path.join(root, "ignore-link"));
    expect(await readSmallText(path.join(root, "ignore-me"), 100)).toBe("*.log\n");
    expect(await readSmallText(path.join(root, "ignore-link"), 100)).toBe("");
    expect(await readSmallText(path.join(root, "pagemap"), 100)).toBe("");
    expect(await readSmallText(path.join(root, "fifo"), 100)).toBe("");
    writeFileSync(path.join(root, "long-ignore"), "x".repeat(101));
    expect(await readSmallText(path.join(root, "long-ignore"), 100)).toBe("");
  });
});
