import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, expectUnchanged, git, read, resetRepo, writeFile } from "./fixture.js";

describe("git_checkout, git_merge, git_rebase, git_reset, git_stash", () => {
  let dir: string;
  let cleanup: () => void;
  let d: DaemonClient;
  let base: string;

  beforeAll(async () => {
    ({ dir, cleanup } = tmpWorkspace({ git: true, files: { "a.txt": "1\n2\n3\n", "b.txt": "b\n", "c.txt": "c\n" } }));
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

  it("git_checkout create makes a branch at HEAD (preview changes nothing); an existing name is ALREADY_EXISTS", async () => {
    const preview = await expectUnchanged([dir], [], () => d.ok("git_checkout", { ref: "topic", create: true }, { approved: false }));
    expect(preview.text).toContain("would create branch topic");
    await d.ok("git_checkout", { ref: "topic", create: true });
    expect(git(dir, "symbolic-ref", "--short", "HEAD")).toBe("topic\n");
    expect((await d.call("git_checkout", { ref: "main", create: true })).result.code).toBe("ALREADY_EXISTS");
    expect((await d.call("git_checkout", { ref: "bad..name", create: true })).result.code).toBe("INVALID_PARAMS");
  });

  it("git_checkout over local changes previews, carries them, and saves them to a backup ref that brings them back", async () => {
    git(dir, "checkout", "-q", "-b", "other");
    commitFile(dir, "b.txt", "other b\n");
    git(dir, "checkout", "-q", "main");
    writeFile(dir, "c.txt", "local work\n");
    const preview = await expectUnchanged([dir], [], () => d.ok("git_checkout", { ref: "other" }, { approved: false }));
    expect(preview.files).toEqual(["b.txt"]);
    expect(preview.carried).toEqual(["c.txt"]);
    const r = await d.ok("git_checkout", { ref: "other" });
    expect(r.branch).toBe("other");
    expect(read(dir, "c.txt")).toBe("local work\n");
    expect(r.backup.ref).toMatch(/^refs\/tool-layer\/backup\/.*-checkout$/);
    // The backup really holds the work: drop it from the worktree, then apply the backup.
    git(dir, "checkout", "-q", "--", "c.txt");
    expect(read(dir, "c.txt")).toBe("c\n");
    await d.ok("git_stash", { action: "apply", stash: r.backup.ref });
    expect(read(dir, "c.txt")).toBe("local work\n");
  });

  it("git_checkout refuses (CONFLICT) when local changes would be overwritten, in preview and for real", async () => {
    git(dir, "checkout", "-q", "-b", "other");
    commitFile(dir, "b.txt", "other b\n");
    git(dir, "checkout", "-q", "main");
    writeFile(dir, "b.txt", "my b\n");
    const p = await expectUnchanged([dir], [], () => d.call("git_checkout", { ref: "other" }, { approved: false }));
    expect(p.result.code).toBe("CONFLICT");
    const r = await expectUnchanged([dir], [], () => d.call("git_checkout", { ref: "other" }));
    expect(r.result.code).toBe("CONFLICT");
    expect(r.result.files).toEqual(["b.txt"]);
  });

  it("git_merge previews clean, fast-forward and conflicting merges via merge-tree without touching anything", async () => {
    git(dir, "checkout", "-q", "-b", "ff");
    commitFile(dir, "b.txt", "ff b\n", "ff commit");
    git(dir, "checkout", "-q", "-b", "clash", base);
    commitFile(dir, "a.txt", "1\nTHEIRS\n3\n", "their 2");
    git(dir, "checkout", "-q", "main");
    const ff = await expectUnchanged([dir], [], () => d.ok("git_merge", { ref: "ff" }, { approved: false }));
    expect(ff).toMatchObject({ fast_forward: true, conflicts: [], incoming_count: 1 });
    commitFile(dir, "a.txt", "1\nOURS\n3\n", "our 2");
    const clean = await expectUnchanged([dir], [], () => d.ok("git_merge", { ref: "ff" }, { approved: false }));
    expect(clean).toMatchObject({ fast_forward: false, conflicts: [] });
    expect(clean.text).toContain("merge would be clean");
    const clash = await expectUnchanged([dir], [], () => d.ok("git_merge", { ref: "clash" }, { approved: false }));
    expect(clash.conflicts).toEqual(["a.txt"]);

    const merged = await d.ok("git_merge", { ref: "ff" });
    expect(git(dir, "rev-list", "--parents", "-n1", "HEAD").trim().split(" ")).toHaveLength(3);
    expect(merged.head).toBe(git(dir, "rev-parse", "HEAD").trim());
    const r = await d.call("git_merge", { ref: "clash" });
    expect(r.result.code).toBe("CONFLICT");
    expect(r.result.files).toEqual(["a.txt"]);
    expect(read(dir, "a.txt")).toContain("<<<<<<<");
    expect((await d.call("git_merge", { ref: "ff" })).result.code).toBe("CONFLICT"); // a merge is already in progress
    const blocked = await d.call("git_commit", { message: "too early" });
    expect(blocked.result.code).toBe("CONFLICT"); // unresolved files: git's refusal, not a hook's
    writeFile(dir, "a.txt", "1\nRESOLVED\n3\n");
    await d.ok("git_add", { paths: ["a.txt"] });
    await d.ok("git_commit", { message: "merge clash" });
    expect(git(dir, "rev-list", "--parents", "-n1", "HEAD").trim().split(" ")).toHaveLength(3);
  });

  it("git_merge no_ff makes a merge commit where a fast-forward was possible", async () => {
    git(dir, "checkout", "-q", "-b", "ff");
    commitFile(dir, "b.txt", "ff b\n");
    git(dir, "checkout", "-q", "main");
    await d.ok("git_merge", { ref: "ff", no_ff: true });
    expect(git(dir, "rev-list", "--parents", "-n1", "HEAD").trim().split(" ")).toHaveLength(3);
  });

  it("git_rebase previews the commits to replay and their predicted conflicts, per commit", async () => {
    git(dir, "checkout", "-q", "-b", "upstream");
    commitFile(dir, "a.txt", "1\nUP\n3\n", "upstream edits a");
    git(dir, "checkout", "-q", "-b", "topic", base);
    commitFile(dir, "b.txt", "topic b\n", "topic edits b");
    commitFile(dir, "a.txt", "1\nTOPIC\n3\n", "topic edits a");
    commitFile(dir, "c.txt", "topic c\n", "topic edits c");
    const preview = await expectUnchanged([dir], [], () => d.ok("git_rebase", { onto: "upstream" }, { approved: false }));
    expect(preview.replay.map((s: any) => [s.subject, s.conflicts])).toEqual([
      ["topic edits b", []],
      ["topic edits a", ["a.txt"]],
      ["topic edits c", []],
    ]);
    expect(preview.text).toContain("CONFLICT in a.txt");
    // For real it stops at the conflict (SPEC 9) with a backup naming the old tip; abort puts the branch back.
    const head = git(dir, "rev-parse", "HEAD").trim();
    const r = await d.call("git_rebase", { onto: "upstream" });
    expect(r.result.code).toBe("CONFLICT");
    expect(r.result.files).toEqual(["a.txt"]);
    expect((await d.ok("git_status")).operation).toBe("rebase");
    await d.ok("git_rebase", { action: "abort" });
    expect(git(dir, "rev-parse", "HEAD").trim()).toBe(head);
    expect(git(dir, "status", "--porcelain")).toBe("");
    expect(git(dir, "rev-parse", r.result.backup.ref).trim()).toBe(head);
    expect(r.result.backup).toMatchObject({ kind: "commit", commit: head, restore: expect.stringContaining(r.result.backup.ref) });
  });

  it("git_rebase replays a clean branch and the backup ref brings the old branch back", async () => {
    git(dir, "checkout", "-q", "-b", "upstream");
    commitFile(dir, "c.txt", "up c\n", "upstream edits c");
    git(dir, "checkout", "-q", "-b", "topic", base);
    commitFile(dir, "b.txt", "topic b\n", "topic edits b");
    const old = git(dir, "rev-parse", "HEAD").trim();
    const r = await d.ok("git_rebase", { onto: "upstream" });
    expect(git(dir, "log", "--format=%s", "-3").trim().split("\n")).toEqual(["topic edits b", "upstream edits c", "base"]);
    expect(r.backup.commit).toBe(old);
    await d.ok("git_reset", { ref: r.backup.ref, mode: "hard" });
    expect(git(dir, "rev-parse", "HEAD").trim()).toBe(old);
    writeFile(dir, "a.txt", "dirty\n");
    expect((await d.call("git_rebase", { onto: "upstream" })).result.code).toBe("CONFLICT"); // uncommitted changes
  });

  it("git_reset hard previews what is lost, then saves commits and uncommitted work to a backup ref that restores both", async () => {
    const c1 = commitFile(dir, "a.txt", "1\n2\n3\n4\n", "four");
    writeFile(dir, "b.txt", "uncommitted b\n");
    writeFile(dir, "c.txt", "staged c\n");
    git(dir, "add", "c.txt");
    const preview = await expectUnchanged([dir], [], () => d.ok("git_reset", { ref: "HEAD~1", mode: "hard" }, { approved: false }));
    expect(preview.leaving.map((c: any) => c.sha)).toEqual([c1]);
    expect(preview.discarded.map((f: any) => f.path)).toEqual(["b.txt", "c.txt"]);
    const r = await d.ok("git_reset", { ref: "HEAD~1", mode: "hard" });
    expect(git(dir, "rev-parse", "HEAD").trim()).toBe(base);
    expect(read(dir, "b.txt")).toBe("b\n");
    expect(r.backup.kind).toBe("worktree");
    // Everything comes back: the commit (the backup's first parent) and the uncommitted changes.
    await d.ok("git_reset", { ref: `${r.backup.ref}^1`, mode: "hard" });
    expect(git(dir, "rev-parse", "HEAD").trim()).toBe(c1);
    await d.ok("git_stash", { action: "apply", stash: r.backup.ref });
    expect(read(dir, "b.txt")).toBe("uncommitted b\n");
    expect(read(dir, "c.txt")).toBe("staged c\n");
  });

  it("git_reset soft and mixed move the branch and keep files; paths only unstage", async () => {
    const c1 = commitFile(dir, "a.txt", "soft\n", "soft");
    const soft = await d.ok("git_reset", { ref: "HEAD~1", mode: "soft" });
    expect(soft.backup.commit).toBe(c1);
    expect(git(dir, "status", "--porcelain")).toBe("M  a.txt\n");
    await d.ok("git_reset", { ref: "HEAD", mode: "mixed" });
    expect(git(dir, "status", "--porcelain")).toBe(" M a.txt\n");
    git(dir, "add", "a.txt");
    const p = await expectUnchanged([dir], [], () => d.ok("git_reset", { ref: "HEAD", mode: "mixed", paths: ["a.txt"] }, { approved: false }));
    expect(p.files.map((f: any) => f.path)).toEqual(["a.txt"]);
    await d.ok("git_reset", { ref: "HEAD", mode: "mixed", paths: ["a.txt"] });
    expect(git(dir, "status", "--porcelain")).toBe(" M a.txt\n");
    expect((await d.call("git_reset", { ref: "HEAD", mode: "hard", paths: ["a.txt"] })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("git_reset", { ref: "HEAD", mode: "keep" })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("git_reset", { ref: "--hard", mode: "soft" })).result.code).toBe("INVALID_PARAMS");
  });

  it("git_stash push, list, pop and drop (with a backup) each preview without changing anything", async () => {
    writeFile(dir, "a.txt", "stash me\n");
    writeFile(dir, "new.txt", "untracked\n");
    const p = await expectUnchanged([dir], [], () => d.ok("git_stash", { action: "push", message: "wip", include_untracked: true }, { approved: false }));
    expect(p.files.sort()).toEqual(["a.txt", "new.txt"]);
    await d.ok("git_stash", { action: "push", message: "wip", include_untracked: true });
    expect(git(dir, "status", "--porcelain")).toBe("");
    const list = await d.ok("git_stash", { action: "list" });
    expect(list.stashes).toEqual([expect.objectContaining({ name: "stash@{0}", subject: "On main: wip" })]);
    const pp = await expectUnchanged([dir], [], () => d.ok("git_stash", { action: "pop" }, { approved: false }));
    expect(pp.files.sort()).toEqual(["a.txt", "new.txt"]);
    await d.ok("git_stash", { action: "pop" });
    expect(read(dir, "a.txt")).toBe("stash me\n");
    expect(read(dir, "new.txt")).toBe("untracked\n");
    expect((await d.ok("git_stash", { action: "list" })).stashes).toEqual([]);

    await d.ok("git_stash", { action: "push" });
    await expectUnchanged([dir], [], () => d.ok("git_stash", { action: "drop" }, { approved: false }));
    const dropped = await d.ok("git_stash", { action: "drop" });
    expect((await d.ok("git_stash", { action: "list" })).stashes).toEqual([]);
    await d.ok("git_stash", { action: "apply", stash: dropped.backup.ref });
    expect(read(dir, "a.txt")).toBe("stash me\n");
    expect((await d.call("git_stash", { action: "push", include_untracked: false, message: "x" }, { approved: false })).success).toBe(true);
    git(dir, "checkout", "--", "a.txt");
    expect((await d.call("git_stash", { action: "push" })).result.code).toBe("NO_CHANGE");
  });
});
