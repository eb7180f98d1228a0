import { lstatSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { GitDirScan, findGitDirs } from "../../src/terminal/git-dirs.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";

let ws: ReturnType<typeof tmpWorkspace>;
let outside: ReturnType<typeof tmpWorkspace>;
beforeEach(() => {
  ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
  outside = tmpWorkspace({ git: true });
});
afterEach(() => {
  ws.cleanup();
  outside.cleanup();
});

describe("findGitDirs", () => {
  test("the root's .git, nested repositories', a linked worktree's .git file with the dirs it names; no symlinked folder followed", async () => {
    git(ws.dir, "add", ".");
    git(ws.dir, "commit", "-qm", "init");
    git(ws.dir, "init", "-q", "deep/nested");
    git(ws.dir, "worktree", "add", "-q", "wt");
    mkdirSync(path.join(ws.dir, "node_modules", "pkg"), { recursive: true });
    git(ws.dir, "init", "-q", "node_modules/pkg/repo");
    symlinkSync(outside.dir, path.join(ws.dir, "linked"));
    const { dirs, truncated } = await findGitDirs(ws.dir);
    expect(truncated).toBe(false);
    const rel = dirs.map((d) => path.relative(ws.dir, d));
    expect(rel).toEqual([".git", ".git/worktrees/wt", "deep/nested/.git", "node_modules/pkg/repo/.git", "wt/.git"]);
  });

  test("a walk past its bound says so", async () => {
    mkdirSync(path.join(ws.dir, "a", "b", "c"), { recursive: true });
    expect(await findGitDirs(ws.dir, { maxDirs: 2 })).toMatchObject({ truncated: true });
  });
});

describe("GitDirScan: a walk that keeps unchanged folders' entries", () => {
  const rels = (dirs: string[]) => dirs.map((d) => path.relative(ws.dir, d));
  const ctime = (rel: string) => lstatSync(path.join(ws.dir, rel), { bigint: true }).ctimeNs;
  /** No racy window: these folders were all made a moment ago (the daemon's 2 s would read them every time). */
  const scanner = () => new GitDirScan(0n);

  test("reads only changed folders, and finds a nested repository made after the last walk in one it had kept", async () => {
    mkdirSync(path.join(ws.dir, "deep", "er", "est"), { recursive: true });
    mkdirSync(path.join(ws.dir, "other", "x"), { recursive: true });
    const scan = scanner();
    expect(rels((await scan.find(ws.dir)).dirs)).toEqual([".git"]);
    const firstReads = scan.counts.read;
    expect((await scan.find(ws.dir)).dirs.length).toBe(1);
    expect(scan.counts.read).toBe(firstReads); // nothing changed: every folder kept
    const before = ctime("deep/er/est");
    git(ws.dir, "init", "-q", "deep/er/est/nested");
    expect(ctime("deep/er/est")).not.toBe(before); // the precondition the scan relies on
    expect(rels((await scan.find(ws.dir)).dirs)).toEqual([".git", "deep/er/est/nested/.git"]);
    rmSync(path.join(ws.dir, "deep/er/est/nested"), { recursive: true });
    expect(rels((await scan.find(ws.dir)).dirs)).toEqual([".git"]);
  });

  test("agrees with a fresh walk after random changes, a folder's mtime set back included", async () => {
    const scan = scanner();
    for (let round = 0; round < 6; round++) {
      const where = path.join(ws.dir, `r${round % 3}`, `s${round}`);
      mkdirSync(where, { recursive: true });
      if (round % 2 === 0) git(ws.dir, "init", "-q", path.relative(ws.dir, where));
      else writeFileSync(path.join(where, ".git"), `gitdir: ${path.join(ws.dir, ".git")}\n`);
      if (round === 3) utimesSync(path.dirname(where), new Date(0), new Date(0)); // mtime back: ctime moves on regardless
      if (round === 4) rmSync(path.join(ws.dir, "r1"), { recursive: true });
      expect((await scan.find(ws.dir)).dirs).toEqual((await findGitDirs(ws.dir)).dirs);
    }
  });
});
