import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync, symlinkSync, utimesSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type IndexEntry, indexContentKey, parseIndex } from "../../src/git/index-file.js";
import { ConfigFiles, attributesAlong, storedAsIs as storedAsIsIn, writeLooseBlob } from "../../src/git/loose-objects.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { git, writeFile } from "./fixture.js";

/** What `git ls-files -s` says the index holds: the oracle of the parse. */
function lsFiles(dir: string): Map<string, { mode: string; sha: string; stage: number }[]> {
  const out = new Map<string, { mode: string; sha: string; stage: number }[]>();
  for (const rec of git(dir, "ls-files", "-s", "-z").split("\0").filter(Boolean)) {
    const m = /^(\d{6}) ([0-9a-f]{40}) (\d)\t(.*)$/s.exec(rec)!;
    out.set(m[4], [...(out.get(m[4]) ?? []), { mode: m[1], sha: m[2], stage: Number(m[3]) }]);
  }
  return out;
}

const index = (dir: string) => parseIndex(readFileSync(path.join(dir, ".git", "index")));

describe("the index file, read as git reads it", () => {
  const ws = tmpWorkspace({ git: true });
  afterAll(() => ws.cleanup());
  const dir = ws.dir;

  // Entries of every kind: nested, non-ASCII and long paths, an executable, a link, a conflict's three stages.
  beforeAll(() => {
    const names = ["a.txt", "deep/er/still/b.txt", "deep/er/c d.txt", "ünï/ç.txt", `${Array(30).fill("a-longish-folder").join("/")}/x.txt`, "exec.sh"];
    for (const [k, n] of names.entries()) writeFile(dir, n, `content ${k}\n`);
    execFileSync("chmod", ["+x", path.join(dir, "exec.sh")]);
    symlinkSync("a.txt", path.join(dir, "link"));
    git(dir, "add", "-A");
    git(dir, "commit", "-qm", "base");
    // A conflict: stages 1, 2 and 3 of m.txt.
    writeFile(dir, "m.txt", "base\n");
    git(dir, "add", "m.txt");
    git(dir, "commit", "-qm", "m");
    git(dir, "checkout", "-qb", "side");
    writeFile(dir, "m.txt", "side\n");
    git(dir, "commit", "-qam", "side");
    git(dir, "checkout", "-q", "main");
    writeFile(dir, "m.txt", "main\n");
    git(dir, "commit", "-qam", "main");
    expect(spawnSync("git", ["merge", "-q", "side"], { cwd: dir, stdio: "ignore" }).status).toBe(1);
  });

  it.each([2, 3, 4])("gives the entries ls-files gives, in index version %i (with intent-to-add)", (version) => {
    writeFile(dir, "new.txt", "intent\n");
    git(dir, "add", "-N", "new.txt"); // an extended flag: version 3 at least
    git(dir, "update-index", "--index-version", String(version));
    const expected = lsFiles(dir);
    expect(expected.get("m.txt")?.map((e) => e.stage)).toEqual([1, 2, 3]);
    expect(index(dir)).toEqual(expected);
  });

  it("leaves a split index to git", () => {
    git(dir, "update-index", "--split-index");
    expect(index(dir)).toBeNull();
    git(dir, "update-index", "--no-split-index");
    expect(index(dir)).toEqual(lsFiles(dir));
  });

  it("refuses what is not an index", () => {
    expect(parseIndex(Buffer.from("DIRC not really an index at all, no"))).toBeNull();
    expect(parseIndex(Buffer.alloc(0))).toBeNull();
  });
});

describe("the index's content key (what a kept git_status depends on)", () => {
  const ws = tmpWorkspace({ git: true });
  afterAll(() => ws.cleanup());
  const dir = ws.dir;
  const key = () => indexContentKey(readFileSync(path.join(dir, ".git", "index")));
  beforeAll(() => {
    for (let k = 0; k < 5; k++) writeFile(dir, `f${k}.txt`, `content ${k}\n`);
    git(dir, "add", "-A");
    git(dir, "commit", "-qm", "base");
  });

  it.each([2, 3, 4])("stays when only stat data is refreshed, and moves with a blob, a mode or a flag (version %i)", (version) => {
    git(dir, "update-index", "--index-version", String(version));
    const before = key();
    expect(before).not.toBeNull();
    const later = new Date(Date.now() + 3_600_000 * version);
    for (let k = 0; k < 5; k++) utimesSync(path.join(dir, `f${k}.txt`), later, later);
    git(dir, "update-index", "-q", "--refresh");
    expect(key()).toBe(before);

    git(dir, "update-index", "--assume-unchanged", "f1.txt");
    expect(key()).not.toBe(before);
    git(dir, "update-index", "--no-assume-unchanged", "f1.txt");
    expect(key()).toBe(before);
    git(dir, "update-index", "--chmod=+x", "f2.txt");
    expect(key()).not.toBe(before);
    git(dir, "update-index", "--chmod=-x", "f2.txt");
    expect(key()).toBe(before);
    writeFile(dir, "f3.txt", "other\n");
    git(dir, "add", "f3.txt");
    expect(key()).not.toBe(before);
    git(dir, "reset", "-q");
    git(dir, "checkout", "-q", "--", "f3.txt");
  });

  it("is null for a split index, which keeps its entries in another file", () => {
    git(dir, "update-index", "--split-index");
    expect(key()).toBeNull();
    git(dir, "update-index", "--no-split-index");
    expect(key()).not.toBeNull();
  });
});

