import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, git, lines, read, resetRepo, writeFile } from "./fixture.js";

/**
 * SPEC 9: an abandon restores the state before the operation, keeps a backup of what it discards, and leaves alone a
 * file the operation never touched, whatever was done to it while the operation was stopped.
 */
describe("abandoning an operation keeps the edits made meanwhile to files it did not touch", () => {
  let dir: string;
  let cleanup: () => void;
  let d: DaemonClient;
  let base: string;

  beforeAll(async () => {
    ({ dir, cleanup } = tmpWorkspace({ git: true, files: { "a.txt": lines("1", "x = 1", "3"), "u.txt": lines("u"), "w.txt": lines("w") } }));
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "-m", "base");
    base = git(dir, "rev-parse", "HEAD").trim();
    d = await startDaemon(dir);
  });
  afterAll(async () => {
    await d.close();
    cleanup();
  });
  beforeEach(() => resetRepo(dir, base));

  /** topic and main both change a.txt's line 2 (main is checked out); nothing else. */
  function conflicting(): void {
    git(dir, "checkout", "-q", "-b", "topic");
    commitFile(dir, "a.txt", lines("1", "x = TOPIC", "3"));
    git(dir, "checkout", "-q", "main");
    commitFile(dir, "a.txt", lines("1", "x = MAIN", "3"));
  }

  it("git_merge abort: an edit made before the merge and again while it was stopped survives; the conflicted file goes back", async () => {
    conflicting();
    writeFile(dir, "u.txt", lines("edited before the merge"));
    expect((await d.call("git_merge", { ref: "topic" })).result.code).toBe("CONFLICT");
    writeFile(dir, "u.txt", lines("edited again while it was stopped"));
    writeFile(dir, "w.txt", lines("w edited while it was stopped"));
    const plan = await d.ok("git_merge", { abort: true }, { approved: false });
    expect(plan.kept).toEqual(["u.txt", "w.txt"]);
    expect(plan.files).toEqual(["a.txt"]);
    const r = await d.ok("git_merge", { abort: true });
    expect(read(dir, "u.txt")).toBe(lines("edited again while it was stopped"));
    expect(read(dir, "w.txt")).toBe(lines("w edited while it was stopped"));
    expect(read(dir, "a.txt")).toBe(lines("1", "x = MAIN", "3"));
    expect(git(dir, "status", "--porcelain")).toBe(" M u.txt\n M w.txt\n");
    expect(r.text).toContain("kept as they are: u.txt, w.txt");
    // The backup holds the worktree as it was, the edits included.
    expect(git(dir, "show", `${r.backup.ref}:u.txt`)).toBe(lines("edited again while it was stopped"));
  });

  it("git_rebase abort (git's own would reset it hard): an edit of an untouched file made at the stop survives", async () => {
    conflicting();
    git(dir, "checkout", "-q", "topic");
    expect((await d.call("git_rebase", { onto: "main" })).result.code).toBe("CONFLICT");
    writeFile(dir, "u.txt", lines("edited during the rebase"));
    await d.ok("git_rebase", { action: "abort" });
    expect(read(dir, "u.txt")).toBe(lines("edited during the rebase"));
    expect(git(dir, "status", "--porcelain")).toBe(" M u.txt\n");
    expect(git(dir, "symbolic-ref", "--short", "HEAD").trim()).toBe("topic");
  });

  it("a rebase and a cherry-pick started outside: their abort through the daemon keeps the edit too", async () => {
    conflicting();
    git(dir, "checkout", "-q", "topic");
    spawnSync("git", ["rebase", "main"], { cwd: dir, stdio: "ignore" });
    writeFile(dir, "u.txt", lines("edited during an outside rebase"));
    await d.ok("git_rebase", { action: "abort" });
    expect(read(dir, "u.txt")).toBe(lines("edited during an outside rebase"));
    expect(git(dir, "status", "--porcelain")).toBe(" M u.txt\n");

    git(dir, "checkout", "-q", "-f", "main");
    spawnSync("git", ["cherry-pick", "topic"], { cwd: dir, stdio: "ignore" });
    writeFile(dir, "u.txt", lines("edited during a cherry-pick"));
    await d.ok("git_merge", { abort: true });
    expect(read(dir, "u.txt")).toBe(lines("edited during a cherry-pick"));
    expect(git(dir, "status", "--porcelain")).toBe(" M u.txt\n");
  });

  it("a stash pop that conflicts, abandoned: an untouched file edited at the stop keeps the edit, the stash stays", async () => {
    writeFile(dir, "a.txt", lines("1", "x = STASH", "3"));
    git(dir, "stash", "push", "-q");
    commitFile(dir, "a.txt", lines("1", "x = MAIN", "3"));
    expect((await d.call("git_stash", { action: "pop" })).result.code).toBe("CONFLICT");
    writeFile(dir, "u.txt", lines("edited during the pop"));
    await d.ok("git_merge", { abort: true });
    expect(read(dir, "u.txt")).toBe(lines("edited during the pop"));
    expect(read(dir, "a.txt")).toBe(lines("1", "x = MAIN", "3"));
    expect(git(dir, "status", "--porcelain")).toBe(" M u.txt\n");
    expect(git(dir, "stash", "list")).not.toBe("");
  });
});
