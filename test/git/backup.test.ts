import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, expectUnchanged, git, read, resetRepo, writeFile } from "./fixture.js";

/** The one shape of a backup (issue 10): a ref, its commit, its kind and how to restore it, naming the ref. */
function expectBackup(b: any, kind: "worktree" | "commit"): void {
  expect(b).toEqual({
    ref: expect.stringMatching(/^refs\/tool-layer\/backup\//),
    commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    kind,
    restore: expect.stringContaining(b.ref),
  });
}

describe("operations that replace files keep what they replace recoverable", () => {
  let dir: string;
  let cleanup: () => void;
  let d: DaemonClient;
  let base: string;

  beforeAll(async () => {
    ({ dir, cleanup } = tmpWorkspace({ git: true, files: { "a.txt": "1\n2\n3\n", "u.txt": "unrelated\n", ".gitignore": ".env\nlocal.cfg\n" } }));
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

  it("git_reset hard over an untracked file that the target tracks names it in the preview and keeps it in the backup", async () => {
    const later = commitFile(dir, "x.txt", "tracked later\n", "adds x");
    git(dir, "reset", "-q", "--hard", base);
    writeFile(dir, "x.txt", "precious, untracked\n");
    const preview = await expectUnchanged([dir], [], () => d.ok("git_reset", { ref: later, mode: "hard" }, { approved: false }));
    expect(preview.overwritten).toEqual(["x.txt"]);
    expect(preview.text).toContain("would be overwritten (saved to the backup ref first): x.txt");
    const r = await d.ok("git_reset", { ref: later, mode: "hard" });
    expect(read(dir, "x.txt")).toBe("tracked later\n");
    expectBackup(r.backup, "worktree");
    expect((await d.ok("git_show", { ref: r.backup.ref, path: "x.txt" })).content).toBe("precious, untracked\n");
  });

  it("abandoning a conflicted merge as the daemon advises keeps the unrelated change and the edited resolution in the backup", async () => {
    git(dir, "checkout", "-q", "-b", "topic");
    commitFile(dir, "a.txt", "1\nTHEIRS\n3\n", "theirs");
    git(dir, "checkout", "-q", "main");
    commitFile(dir, "a.txt", "1\nOURS\n3\n", "ours");
    writeFile(dir, "u.txt", "uncommitted, unrelated work\n");
    const merge = await d.call("git_merge", { ref: "topic" });
    expect(merge.result.code).toBe("CONFLICT");
    expect(merge.result.message).toContain("git_merge {abort:true}");
    writeFile(dir, "a.txt", "1\nRESOLVED BY HAND\n3\n");
    const r = await d.ok("git_reset", { ref: "HEAD", mode: "hard" });
    expect(read(dir, "u.txt")).toBe("unrelated\n");
    expect((await d.ok("git_status")).operation).toBe(null);
    expectBackup(r.backup, "worktree");
    expect((await d.ok("git_show", { ref: r.backup.ref, path: "u.txt" })).content).toBe("uncommitted, unrelated work\n");
    expect((await d.ok("git_show", { ref: r.backup.ref, path: "a.txt" })).content).toBe("1\nRESOLVED BY HAND\n3\n");
    // The restore the answer names works: both changes come back.
    expect(r.backup.restore).toContain(`git_stash {action:"apply", stash:"${r.backup.ref}"}`);
    await d.ok("git_stash", { action: "apply", stash: r.backup.ref });
    expect(read(dir, "u.txt")).toBe("uncommitted, unrelated work\n");
    expect(read(dir, "a.txt")).toBe("1\nRESOLVED BY HAND\n3\n");
  });

  it("an edit of the same size in the same second as the last index write is still in the backup (racy git)", async () => {
    commitFile(dir, "r.txt", "aaaa\n", "racy");
    writeFile(dir, "r.txt", "bbbb\n"); // same size, within the second the commit wrote the index
    const r = await d.ok("git_reset", { ref: "HEAD", mode: "hard" });
    expect(read(dir, "r.txt")).toBe("aaaa\n");
    expectBackup(r.backup, "worktree");
    expect((await d.ok("git_show", { ref: r.backup.ref, path: "r.txt" })).content).toBe("bbbb\n");
  });

  it("git_checkout over an ignored file the target tracks names it, backs it up and says how to restore", async () => {
    git(dir, "checkout", "-q", "-b", "cfg");
    writeFile(dir, ".env", "SECRET=theirs\n");
    git(dir, "add", "-f", ".env");
    git(dir, "commit", "-q", "-m", "track .env");
    git(dir, "checkout", "-q", "main");
    writeFile(dir, ".env", "SECRET=mine\n");
    const preview = await expectUnchanged([dir], [], () => d.ok("git_checkout", { ref: "cfg" }, { approved: false }));
    expect(preview.overwritten).toEqual([".env"]);
    expect(preview.text).toContain(".env");
    const r = await d.ok("git_checkout", { ref: "cfg" });
    expect(read(dir, ".env")).toBe("SECRET=theirs\n");
    expectBackup(r.backup, "worktree");
    expect(r.text).toContain(r.backup.restore);
    expect((await d.ok("git_show", { ref: r.backup.ref, path: ".env" })).content).toBe("SECRET=mine\n");
  });

  it("git_checkout over an untracked (not ignored) file the target tracks is CONFLICT before anything changes", async () => {
    git(dir, "checkout", "-q", "-b", "notes");
    commitFile(dir, "notes.txt", "theirs\n", "notes");
    git(dir, "checkout", "-q", "main");
    writeFile(dir, "notes.txt", "mine\n");
    for (const approved of [false, true]) {
      const r = await expectUnchanged([dir], [], () => d.call("git_checkout", { ref: "notes" }, { approved }));
      expect(r.result.code).toBe("CONFLICT");
      expect(r.result.files).toEqual(["notes.txt"]);
    }
  });

  it("git_merge over an ignored file the other side tracks names it, backs it up and the backup holds it", async () => {
    git(dir, "checkout", "-q", "-b", "side");
    writeFile(dir, "local.cfg", "port=theirs\n");
    git(dir, "add", "-f", "local.cfg");
    git(dir, "commit", "-q", "-m", "track local.cfg");
    git(dir, "checkout", "-q", "main");
    commitFile(dir, "u.txt", "main moved on\n", "main");
    writeFile(dir, "local.cfg", "port=mine\n");
    const preview = await expectUnchanged([dir], [], () => d.ok("git_merge", { ref: "side" }, { approved: false }));
    expect(preview.overwritten).toEqual(["local.cfg"]);
    const r = await d.ok("git_merge", { ref: "side" });
    expect(read(dir, "local.cfg")).toBe("port=theirs\n");
    expectBackup(r.backup, "worktree");
    expect((await d.ok("git_show", { ref: r.backup.ref, path: "local.cfg" })).content).toBe("port=mine\n");
    // And the merge's text says what happened, not what would.
    expect(r.text).toContain("merged without conflicts");
    expect(r.text).not.toContain("would");
  });

  it("backups of commits have the same shape: git_rebase's in its result, git_reset soft's too", async () => {
    git(dir, "checkout", "-q", "-b", "up");
    commitFile(dir, "up.txt", "up\n", "up");
    git(dir, "checkout", "-q", "main");
    commitFile(dir, "mine.txt", "mine\n", "mine");
    const rebased = await d.ok("git_rebase", { onto: "up" });
    expectBackup(rebased.backup, "commit");
    const soft = await d.ok("git_reset", { ref: "HEAD~1", mode: "soft" });
    expectBackup(soft.backup, "commit");
  });
});

/**
 * Each attribution test gets its own daemon: an attribution window stays open ATTRIBUTION_GRACE_MS after its call, and
 * a change from the next test inside that grace would be the previous call's (a limit of time-window attribution).
 */
describe("attribution of git's worktree changes", () => {
  async function withDaemon(work: (d: DaemonClient, dir: string) => Promise<void>): Promise<void> {
    const ws = tmpWorkspace({ git: true, files: { "a.txt": "committed\n" } });
    git(ws.dir, "add", "-A");
    git(ws.dir, "commit", "-q", "-m", "base");
    const d = await startDaemon(ws.dir);
    try {
      await work(d, ws.dir);
    } finally {
      await d.close();
      ws.cleanup();
    }
  }
  const changeOf = (d: DaemonClient, from: number) => (l: any) =>
    l.event === "fs.changed" && d.events.indexOf(l) >= from && l.data.changes.some((c: any) => c.path === "a.txt");

  it("a git_reset hard through the daemon is attributed to its session and tool in fs.changed", () =>
    withDaemon(async (d, dir) => {
      const before = d.events.length;
      writeFile(dir, "a.txt", "to be discarded\n");
      // Wait until the watcher has reported the external edit, so the reset's change is a separate one.
      expect((await d.waitFor(changeOf(d, before))).data.changes.find((c: any) => c.path === "a.txt").origin).toBe("external");
      const seen = d.events.length;
      await d.ok("git_reset", { ref: "HEAD", mode: "hard" }, { session: "resetter" });
      const line = await d.waitFor(changeOf(d, seen));
      expect(line.data.changes.find((c: any) => c.path === "a.txt")).toMatchObject({ kind: "modified", origin: "tool", by: "resetter", tool: "git_reset" });
    }));

  it("a git_checkout's rewrite of a file is attributed to its session and tool", () =>
    withDaemon(async (d, dir) => {
      // A branch made in the object store only, so nothing outside the call touches the worktree.
      const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: dir, input: "on other\n", encoding: "utf8" }).trim();
      const tree = execFileSync("git", ["mktree"], { cwd: dir, input: `100644 blob ${blob}\ta.txt\n`, encoding: "utf8" }).trim();
      git(dir, "branch", "other", git(dir, "commit-tree", tree, "-p", "HEAD", "-m", "other").trim());
      const seen = d.events.length;
      await d.ok("git_checkout", { ref: "other" }, { session: "switcher" });
      const line = await d.waitFor(changeOf(d, seen));
      expect(line.data.changes.find((c: any) => c.path === "a.txt")).toMatchObject({ origin: "tool", by: "switcher", tool: "git_checkout" });
    }));
});
