import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { commitFile, expectUnchanged, git, hook, otherClone, repoWithRemote, snapshot, writeFile } from "./fixture.js";

const sha256Of = (dir: string, rel: string) =>
  createHash("sha256")
    .update(readFileSync(path.join(dir, rel)))
    .digest("hex");
const lines = (dir: string, rel: string) =>
  existsSync(path.join(dir, rel)) ? readFileSync(path.join(dir, rel), "utf8").split("\n").filter(Boolean).length : 0;

/** Some forty previews, each starting git several times: 7 s alone, past the default 30 s beside other suites on 2 cores. */
const PREVIEWS_TIMEOUT_MS = 120_000;

describe("git dry runs execute nothing the workspace controls, and approvals are bound to previews", () => {
  let repo: ReturnType<typeof repoWithRemote>;
  let d: DaemonClient;

  beforeAll(async () => {
    repo = repoWithRemote();
    d = await startDaemon(repo.dir);
  });
  afterAll(async () => {
    await d.close();
    repo.cleanup();
  });

  it("a hook that lives in the worktree (core.hooksPath, as husky sets it) changed by a file write never runs in a preview; the approval covers its hash", async () => {
    writeFile(repo.dir, ".githooks/pre-commit", "#!/bin/sh\nexit 0\n");
    chmodSync(path.join(repo.dir, ".githooks/pre-commit"), 0o755);
    git(repo.dir, "config", "core.hooksPath", ".githooks");
    git(repo.dir, "add", ".githooks");
    git(repo.dir, "commit", "-q", "-m", "husky-style hooks");
    // The hook is rewritten through the file tools, as any session may do.
    const read = await d.ok("file_read", { path: ".githooks/pre-commit" });
    await d.ok("file_write", { path: ".githooks/pre-commit", hash: read.hash, content: `#!/bin/sh\necho ran >> "${repo.dir}/hook-ran"\n` });
    writeFile(
      repo.dir,
      ".tool-layer.json",
      JSON.stringify({ checks: [{ name: "marker", command: ["sh", "-c", `echo ran >> "${repo.dir}/check-ran"`], on: ["commit"] }] }),
    );
    writeFile(repo.dir, "a.txt", "hooked\n");
    git(repo.dir, "add", "a.txt");

    const preview = await d.ok("git_commit", { message: "with hook" }, { approved: false });
    const again = await d.ok("git_commit", { message: "with hook" }, { approved: false });
    expect(lines(repo.dir, "hook-ran")).toBe(0);
    expect(lines(repo.dir, "check-ran")).toBe(0);
    const planned = { hook: "pre-commit", path: ".githooks/pre-commit", sha256: sha256Of(repo.dir, ".githooks/pre-commit") };
    expect(preview.hooks).toEqual([planned]);
    expect(preview.checks).toEqual([{ name: "marker", command: ["sh", "-c", `echo ran >> "${repo.dir}/check-ran"`], timeout_ms: 120_000 }]);
    expect(again.preview_id).toBe(preview.preview_id);

    // The hook changes after the preview: the approval no longer covers what would run.
    const now = await d.ok("file_read", { path: ".githooks/pre-commit" });
    await d.ok("file_write", { path: ".githooks/pre-commit", hash: now.hash, content: `#!/bin/sh\necho changed >> "${repo.dir}/hook-ran"\n` });
    const head = git(repo.dir, "rev-parse", "HEAD");
    const stale = await d.call("git_commit", { message: "with hook", preview_id: preview.preview_id });
    expect(stale.result.code).toBe("PREVIEW_STALE");
    expect(stale.result.preview.hooks).toEqual([{ ...planned, sha256: sha256Of(repo.dir, ".githooks/pre-commit") }]);
    expect(git(repo.dir, "rev-parse", "HEAD")).toBe(head);
    expect(lines(repo.dir, "hook-ran")).toBe(0);
    expect(lines(repo.dir, "check-ran")).toBe(0);

    // Approved with the fresh preview, the hook and check run, and the answer names the hook with that hash.
    const done = await d.ok("git_commit", { message: "with hook", preview_id: stale.result.preview_id });
    expect(done.hooks).toEqual(stale.result.preview.hooks);
    expect(done.checks).toEqual([expect.objectContaining({ name: "marker", command: ["sh", "-c", `echo ran >> "${repo.dir}/check-ran"`], ok: true })]);
    expect(readFileSync(path.join(repo.dir, "hook-ran"), "utf8")).toBe("changed\n");
    expect(lines(repo.dir, "check-ran")).toBe(1);
    git(repo.dir, "config", "--unset", "core.hooksPath");
    rmSync(path.join(repo.dir, ".tool-layer.json"));
    rmSync(path.join(repo.dir, "hook-ran"));
    rmSync(path.join(repo.dir, "check-ran"));
  });

  it("git_reset previewed on one HEAD and approved after a new commit answers PREVIEW_STALE with the new preview and changes nothing; the fresh id runs", async () => {
    commitFile(repo.dir, "a.txt", "before reset\n", "reset base");
    const preview = await d.ok("git_reset", { ref: "HEAD~1", mode: "hard" }, { approved: false });
    commitFile(repo.dir, "b.txt", "someone else's commit\n", "new commit");
    const before = snapshot(repo.dir);
    const stale = await d.call("git_reset", { ref: "HEAD~1", mode: "hard", preview_id: preview.preview_id });
    expect(stale.success).toBe(false);
    expect(stale.result.code).toBe("PREVIEW_STALE");
    expect(stale.result.preview).toMatchObject({ dry_run: true, previous: git(repo.dir, "rev-parse", "HEAD").trim() });
    expect(stale.result.preview_id).not.toBe(preview.preview_id);
    expect(snapshot(repo.dir)).toEqual(before);
    const ran = await d.ok("git_reset", { ref: "HEAD~1", mode: "hard", preview_id: stale.result.preview_id });
    expect(ran.commit).toBe(git(repo.dir, "rev-parse", "HEAD").trim());
    expect(git(repo.dir, "log", "-1", "--format=%s")).toBe("reset base\n");
  });

  it(
    "every git preview's preview_id is the same for two identical dry runs",
    async () => {
      const other = otherClone(repo.remote);
      try {
        git(repo.dir, "push", "-q", "--force", "origin", "main");
        // Work to integrate: a topic branch, a commit on the remote, a local commit to push.
        git(repo.dir, "branch", "-f", "topic", "HEAD");
        git(repo.dir, "checkout", "-q", "topic");
        commitFile(repo.dir, "topic.txt", "topic\n", "topic");
        git(repo.dir, "checkout", "-q", "main");
        git(other.dir, "pull", "-q");
        commitFile(other.dir, "theirs.txt", "theirs\n", "theirs");
        git(other.dir, "push", "-q");
        commitFile(repo.dir, "ours.txt", "ours\n", "ours");
        hook(repo.dir, "pre-push", "exit 0");
        writeFile(repo.dir, ".tool-layer.json", JSON.stringify({ checks: [{ name: "ok", command: ["true"], on: ["commit", "push"] }] }));
        git(repo.dir, "add", ".tool-layer.json");
        git(repo.dir, "commit", "-q", "-m", "checks");
        writeFile(repo.dir, "stashed.txt", "kept\n");
        git(repo.dir, "stash", "push", "-q", "--include-untracked", "-m", "kept");
        execFileSync("git", ["clone", "-q", "--bare", repo.remote, path.join(repo.dir, "mirror.git")]);
        const clean: [string, Record<string, unknown>][] = [
          ["git_checkout", { ref: "topic" }],
          ["git_checkout", { ref: "new-branch", create: true }],
          ["git_merge", { ref: "topic" }],
          ["git_rebase", { onto: "topic" }],
          ["git_pull", {}],
          ["git_pull", { rebase: true }],
          ["git_fetch", {}],
          ["git_push", { branch: "topic" }],
          ["git_clone", { url: "mirror.git", path: "copy" }],
          ["git_reset", { ref: "HEAD~1", mode: "hard" }],
          ["git_reset", { ref: "HEAD~1", mode: "soft" }],
          ["git_stash", { action: "apply" }],
          ["git_stash", { action: "drop" }],
          ["git_check", {}],
          ["gh", { args: ["--version"] }],
        ];
        const dirty: [string, Record<string, unknown>][] = [
          ["git_add", {}],
          ["git_stash", { action: "push", include_untracked: true }],
          ["git_commit", { message: "m", paths: ["a.txt"] }],
          ["git_reset", { ref: "HEAD", mode: "hard" }],
          ["git_checkout", { ref: "topic" }],
        ];
        for (const [tool, params] of clean) await expectStable(tool, params);
        writeFile(repo.dir, "a.txt", "dirty\n");
        writeFile(repo.dir, "new.txt", "untracked\n");
        for (const [tool, params] of dirty) await expectStable(tool, params);
        git(repo.dir, "add", "a.txt");
        await expectStable("git_commit", { message: "staged" });
      } finally {
        other.cleanup();
        rmSync(path.join(repo.dir, "mirror.git"), { recursive: true, force: true });
        rmSync(path.join(repo.dir, ".git/hooks/pre-push"), { force: true });
      }
    },
    PREVIEWS_TIMEOUT_MS,
  );

  it("info gives every git tool its hints: fetch reaches out and destroys nothing, reset destroys, reads are read-only", async () => {
    const hints = async (tool_id: string) => {
      const r = await d.ok("info", { tool_id });
      return { mutating: r.mutating, read_only: r.read_only, destructive: r.destructive, idempotent: r.idempotent, open_world: r.open_world };
    };
    expect(await hints("git_fetch")).toEqual({ mutating: true, read_only: false, destructive: false, idempotent: true, open_world: true });
    expect(await hints("git_reset")).toEqual({ mutating: true, read_only: false, destructive: true, idempotent: false, open_world: false });
    expect(await hints("git_push")).toMatchObject({ mutating: true, destructive: true, open_world: true });
    expect(await hints("git_pull")).toMatchObject({ mutating: true, open_world: true });
    expect(await hints("git_clone")).toMatchObject({ mutating: true, destructive: false, open_world: true });
    expect(await hints("git_add")).toMatchObject({ mutating: true, destructive: false, idempotent: true, open_world: false });
    expect(await hints("git_check")).toMatchObject({ mutating: true, read_only: false });
    expect(await hints("gh")).toMatchObject({ mutating: true, open_world: true });
    for (const tool of ["git_status", "git_diff", "git_log", "git_show", "git_branch"]) {
      expect(await hints(tool), tool).toEqual({ mutating: false, read_only: true, destructive: false, idempotent: true, open_world: false });
    }
  });

  async function expectStable(tool: string, params: Record<string, unknown>): Promise<void> {
    const [a, b] = await expectUnchanged([repo.dir], [repo.remote], async () => [
      await d.call(tool, params, { approved: false }),
      await d.call(tool, params, { approved: false }),
    ]);
    expect(a.success, `${tool} ${JSON.stringify(params)}: ${JSON.stringify(a.result)}`).toBe(true);
    expect(a.result.preview_id, `${tool} ${JSON.stringify(params)}`).toMatch(/^[0-9a-f]{16}$/);
    expect(b.result.preview_id, `${tool} ${JSON.stringify(params)}`).toBe(a.result.preview_id);
  }
});
