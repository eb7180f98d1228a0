import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { withEntriesReplaced } from "../../src/git/index-file.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { git, writeFile } from "./fixture.js";

/**
 * The index the daemon writes itself (index-write.ts) against the one `git update-index --index-info` writes for the
 * same entries, in two copies of one repository: the same bytes where git keeps every extension, and the same
 * entries, status, tree and commit where the daemon drops one (the untracked cache).
 */
describe("entries replaced in the index file as git update-index replaces them", () => {
  const made: string[] = [];
  afterEach(() => {
    for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A repository with nested folders, committed (a valid cache tree), every file's stat a minute old (none racy). */
  function repo(): string {
    const ws = tmpWorkspace({ git: true });
    made.push(ws.dir);
    for (const rel of ["top.txt", "a/b/c.txt", "a/b/d.txt", "a/e.txt", "x/y.txt"]) writeFile(ws.dir, rel, `${rel}\n`);
    git(ws.dir, "add", "-A");
    git(ws.dir, "commit", "-qm", "base");
    return ws.dir;
  }

  function settle(dir: string): void {
    const old = Math.floor(Date.now() / 1000) - 60;
    for (const rel of git(dir, "ls-files", "-z").split("\0").filter(Boolean)) utimesSync(path.join(dir, rel), old, old);
    git(dir, "update-index", "-q", "--refresh");
  }

  function copyOf(dir: string): string {
    const copy = `${dir}-git`;
    execFileSync("cp", ["-a", dir, copy]);
    made.push(copy);
    return copy;
  }

  const blob = (dir: string, text: string) => execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: dir, input: text, encoding: "utf8" }).trim();

  /** Replaces the entries in `dir` as the daemon does, and in `copy` by git. */
  function bothWrite(dir: string, copy: string, entries: Record<string, string>): void {
    const writes = new Map(Object.entries(entries).map(([p, text]) => [p, { mode: "100644", sha: blob(dir, text) }]));
    blob(copy, "");
    for (const text of Object.values(entries)) blob(copy, text);
    const file = path.join(dir, ".git", "index");
    const next = withEntriesReplaced(readFileSync(file), Math.floor(statSync(file).mtimeMs / 1000), writes);
    expect(next).not.toBeNull();
    writeFileSync(file, next!);
    const info = [...writes].map(([p, w]) => `${w.mode} ${w.sha}\t${p}\0`).join("");
    execFileSync("git", ["update-index", "-z", "--index-info"], { cwd: copy, input: info });
  }

  const indexOf = (dir: string) => readFileSync(path.join(dir, ".git", "index"));
  const extensions = (bytes: Buffer) => {
    const names: string[] = [];
    // After the entries: four-byte names followed by sizes; the known ones are enough to find here.
    for (const name of ["TREE", "REUC", "UNTR", "EOIE", "IEOT"]) if (bytes.includes(Buffer.from(name))) names.push(name);
    return names;
  };
  const view = (dir: string) =>
    [git(dir, "ls-files", "-s"), git(dir, "status", "--porcelain=v2"), git(dir, "diff", "--cached"), git(dir, "write-tree")].join("\n");

  it("writes the bytes git writes: stat data zeroed, the cache tree invalidated along the path, the rest kept", () => {
    const dir = repo();
    settle(dir);
    const copy = copyOf(dir);
    bothWrite(dir, copy, { "a/b/c.txt": "new c\n" });
    expect(extensions(indexOf(dir))).toEqual(["TREE"]);
    expect(indexOf(dir).equals(indexOf(copy))).toBe(true);
    expect(view(dir)).toBe(view(copy));
  });

  it.each([4, 3])("keeps a resolve-undo record, and writes a version %i index as git does", (version) => {
    const dir = repo();
    // A conflict resolved with git add leaves REUC; an intent-to-add entry makes the index version 3.
    git(dir, "checkout", "-qb", "side");
    writeFile(dir, "top.txt", "side\n");
    git(dir, "commit", "-qam", "side");
    git(dir, "checkout", "-q", "main");
    writeFile(dir, "top.txt", "main\n");
    git(dir, "commit", "-qam", "main");
    expect(() => git(dir, "merge", "-q", "side")).toThrow();
    writeFile(dir, "top.txt", "resolved\n");
    git(dir, "add", "top.txt");
    if (version === 4) git(dir, "update-index", "--index-version", "4");
    else {
      writeFile(dir, "a/new.txt", "intent\n");
      git(dir, "add", "-N", "a/new.txt");
    }
    settle(dir);
    expect(indexOf(dir).readUInt32BE(4)).toBe(version);
    expect(extensions(indexOf(dir))).toEqual(["TREE", "REUC"]);
    const copy = copyOf(dir);
    bothWrite(dir, copy, { "a/b/d.txt": "new d\n", "x/y.txt": "new y\n" });
    expect(indexOf(dir).equals(indexOf(copy))).toBe(true);
    expect(view(dir)).toBe(view(copy));
  });

  it("drops the untracked cache, and git's status, tree and commit are the same as after git's write", () => {
    const dir = repo();
    git(dir, "update-index", "--untracked-cache");
    writeFile(dir, "x/untracked.txt", "u\n");
    git(dir, "status", "--porcelain");
    settle(dir);
    expect(extensions(indexOf(dir))).toEqual(["TREE", "UNTR"]);
    const copy = copyOf(dir);
    bothWrite(dir, copy, { "x/y.txt": "new y\n", "top.txt": "new top\n" });
    expect(extensions(indexOf(dir))).toEqual(["TREE"]);
    expect(view(dir)).toBe(view(copy));
    for (const d of [dir, copy]) git(d, "commit", "-qm", "staged", "--date=2026-01-01T00:00:00Z");
    const tree = (d: string) => git(d, "rev-parse", "HEAD^{tree}");
    expect(tree(dir)).toBe(tree(copy));
    expect(git(dir, "fsck", "--no-dangling")).toBe("");
  });

  it("smudges an entry racy against the old index, so git still reads the file it may not have seen change", () => {
    const dir = repo();
    settle(dir);
    // top.txt changes after git recorded it, keeping its size and modification time, in the second the index has.
    const minuteAgo = statSync(path.join(dir, "top.txt")).mtime;
    writeFile(dir, "top.txt", "TOP.TXT\n");
    utimesSync(path.join(dir, "top.txt"), minuteAgo, minuteAgo);
    utimesSync(path.join(dir, ".git", "index"), minuteAgo, minuteAgo);
    bothWrite(dir, copyOf(dir), { "a/e.txt": "new e\n" });
    expect(/size: (\d+)/.exec(git(dir, "ls-files", "-s", "--debug", "--", "top.txt"))![1]).toBe("0");
    expect(git(dir, "status", "--porcelain", "--", "top.txt")).toBe(" M top.txt\n");
  });
});
