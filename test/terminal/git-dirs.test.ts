import { mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { findGitDirs } from "../../src/terminal/git-dirs.js";
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
