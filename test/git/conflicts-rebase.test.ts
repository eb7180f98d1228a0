import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, expectUnchanged, git, lines, operationState, read, resetRepo, writeFile } from "./fixture.js";

const subjects = (dir: string, n: number) => git(dir, "log", "--format=%s", `-${n}`).trim().split("\n");

describe("conflicts of a rebase, a cherry-pick and a stash apply", () => {
  let dir: string;
  let cleanup: () => void;
  let d: DaemonClient;
  let base: string;

  beforeAll(async () => {
    ({ dir, cleanup } = tmpWorkspace({
      git: true,
      files: { "a.txt": lines("1", "x = 1", "3", "4", "5", "6", "7", "y = 1"), "b.txt": lines("b"), "c.txt": lines("c") },
    }));
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

  /** upstream changes x; topic has three commits, the second changing x too (and the third y, when `y`). */
  function threeCommits(y = false): string {
    git(dir, "checkout", "-q", "-b", "upstream");
    commitFile(dir, "a.txt", lines("1", "x = UP", "3", "4", "5", "6", "7", y ? "y = UP" : "y = 1"), "upstream edits a");
    git(dir, "checkout", "-q", "-b", "topic", base);
    commitFile(dir, "b.txt", lines("topic b"), "topic edits b");
    commitFile(dir, "a.txt", lines("1", "x = TOPIC", "3", "4", "5", "6", "7", "y = 1"), "topic edits x");
    if (y) commitFile(dir, "a.txt", lines("1", "x = TOPIC", "3", "4", "5", "6", "7", "y = TOPIC"), "topic edits y");
    else commitFile(dir, "c.txt", lines("topic c"), "topic edits c");
    return git(dir, "rev-parse", "HEAD").trim();
  }

  it("a rebase of three commits where the second conflicts stops there; resolved and finalized, the third applies", async () => {
    const tip = threeCommits();
    const preview = await expectUnchanged([dir], [], () => d.ok("git_rebase", { onto: "upstream" }, { approved: false }));
    expect(preview.replay.map((s: any) => [s.subject, s.conflicts, !!s.stops])).toEqual([
      ["topic edits b", [], false],
      ["topic edits x", ["a.txt"], true],
      ["topic edits c", [], false],
    ]);
    expect(preview.text).toContain("topic edits x: the rebase would STOP here for you");
    const r = await d.call("git_rebase", { onto: "upstream" });
    expect(r.result.code).toBe("CONFLICT");
    expect(r.result).toMatchObject({ in_progress: "rebase", files: ["a.txt"], backup: { kind: "commit", commit: tip } });
    expect(r.result.ours_label).toMatch(/^topic as rebuilt so far: [0-9a-f]{7} plus the commits replayed/);
    expect(r.result.theirs_label).toMatch(/^commit [0-9a-f]{7} \(topic edits x\), the commit being replayed$/);
    // It stopped instead of undoing itself: the first commit is replayed already.
    expect(subjects(dir, 2)).toEqual(["topic edits b", "upstream edits a"]);

    const listed = await d.ok("git_conflicts");
    expect(listed.operation).toBe("rebase");
    const [file] = listed.files;
    expect(file.blocks.map((b: any) => [b.ours.map((l: string) => l.slice(7)), b.theirs.map((l: string) => l.slice(7))])).toEqual([
      [["x = UP"], ["x = TOPIC"]],
    ]);
    await d.ok("git_conflict_resolve", { path: "a.txt", hash: file.hash, block: 1, keep: ["ours:1", "theirs:1"] });
    const fin = await expectUnchanged([dir], [], () => d.ok("git_conflict_finalize", {}, { approved: false }));
    expect(fin.text).toContain("git rebase --continue: commit this step, then replay 1 more commit");
    const done = await d.ok("git_conflict_finalize");
    expect(done.operation).toBe("rebase");
    expect(subjects(dir, 5)).toEqual(["topic edits c", "topic edits x", "topic edits b", "upstream edits a", "base"]);
    expect(read(dir, "a.txt")).toBe(lines("1", "x = UP", "x = TOPIC", "3", "4", "5", "6", "7", "y = 1"));
    expect(read(dir, "c.txt")).toBe(lines("topic c"));
    expect(git(dir, "symbolic-ref", "--short", "HEAD").trim()).toBe("topic");
    expect(git(dir, "status", "--porcelain")).toBe("");
    expect((await d.ok("git_conflicts")).operation).toBeNull();
  });

  it("abort at each stage (the stop, after a resolution, at the next stop) restores the state before the rebase exactly", async () => {
    threeCommits(true);
    writeFile(dir, "u.txt", lines("untracked, kept"));
    const before = operationState(dir);
    // 1: right after the stop.
    expect((await d.call("git_rebase", { onto: "upstream" })).result.code).toBe("CONFLICT");
    const plan = await expectUnchanged([dir], [], () => d.ok("git_rebase", { action: "abort" }, { approved: false }));
    expect(plan.text).toContain("exactly as they were before it began");
    const a1 = await d.ok("git_rebase", { action: "abort" });
    expect(operationState(dir)).toEqual(before);
    expect(a1.backup.ref).toMatch(/-rebase-abort$/);
    // 2: after resolving the first conflict's block.
    expect((await d.call("git_rebase", { onto: "upstream" })).result.code).toBe("CONFLICT");
    let [file] = (await d.ok("git_conflicts")).files;
    await d.ok("git_conflict_resolve", { path: "a.txt", hash: file.hash, block: 1, take: "theirs" });
    expect((await d.call("git_merge", { abort: true })).result.code).toBe("INVALID_PARAMS"); // a rebase is git_rebase's to abort
    await d.ok("git_rebase", { action: "abort" });
    expect(operationState(dir)).toEqual(before);
    // 3: at the next stop, after the first was finalized (so a replayed commit is discarded too, and kept in the backup).
    expect((await d.call("git_rebase", { onto: "upstream" })).result.code).toBe("CONFLICT");
    [file] = (await d.ok("git_conflicts")).files;
    await d.ok("git_conflict_resolve", { path: "a.txt", hash: file.hash, block: 1, take: "theirs" });
    const again = await d.call("git_conflict_finalize");
    expect(again.result.code).toBe("CONFLICT");
    expect(again.result.message).toContain("rebase --continue stopped again on conflicts");
    expect(again.result.theirs_label).toContain("(topic edits y)");
    expect(again.result.conflicts[0].blocks[0].theirs.map((l: string) => l.slice(7))).toEqual(["y = TOPIC"]);
    const replayed = git(dir, "rev-parse", "HEAD").trim();
    const a3 = await d.ok("git_rebase", { action: "abort" });
    expect(operationState(dir)).toEqual(before);
    expect(git(dir, "rev-parse", `${a3.backup.ref}^1`).trim()).toBe(replayed);
  });

  it("action continue finishes like finalize; skip drops the commit being replayed; a word merge stops the rebase for a look, continue goes on", async () => {
    threeCommits();
    expect((await d.call("git_rebase", { onto: "upstream" })).result.code).toBe("CONFLICT");
    expect((await d.call("git_rebase", { action: "continue" })).result.code).toBe("CONFLICT"); // markers left
    const skip = await expectUnchanged([dir], [], () => d.ok("git_rebase", { action: "skip" }, { approved: false }));
    expect(skip.text).toContain("would skip the commit being replayed");
    await d.ok("git_rebase", { action: "skip" });
    expect(subjects(dir, 4)).toEqual(["topic edits c", "topic edits b", "upstream edits a", "base"]);
    expect((await d.call("git_rebase", { action: "continue" })).result.code).toBe("NO_CHANGE");

    // Both sides change one line at different words: the rebase settles it and finishes without stopping.
    git(dir, "checkout", "-q", "-b", "up2", base);
    const shared = commitFile(dir, "a.txt", lines("1", "x = f(a, b)", "3", "4", "5", "6", "7", "y = 1"), "up2");
    commitFile(dir, "a.txt", lines("1", "x = f(a, c)", "3", "4", "5", "6", "7", "y = 1"), "up2 again");
    git(dir, "checkout", "-q", "-b", "t2", shared);
    commitFile(dir, "a.txt", lines("1", "z = f(a, b)", "3", "4", "5", "6", "7", "y = 1"), "t2 one");
    commitFile(dir, "c.txt", lines("t2 c"), "t2 two");
    const p = await d.ok("git_rebase", { onto: "up2" }, { approved: false });
    expect(p.replay.map((s: any) => [s.subject, s.auto?.completes ?? null, !!s.stops])).toEqual([
      ["t2 one", false, true],
      ["t2 two", null, false],
    ]);
    const r = await d.call("git_rebase", { onto: "up2" });
    expect(r.result).toMatchObject({ code: "CONFLICT", review: ["a.txt"], auto_resolved: [{ path: "a.txt", rule: "words", lines: [2, 2] }] });
    expect(read(dir, "a.txt")).toContain("z = f(a, c)\n");
    expect(subjects(dir, 2)).toEqual(["up2 again", "up2"]);
    await d.ok("git_rebase", { action: "continue" });
    expect(subjects(dir, 4)).toEqual(["t2 two", "t2 one", "up2 again", "up2"]);
    expect(git(dir, "status", "--porcelain")).toBe("");
  });

  it("a cherry-pick started outside is handled by the same tools, and git_merge abort abandons one", async () => {
    git(dir, "checkout", "-q", "-b", "side");
    const pick = commitFile(dir, "a.txt", lines("1", "x = SIDE", "3", "4", "5", "6", "7", "y = 1"), "side edits x");
    git(dir, "checkout", "-q", "main");
    commitFile(dir, "a.txt", lines("1", "x = MAIN", "3", "4", "5", "6", "7", "y = 1"), "main edits x");
    const before = operationState(dir);
    spawnSync("git", ["cherry-pick", pick], { cwd: dir, stdio: "ignore" });
    const listed = await d.ok("git_conflicts");
    expect(listed.operation).toBe("cherry-pick");
    expect(listed.theirs_label).toMatch(/\(side edits x\), the commit being cherry-picked$/);
    expect(listed.text).toContain("cherry-pick started outside tool-layer in progress");
    await d.ok("git_merge", { abort: true });
    expect(operationState(dir)).toEqual(before);

    spawnSync("git", ["cherry-pick", pick], { cwd: dir, stdio: "ignore" });
    const [file] = (await d.ok("git_conflicts")).files;
    await d.ok("git_conflict_resolve", { path: "a.txt", hash: file.hash, block: 1, take: "theirs" });
    await d.ok("git_conflict_finalize");
    expect(subjects(dir, 1)).toEqual(["side edits x"]);
    expect(read(dir, "a.txt")).toContain("x = SIDE\n");
    expect((await d.ok("git_conflicts")).operation).toBeNull();
  });

  it("a stash apply that conflicts: auto-resolution settles what it can, finalize leaves the index as a clean apply would; abort restores exactly", async () => {
    writeFile(dir, "a.txt", lines("1", "x = f(a, b)", "3", "4", "5", "6", "7", "y = STASH"));
    writeFile(dir, "b.txt", lines("stashed b"));
    writeFile(dir, "new.txt", lines("untracked in the stash"));
    git(dir, "stash", "push", "-q", "--include-untracked");
    commitFile(dir, "a.txt", lines("1", "x = g(a, c)", "3", "4", "5", "6", "7", "y = MAIN"), "main edits a");
    writeFile(dir, "c.txt", lines("dirty c, not in the stash"));
    const before = operationState(dir);

    const preview = await expectUnchanged([dir], [], () => d.ok("git_stash", { action: "pop" }, { approved: false }));
    expect(preview.auto_resolution).toMatchObject({ settled: 0, left: 2, completes: false });
    const r = await d.call("git_stash", { action: "pop" });
    expect(r.result.code).toBe("CONFLICT");
    expect(r.result.in_progress).toBe("stash");
    const listed = await d.ok("git_conflicts");
    expect(listed.operation).toBe("stash");
    expect(listed.theirs_label).toMatch(/^the stash stash@\{0\}/);
    expect(read(dir, "new.txt")).toBe(lines("untracked in the stash"));
    const abort = await d.ok("git_merge", { abort: true });
    expect(operationState(dir)).toEqual(before);
    expect(git(dir, "show", `${abort.backup.ref}:new.txt`)).toBe(lines("untracked in the stash"));
    expect(git(dir, "stash", "list")).not.toBe("");

    expect((await d.call("git_stash", { action: "pop" })).result.code).toBe("CONFLICT");
    const [file] = (await d.ok("git_conflicts")).files;
    expect(file.blocks).toHaveLength(2);
    await d.ok("git_conflict_resolve", { path: "a.txt", hash: file.hash, block: 1, take: "ours" });
    const again = (await d.ok("git_conflicts")).files[0];
    await d.ok("git_conflict_resolve", { path: "a.txt", hash: again.hash, block: 1, take: "theirs" });
    const fin = await expectUnchanged([dir], [], () => d.ok("git_conflict_finalize", {}, { approved: false }));
    expect(fin.text).toContain("drop the stash");
    const done = await d.ok("git_conflict_finalize");
    expect(done.dropped.ref).toMatch(/-stash-drop$/);
    expect(git(dir, "stash", "list")).toBe("");
    // As a clean pop leaves it: its changes unstaged, its untracked file untracked, the dirty file as it was.
    expect(git(dir, "status", "--porcelain").split("\n").filter(Boolean).sort()).toEqual([" M a.txt", " M b.txt", " M c.txt", "?? new.txt"]);
    expect(read(dir, "a.txt")).toBe(lines("1", "x = g(a, c)", "3", "4", "5", "6", "7", "y = STASH"));
    expect((await d.ok("git_conflicts")).operation).toBeNull();
  });
});
