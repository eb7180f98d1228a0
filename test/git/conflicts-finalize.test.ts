import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { alive, waitDead, waitForFile } from "../helpers/process.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { conflictingBranches, git, hook, lines, read, resetRepo, writeFile } from "./fixture.js";

/** What a stopped merge must still be after a failed, stale or cancelled step: in progress, resolved, staged. */
function expectStillFinalizable(dir: string, head: string, resolved: string): void {
  expect(git(dir, "rev-parse", "HEAD").trim()).toBe(head);
  expect(existsSync(path.join(dir, ".git/MERGE_HEAD"))).toBe(true);
  expect(read(dir, "a.txt")).toBe(resolved);
  expect(existsSync(path.join(dir, ".git/index.lock"))).toBe(false);
}

describe("git_conflict_finalize and git_conflict_resolve when a hook fails, a preview is stale or a call is cancelled", () => {
  let dir: string;
  let cleanup: () => void;
  let d: DaemonClient;
  let root: string;

  beforeAll(async () => {
    ({ dir, cleanup } = tmpWorkspace({ git: true }));
    git(dir, "commit", "-q", "--allow-empty", "-m", "root");
    root = git(dir, "rev-parse", "HEAD").trim();
    d = await startDaemon(dir);
  });
  afterAll(async () => {
    await d.close();
    cleanup();
  });
  beforeEach(() => {
    resetRepo(dir, root);
    for (const h of ["pre-commit", "reference-transaction"]) rmSync(path.join(dir, ".git/hooks", h), { force: true });
  });

  /** A merge stopped on one block of a.txt; returns HEAD and the file's listing. */
  async function stopped(): Promise<{ head: string; file: { hash: string } }> {
    conflictingBranches(dir, { "a.txt": lines("1", "x = 1", "3") }, { "a.txt": lines("1", "x = 2", "3") }, { "a.txt": lines("1", "x = 3", "3") });
    expect((await d.call("git_merge", { ref: "topic" })).result.code).toBe("CONFLICT");
    return { head: git(dir, "rev-parse", "HEAD").trim(), file: (await d.ok("git_conflicts")).files[0] };
  }

  async function resolved(): Promise<{ head: string; text: string }> {
    const { head, file } = await stopped();
    await d.ok("git_conflict_resolve", { path: "a.txt", hash: file.hash, block: 1, take: "theirs" });
    return { head, text: lines("1", "x = 3", "3") };
  }

  it("a pre-commit hook that refuses the merge commit: HOOK_FAILED naming it, nothing lost, finalize works once it passes", async () => {
    const { head, text } = await resolved();
    hook(dir, "pre-commit", `echo "refused by policy" >&2\nexit 1`);
    const r = await d.call("git_conflict_finalize");
    expect(r.result).toMatchObject({ code: "HOOK_FAILED", hook: "pre-commit" });
    expect(r.result.message).toContain("refused by policy");
    expect(r.result.message).toContain("still in progress");
    expectStillFinalizable(dir, head, text);
    expect(git(dir, "ls-files", "-s", "--", "a.txt")).toMatch(/ 0\ta\.txt\n$/); // staged, no longer unmerged
    expect((await d.ok("git_conflicts")).operation).toBe("merge");
    rmSync(path.join(dir, ".git/hooks/pre-commit"));
    await d.ok("git_conflict_finalize");
    expect(git(dir, "show", "HEAD:a.txt")).toBe(text);
    expect(git(dir, "rev-list", "--parents", "-n1", "HEAD").trim().split(" ")).toHaveLength(3);
  });

  it("an approved finalize preview is PREVIEW_STALE after a hook appeared or a resolved file changed; nothing is committed", async () => {
    const { head, text } = await resolved();
    const preview = await d.ok("git_conflict_finalize", {}, { approved: false });
    hook(dir, "pre-commit", "exit 0");
    const withHook = await d.call("git_conflict_finalize", { preview_id: preview.preview_id });
    expect(withHook.result.code).toBe("PREVIEW_STALE");
    expectStillFinalizable(dir, head, text);
    expect(git(dir, "ls-files", "-u")).not.toBe(""); // not even staged

    const again = await d.ok("git_conflict_finalize", {}, { approved: false });
    const edited = lines("1", "x = 3 and a hand edit", "3");
    writeFile(dir, "a.txt", edited);
    const withEdit = await d.call("git_conflict_finalize", { preview_id: again.preview_id });
    expect(withEdit.result.code).toBe("PREVIEW_STALE");
    expectStillFinalizable(dir, head, edited);
  });

  it("an approved resolve preview is PREVIEW_STALE once the file changed; the change stays as it is", async () => {
    const { head, file } = await stopped();
    const preview = await d.ok("git_conflict_resolve", { path: "a.txt", hash: file.hash, block: 1, take: "ours" }, { approved: false });
    const edited = read(dir, "a.txt").replace("1\n", "one\n");
    writeFile(dir, "a.txt", edited);
    const r = await d.call("git_conflict_resolve", { path: "a.txt", hash: file.hash, block: 1, take: "ours", preview_id: preview.preview_id });
    expect(r.result).toMatchObject({ code: "PREVIEW_STALE", reason: { code: "HASH_MISMATCH" } });
    expect(read(dir, "a.txt")).toBe(edited);
    expect(git(dir, "rev-parse", "HEAD").trim()).toBe(head);
  });

  it("cancel while the merge commit's hook runs: CANCELLED, the hook killed, no commit; a resolve queued behind it is cancelled too", async () => {
    const { head, text } = await resolved();
    const pidFile = path.join(dir, ".git", "hook.pid");
    hook(dir, "pre-commit", `echo $$ > "${pidFile}"\nsleep 60`);
    const finalize = d.call("git_conflict_finalize", {}, { id: "finalize" });
    const hookPid = Number(await waitForFile(pidFile));
    expect(alive(hookPid)).toBe(true);
    // A resolve waits for the worktree the finalize holds; cancelled, it answers at once and never runs.
    const resolve = d.call("git_conflict_resolve", { path: "a.txt", hash: "0000000000000000", take: "ours" }, { id: "resolve" });
    expect((await d.ok("cancel", { call_id: "resolve" })).cancelled).toBe(true);
    expect((await resolve).result.code).toBe("CANCELLED");
    expect((await d.ok("cancel", { call_id: "finalize" })).cancelled).toBe(true);
    expect((await finalize).result.code).toBe("CANCELLED");
    await waitDead(hookPid);
    expectStillFinalizable(dir, head, text);
    rmSync(path.join(dir, ".git/hooks/pre-commit"));
    rmSync(pidFile);
    await d.ok("git_conflict_finalize");
    expect(git(dir, "show", "HEAD:a.txt")).toBe(text);
    expect(git(dir, "status", "--porcelain")).toBe("");
  });
});
