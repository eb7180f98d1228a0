import { readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { trackedSymlinks } from "../../src/vfs/git-index.js";
import { git, tmpWorkspace, writeFile } from "../helpers/tmp.js";

/** The tracked symlinks by git's own word (`ls-files --stage`), to check the index reader against. */
function gitsLinks(dir: string): string[] {
  return git(dir, "ls-files", "-z", "--stage")
    .split("\0")
    .filter((e) => e.startsWith("120000 "))
    .map((e) => e.slice(e.indexOf("\t") + 1))
    .sort();
}

describe("trackedSymlinks", () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  /** A repository with links among files, names long and short, in nested folders, and one path of 1,000 bytes. */
  function repo(init: string[] = []) {
    const ws = tmpWorkspace();
    cleanups.push(ws.cleanup);
    git(ws.dir, "init", "-q", ...init);
    for (let i = 0; i < 40; i++) writeFile(ws.dir, `d${i % 4}/${"n".repeat(i)}f${i}.txt`, `${i}\n`);
    symlinkSync("/proc/self/pagemap", path.join(ws.dir, "pagemap"));
    symlinkSync("../d0/f0.txt", path.join(ws.dir, "d1/link"));
    symlinkSync("x", path.join(ws.dir, "d3/zz-last-link"));
    const long = `${"a".repeat(250)}/${"b".repeat(250)}/${"c".repeat(250)}/${"d".repeat(250)}/link`;
    writeFile(ws.dir, `${long}.txt`, "x\n");
    symlinkSync("/dev/zero", path.join(ws.dir, long));
    git(ws.dir, "add", "-A");
    return ws.dir;
  }
  const index = (dir: string) => readFileSync(path.join(dir, ".git", "index"));

  it.each([["2"], ["3"], ["4"]])("reads index version %s", (version) => {
    const dir = repo();
    if (version !== "2") {
      writeFile(dir, "intent.txt", "i\n");
      git(dir, "add", "-N", "intent.txt"); // intent-to-add: an extended flag, which version 2 cannot hold
    }
    git(dir, "update-index", "--index-version", version);
    expect(index(dir).readUInt32BE(4)).toBe(Number(version));
    expect(trackedSymlinks(index(dir))?.sort()).toEqual(gitsLinks(dir));
    expect(gitsLinks(dir)).toHaveLength(4);
  });

  it("reads a SHA-256 repository's index", () => {
    const dir = repo(["--object-format=sha256"]);
    expect(trackedSymlinks(index(dir))?.sort()).toEqual(gitsLinks(dir));
  });

  it("gives up on a split index, and on bytes that are no index", () => {
    const dir = repo();
    git(dir, "update-index", "--split-index");
    expect(trackedSymlinks(index(dir))).toBeNull();
    expect(trackedSymlinks(Buffer.from("DIRC\0\0\0\x02\0\0\0\x05garbage"))).toBeNull();
    expect(trackedSymlinks(Buffer.from("not an index at all"))).toBeNull();
    const cut = index(repo());
    expect(trackedSymlinks(cut.subarray(0, cut.length - 100))).toBeNull();
  });
});
