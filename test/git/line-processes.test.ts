import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite, startDaemon } from "../helpers/daemon.js";
import { alive, waitDead } from "../helpers/process.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, git, hook, lines, writeFile } from "./fixture.js";

/**
 * The line tools' git processes (issue 23): blobs come from one long-lived `git cat-file` per repository and index
 * entries from the index file, so a status starts no process and neither does a staging (the daemon writes the index
 * itself where git's update-index would only replace entries; else update-index), with git's answer
 * after git changed the index or HEAD behind the daemon's back.
 */
describe("line tools' git processes", () => {
  const ws = tmpWorkspace({ git: true });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));
  const dir = ws.dir;

  type Processes = { started_by: Record<string, number>; children: { pid: number; label: string }[] };
  const state = async () => (await d.ok("info", { tool_id: "git_line_status" })).state.processes as Processes;
  /** Processes of these labels started since `before` (the VFS runs git status and ls-files of its own meanwhile). */
  const since = (before: Processes, after: Processes, labels: string[]) =>
    Object.fromEntries(labels.map((l) => [l, (after.started_by[l] ?? 0) - (before.started_by[l] ?? 0)]));
  const LINE_GIT = ["git cat-file", "git hash-object", "git update-index", "git cat-file (line tools)"];
  const reader = async () => (await state()).children.find((c) => c.label.startsWith("git cat-file"));

  beforeEach(() => {
    git(dir, "reset", "-q", "--hard");
    git(dir, "clean", "-qfdx");
  });

  it("git_line_status and git_word_diff start no process once the reader runs, and see what git changed meanwhile", async () => {
    commitFile(dir, "p.txt", lines("one", "two", "three"));
    writeFile(dir, "p.txt", lines("ONE", "two", "THREE"));
    await d.ok("git_line_status", { path: "p.txt" });
    const before = await state();
    for (let k = 0; k < 3; k++) {
      await d.ok("git_line_status", { path: "p.txt" });
      await d.ok("git_word_diff", { path: "p.txt" });
    }
    // Staged by git, then committed by git: the next answers know.
    writeFile(dir, "p.txt", lines("ONE", "two", "three"));
    git(dir, "add", "p.txt");
    writeFile(dir, "p.txt", lines("ONE", "two", "THREE"));
    const staged = await d.ok("git_line_status", { path: "p.txt" });
    expect(staged.ranges.map((r: any) => r.staged)).toEqual(["all", "none"]);
    git(dir, "commit", "-qm", "one");
    const committed = await d.ok("git_line_status", { path: "p.txt" });
    expect(committed.ranges.map((r: any) => r.staged)).toEqual(["none"]);
    expect(since(before, await state(), LINE_GIT)).toEqual({ "git cat-file": 0, "git hash-object": 0, "git update-index": 0, "git cat-file (line tools)": 0 });
  });

  /** Stages range 2 of a new file `rel` and answers how many update-index processes that started. */
  async function stageSecond(rel: string, beforeStaging = () => {}): Promise<number> {
    commitFile(dir, rel, lines("a", "b", "c", "d"));
    writeFile(dir, rel, lines("A", "b", "c", "D"));
    const status = await d.ok("git_line_status", { path: rel });
    beforeStaging();
    const before = await state();
    await d.ok("git_stage_lines", { path: rel, hash: status.hash, ranges: [2] });
    const started = since(before, await state(), LINE_GIT);
    expect({ ...started, "git update-index": 0 }).toEqual({ "git cat-file": 0, "git hash-object": 0, "git update-index": 0, "git cat-file (line tools)": 0 });
    expect(git(dir, "show", `:${rel}`)).toBe(lines("a", "b", "c", "D"));
    expect(git(dir, "diff", "--cached", "--name-only")).toBe(`${rel}\n`);
    expect(git(dir, "fsck", "--no-dangling")).toBe("");
    return started["git update-index"];
  }

  it("git_stage_lines starts no process: the daemon writes the blob and the index entry (v2 and v4 indexes)", async () => {
    expect(await stageSecond("s.txt")).toBe(0);
    git(dir, "commit", "-qm", "staged");
    git(dir, "update-index", "--index-version", "4");
    expect(await stageSecond("s4.txt")).toBe(0);
    expect(git(dir, "status", "--porcelain")).toBe(" M s.txt\nMM s4.txt\n");
  });

  it("leaves to git update-index a split index, a post-index-change hook and configuration git writes the index by", async () => {
    git(dir, "update-index", "--split-index");
    expect(await stageSecond("split.txt")).toBe(1);
    git(dir, "update-index", "--no-split-index");
    hook(dir, "post-index-change", `echo ran >> "${dir}/.git/hook-ran"`);
    try {
      expect(await stageSecond("hooked.txt", () => rmSync(path.join(dir, ".git", "hook-ran")))).toBe(1);
      expect(readFileSync(path.join(dir, ".git", "hook-ran"), "utf8")).toBe("ran\n");
    } finally {
      rmSync(path.join(dir, ".git", "hooks", "post-index-change"));
    }
    git(dir, "config", "core.fsync", "index");
    try {
      expect(await stageSecond("fsynced.txt")).toBe(1);
    } finally {
      git(dir, "config", "--unset", "core.fsync");
    }
  });

  it("an index.lock another writer holds fails the staging as git does, and stays", async () => {
    commitFile(dir, "l.txt", lines("a", "b"));
    writeFile(dir, "l.txt", lines("A", "b"));
    const status = await d.ok("git_line_status", { path: "l.txt" });
    const lock = path.join(dir, ".git", "index.lock");
    writeFileSync(lock, "");
    try {
      const r = await d.call("git_stage_lines", { path: "l.txt", hash: status.hash, ranges: [1] });
      expect(r.success).toBe(false);
      expect(JSON.stringify(r.result)).toContain("index.lock");
      expect(existsSync(lock)).toBe(true);
    } finally {
      rmSync(lock);
    }
    expect(git(dir, "diff", "--cached", "--name-only")).toBe("");
  });

  it("a reader that dies is started again by the next call, which answers", async () => {
    commitFile(dir, "k.txt", lines("x", "y"));
    writeFile(dir, "k.txt", lines("x", "Y"));
    await d.ok("git_line_status", { path: "k.txt" });
    const first = await reader();
    expect(first).toBeDefined();
    process.kill(first!.pid, "SIGKILL");
    const r = await d.ok("git_line_status", { path: "k.txt" });
    expect(r.ranges).toHaveLength(1);
    const second = await reader();
    expect(second?.pid).not.toBe(first!.pid);
  });

  it("the reader ends with the daemon", async () => {
    const other = await startDaemon(dir);
    try {
      commitFile(dir, "e.txt", lines("x"));
      writeFile(dir, "e.txt", lines("X"));
      await other.ok("git_line_status", { path: "e.txt" });
      const pid = ((await other.ok("info", { tool_id: "git_line_status" })).state.processes.children as { pid: number; label: string }[]).find((c) =>
        c.label.startsWith("git cat-file"),
      )!.pid;
      expect(alive(pid)).toBe(true);
      await other.close();
      await waitDead(pid);
    } finally {
      await other.close();
    }
  });
});