describe("blobs written by the daemon", () => {
  const ws = tmpWorkspace({ git: true });
  afterAll(() => ws.cleanup());
  const dir = ws.dir;
  const objects = path.join(dir, ".git", "objects");
  const location = { gitDir: path.join(dir, ".git"), commonDir: path.join(dir, ".git"), prefix: "", insideWorkTree: true };

  it("have the id git gives them and read back as the same bytes", async () => {
    const samples = [
      Buffer.alloc(0),
      Buffer.from("one\ntwo\n"),
      Buffer.from("crlf\r\nand no end"),
      Buffer.from("x".repeat(300_000)),
      Buffer.from([0, 1, 2, 255]),
    ];
    for (const bytes of samples) {
      const sha = await writeLooseBlob(objects, bytes);
      expect(sha).toBe(execFileSync("git", ["hash-object", "--stdin", "--no-filters"], { cwd: dir, input: bytes }).toString().trim());
      expect(execFileSync("git", ["cat-file", "blob", sha], { cwd: dir }).equals(bytes)).toBe(true);
      expect(await writeLooseBlob(objects, bytes)).toBe(sha); // already there
    }
    expect(git(dir, "fsck", "--no-dangling", "--unreachable").trim()).toMatch(/^(unreachable blob [0-9a-f]{40}\n?)*$/);
  });

  it("are left to git wherever an attribute or a line-ending rule could change them", async () => {
    const bytes = Buffer.from("plain\n");
    const none = new Map();
    // One ConfigFiles throughout, as a repository keeps one: a configuration changed between the calls is read again.
    const configs = new ConfigFiles();
    const storedAsIs = (loc: typeof location, top: string, gitPath: string, b: Buffer, index: ReadonlyMap<string, IndexEntry[]>) =>
      storedAsIsIn(loc, configs, top, gitPath, b, index);
    expect(await storedAsIs(location, dir, "sub/dir/f.txt", bytes, none)).toBe(true);
    expect(await storedAsIs(location, dir, "sub/dir/f.txt", Buffer.from("cr\r\n"), none)).toBe(false);
    // One in the index only (the worktree has none): git reads that one.
    expect(await storedAsIs(location, dir, "sub/dir/f.txt", bytes, new Map([["sub/.gitattributes", []]]))).toBe(false);
    mkdirSync(path.join(dir, "sub", "dir"), { recursive: true });
    writeFile(dir, "sub/.gitattributes", "*.txt ident\n");
    expect(await storedAsIs(location, dir, "sub/dir/f.txt", bytes, none)).toBe(false);
    expect(await storedAsIs(location, dir, "other/f.txt", bytes, none)).toBe(true);
    git(dir, "config", "core.attributesFile", path.join(dir, "nowhere"));
    expect(await storedAsIs(location, dir, "other/f.txt", bytes, none)).toBe(false);
    git(dir, "config", "--unset", "core.attributesFile");
    expect(await storedAsIs(location, dir, "other/f.txt", bytes, none)).toBe(true);
    // Written in place (the same file, longer), not renamed over as git does.
    appendFileSync(path.join(dir, ".git", "config"), "[core]\n\tattributesFile = nowhere\n");
    expect(await storedAsIs(location, dir, "other/f.txt", bytes, none)).toBe(false);
    git(dir, "config", "--unset", "core.attributesFile");
    writeFile(dir, ".git/info/attributes", "* filter=x\n");
    expect(await storedAsIs(location, dir, "other/f.txt", bytes, none)).toBe(false);
    expect(attributesAlong("a/b/c.txt")).toEqual([".gitattributes", "a/.gitattributes", "a/b/.gitattributes"]);
  });
});
