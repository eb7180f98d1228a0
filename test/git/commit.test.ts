import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, expectUnchanged, git, hook, repoWithRemote, writeFile } from "./fixture.js";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";

const sha256Of = (dir: string, rel: string) =>
  createHash("sha256")
    .update(readFileSync(path.join(dir, rel)))
    .digest("hex");

describe("git_add, git_commit, hooks and checks", () => {
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
  beforeEach(() => {
    // Each test starts from a clean tree on main with no hooks and no checks.
    git(repo.dir, "reset", "-q", "--hard");
    git(repo.dir, "clean", "-qfdx");
    for (const h of ["pre-commit", "commit-msg"]) rmSync(path.join(repo.dir, ".git/hooks", h), { force: true });
  });

  it("git_add previews without staging, then stages everything like add -A", async () => {
    writeFile(repo.dir, "a.txt", "changed\n");
    writeFile(repo.dir, "new.txt", "new\n");
    rmSync(path.join(repo.dir, "b.txt"));
    const preview = await expectUnchanged([repo.dir], [], () => d.ok("git_add", {}, { approved: false }));
    expect(preview.dry_run).toBe(true);
    expect(preview.staged).toEqual(
      expect.arrayContaining([
        { action: "add", path: "a.txt" },
        { action: "add", path: "new.txt" },
        { action: "remove", path: "b.txt" },
      ]),
    );
    const r = await d.ok("git_add");
    expect(r.staged).toHaveLength(3);
    expect(git(repo.dir, "status", "--porcelain")).toBe("M  a.txt\nD  b.txt\nA  new.txt\n");
  });

  it("git_add with paths stages only those; a path matching nothing is NOT_FOUND", async () => {
    writeFile(repo.dir, "a.txt", "changed\n");
    writeFile(repo.dir, "new.txt", "new\n");
    await d.ok("git_add", { paths: ["new.txt"] });
    expect(git(repo.dir, "status", "--porcelain")).toBe(" M a.txt\nA  new.txt\n");
    const r = await d.call("git_add", { paths: ["nope.txt"] });
    expect(r.result.code).toBe("NOT_FOUND");
    expect(r.result.message).toMatch(/^nope\.txt matches no file/);
    // Paths are literal: a glob or pathspec magic names a file of that name, not a pattern.
    for (const p of ["*.txt", ":(top)a.txt", ":!new.txt"]) expect((await d.call("git_add", { paths: [p] })).result.code, p).toBe("NOT_FOUND");
    // An ignored file named on purpose is refused, as git add refuses it, instead of staging nothing without a word.
    writeFile(repo.dir, ".git/info/exclude", "*.log\n");
    writeFile(repo.dir, "debug.log", "noise\n");
    const ignored = await d.call("git_add", { paths: ["debug.log"] }, { approved: false });
    expect(ignored.result).toMatchObject({ code: "INVALID_PARAMS", ignored: ["debug.log"] });
    writeFile(repo.dir, ".git/info/exclude", "");
    rmSync(path.join(repo.dir, "debug.log"));
    expect(git(repo.dir, "status", "--porcelain")).toBe(" M a.txt\nA  new.txt\n");
  });

  it("git_commit preview shows files and stat and changes nothing; the commit then takes the index", async () => {
    writeFile(repo.dir, "a.txt", "one\ntwo\nthree\nfour\n");
    git(repo.dir, "add", "a.txt");
    const preview = await expectUnchanged([repo.dir], [], () => d.ok("git_commit", { message: "add four" }, { approved: false }));
    expect(preview.files).toEqual([{ path: "a.txt", added: 1, deleted: 0 }]);
    expect(preview.text).toContain("would commit on main: 1 file");
    const r = await d.ok("git_commit", { message: "add four" });
    expect(git(repo.dir, "rev-parse", "HEAD").trim()).toBe(r.commit);
    expect(git(repo.dir, "log", "-1", "--format=%s")).toBe("add four\n");
    expect(git(repo.dir, "status", "--porcelain")).toBe("");
  });

  it("git_commit with paths commits exactly those (new files included) and leaves other staged changes staged", async () => {
    writeFile(repo.dir, "b.txt", "staged but not committed\n");
    git(repo.dir, "add", "b.txt");
    writeFile(repo.dir, "a.txt", "worktree change\n");
    writeFile(repo.dir, "fresh.txt", "brand new\n");
    const preview = await expectUnchanged([repo.dir], [], () =>
      d.ok("git_commit", { message: "two paths", paths: ["a.txt", "fresh.txt"] }, { approved: false }),
    );
    expect(preview.files.map((f: any) => f.path)).toEqual(["a.txt", "fresh.txt"]);
    const r = await d.ok("git_commit", { message: "two paths", paths: ["a.txt", "fresh.txt"] });
    expect(git(repo.dir, "show", "--name-only", "--format=", r.commit).trim().split("\n")).toEqual(["a.txt", "fresh.txt"]);
    expect(git(repo.dir, "status", "--porcelain")).toBe("M  b.txt\n");
  });

  it("git_commit amend replaces the last commit", async () => {
    const before = commitFile(repo.dir, "a.txt", "amend me\n", "to amend");
    writeFile(repo.dir, "b.txt", "amended in\n");
    git(repo.dir, "add", "b.txt");
    const r = await d.ok("git_commit", { message: "amended", amend: true });
    expect(r.commit).not.toBe(before);
    expect(git(repo.dir, "rev-parse", `${r.commit}^`).trim()).toBe(git(repo.dir, "rev-parse", `${before}^`).trim());
    expect(git(repo.dir, "show", "--name-only", "--format=%s", r.commit).trim().split("\n").filter(Boolean)).toEqual(["amended", "a.txt", "b.txt"]);
  });

  it("git_reset to the commit the branch is on says the branch stays there and what is reset, in preview and for real", async () => {
    writeFile(repo.dir, "a.txt", "staged\n");
    git(repo.dir, "add", "a.txt");
    const head = git(repo.dir, "rev-parse", "--short=7", "HEAD").trim();
    const preview = await expectUnchanged([repo.dir], [], () => d.ok("git_reset", { ref: "HEAD", mode: "mixed" }, { approved: false }));
    expect(preview.text.split("\n")[0]).toBe(`main would stay at ${head} (HEAD is the commit it is on); would reset the index to it`);
    const r = await d.ok("git_reset", { ref: "HEAD", mode: "mixed" });
    expect(r.text.split("\n")[0]).toBe(`main stays at ${head} (HEAD is the commit it is on); reset the index to it`);
    expect(r.text).not.toContain("moved");
    expect(git(repo.dir, "status", "--porcelain")).toBe(" M a.txt\n");
  });

  it("nothing to commit is NO_CHANGE; an empty message is INVALID_PARAMS", async () => {
    expect((await d.call("git_commit", { message: "nothing" })).result.code).toBe("NO_CHANGE");
    expect((await d.call("git_commit", { message: "" })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("git_commit", { message: "x", paths: ["--all"] })).result.code).toBe("INVALID_PARAMS");
  });

  it("a failing pre-commit hook blocks the commit with its output; the preview names the hook and its hash and does not run it", async () => {
    hook(repo.dir, "pre-commit", 'echo ran >> pre-commit-ran\necho "lint: trailing whitespace in a.txt" >&2\nexit 1');
    writeFile(repo.dir, "a.txt", "x \n");
    writeFile(repo.dir, "fresh.txt", "new\n");
    const head = git(repo.dir, "rev-parse", "HEAD");
    const preview = await expectUnchanged([repo.dir], [], () => d.ok("git_commit", { message: "m", paths: ["a.txt", "fresh.txt"] }, { approved: false }));
    expect(existsSync(path.join(repo.dir, "pre-commit-ran"))).toBe(false);
    expect(preview.hooks).toEqual([{ hook: "pre-commit", path: ".git/hooks/pre-commit", sha256: sha256Of(repo.dir, ".git/hooks/pre-commit") }]);
    expect(preview.text).toContain("hook pre-commit would run: .git/hooks/pre-commit");
    const before = git(repo.dir, "status", "--porcelain");
    const r = await d.call("git_commit", { message: "m", paths: ["a.txt", "fresh.txt"] });
    expect(r.result.code).toBe("HOOK_FAILED");
    expect(r.result.hook).toBe("pre-commit");
    expect(r.result.output).toContain("lint: trailing whitespace");
    expect(git(repo.dir, "rev-parse", "HEAD")).toBe(head);
    expect(existsSync(path.join(repo.dir, "pre-commit-ran"))).toBe(true); // approved, it ran
    rmSync(path.join(repo.dir, "pre-commit-ran"));
    expect(git(repo.dir, "status", "--porcelain")).toBe(before); // the intent-to-add of fresh.txt was undone
  });

  it("a failing commit-msg hook blocks the commit; a passing one lets it through and is named with its hash", async () => {
    hook(repo.dir, "commit-msg", 'grep -q "^JIRA-" "$1" || { echo "message must start with JIRA-" >&2; exit 1; }');
    writeFile(repo.dir, "a.txt", "msg hook\n");
    git(repo.dir, "add", "a.txt");
    const planned = [{ hook: "commit-msg", path: ".git/hooks/commit-msg", sha256: sha256Of(repo.dir, ".git/hooks/commit-msg") }];
    const preview = await d.ok("git_commit", { message: "no ticket" }, { approved: false });
    expect(preview.hooks).toEqual(planned);
    const bad = await d.call("git_commit", { message: "no ticket" });
    expect(bad.result.code).toBe("HOOK_FAILED");
    expect(bad.result.output).toContain("must start with JIRA-");
    const ok = await d.ok("git_commit", { message: "JIRA-1 fix" });
    expect(ok.hooks).toEqual(planned);
    expect(ok.text).toContain("hook commit-msg ran: .git/hooks/commit-msg");
    expect(git(repo.dir, "log", "-1", "--format=%s")).toBe("JIRA-1 fix\n");
  });

  it("a failing custom check blocks the commit with its output under its name; the preview lists the checks' commands and runs none", async () => {
    writeFile(
      repo.dir,
      ".tool-layer.json",
      JSON.stringify({
        checks: [
          { name: "tests", command: ["sh", "-c", "echo ran >> check-ran; echo all good"], on: ["commit"] },
          { name: "no-todo", command: ["sh", "-c", "! grep -n TODO a.txt"], on: ["commit", "push"] },
          { name: "push-only", command: ["false"], on: ["push"] },
        ],
      }),
    );
    git(repo.dir, "add", ".tool-layer.json");
    git(repo.dir, "commit", "-q", "-m", "checks");
    writeFile(repo.dir, "a.txt", "TODO: finish\n");
    git(repo.dir, "add", "a.txt");
    const head = git(repo.dir, "rev-parse", "HEAD");
    const preview = await expectUnchanged([repo.dir], [], () => d.ok("git_commit", { message: "todo" }, { approved: false }));
    expect(preview.checks).toEqual([
      { name: "tests", command: ["sh", "-c", "echo ran >> check-ran; echo all good"], timeout_ms: 120_000 },
      { name: "no-todo", command: ["sh", "-c", "! grep -n TODO a.txt"], timeout_ms: 120_000 },
    ]);
    expect(preview.text).toContain("check tests would run: sh -c 'echo ran >> check-ran; echo all good'");
    expect(existsSync(path.join(repo.dir, "check-ran"))).toBe(false);
    const r = await d.call("git_commit", { message: "todo" });
    expect(r.result.code).toBe("CHECK_FAILED");
    expect(r.result.message).toContain("check no-todo: failed (exit 1)");
    expect(r.result.message).toContain("1:TODO: finish");
    expect(r.result.checks.map((c: any) => [c.name, c.ok])).toEqual([
      ["tests", true],
      ["no-todo", false],
    ]);
    expect(git(repo.dir, "rev-parse", "HEAD")).toBe(head);

    writeFile(repo.dir, "a.txt", "done\n");
    git(repo.dir, "add", "a.txt");
    const ok = await d.ok("git_commit", { message: "done" });
    expect(ok.checks.map((c: any) => [c.name, c.command[0], c.ok])).toEqual([
      ["tests", "sh", true],
      ["no-todo", "sh", true],
    ]);
    expect(ok.text).toContain("check tests: passed");

    // git_check runs programs the workspace names: a dry run unless approved, listing the commands.
    rmSync(path.join(repo.dir, "check-ran"));
    const dry = await d.ok("git_check", {}, { approved: false });
    expect(dry.dry_run).toBe(true);
    expect(dry.checks.map((c: any) => c.name)).toEqual(["tests", "no-todo", "push-only"]);
    expect(dry.text).toContain("check push-only would run: false");
    expect(existsSync(path.join(repo.dir, "check-ran"))).toBe(false);
    const all = await d.ok("git_check", {});
    expect(all.ok).toBe(false);
    expect(all.checks.map((c: any) => c.name)).toEqual(["tests", "no-todo", "push-only"]);
    expect(existsSync(path.join(repo.dir, "check-ran"))).toBe(true);
    const one = await d.ok("git_check", { name: "tests" });
    expect(one).toMatchObject({ ok: true, checks: [{ name: "tests", ok: true, output: "all good" }] });
    expect((await d.call("git_check", { name: "nope" })).result.code).toBe("NOT_FOUND");
    expect((await d.call("git_check", { name: "nope" }, { approved: false })).result.code).toBe("NOT_FOUND");
    git(repo.dir, "rm", "-q", ".tool-layer.json");
    git(repo.dir, "commit", "-q", "-m", "no checks");
  });

  it("a check runs sandboxed: it cannot rewrite a hook in .git", async () => {
    hook(repo.dir, "pre-commit", "exit 0");
    writeFile(
      repo.dir,
      ".tool-layer.json",
      JSON.stringify({ checks: [{ name: "sneaky", command: ["sh", "-c", "echo 'touch hook-ran' >> .git/hooks/pre-commit"], on: ["commit"] }] }),
    );
    writeFile(repo.dir, "a.txt", "sneaky in .git\n");
    git(repo.dir, "add", "a.txt");
    const head = git(repo.dir, "rev-parse", "HEAD");
    const r = await d.call("git_commit", { message: "sneaky" });
    expect(r.result.code).toBe("CHECK_FAILED");
    expect(r.result.message).toMatch(/Read-only file system|Permission denied/);
    expect(git(repo.dir, "rev-parse", "HEAD")).toBe(head);
    expect(readFileSync(path.join(repo.dir, ".git/hooks/pre-commit"), "utf8")).not.toContain("hook-ran");
  });

  it("a check that rewrites a hook in the worktree stops the commit: what runs must be what the call found", async () => {
    mkdirSync(path.join(repo.dir, ".githooks"), { recursive: true });
    writeFileSync(path.join(repo.dir, ".githooks", "pre-commit"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    git(repo.dir, "config", "core.hooksPath", ".githooks");
    writeFile(
      repo.dir,
      ".tool-layer.json",
      JSON.stringify({ checks: [{ name: "sneaky", command: ["sh", "-c", "echo 'touch hook-ran' >> .githooks/pre-commit"], on: ["commit"] }] }),
    );
    writeFile(repo.dir, "a.txt", "sneaky\n");
    git(repo.dir, "add", "a.txt");
    const head = git(repo.dir, "rev-parse", "HEAD");
    const r = await d.call("git_commit", { message: "sneaky" });
    expect(r.result.code).toBe("PREVIEW_STALE");
    expect(r.result.message).toContain("pre-commit");
    expect(git(repo.dir, "rev-parse", "HEAD")).toBe(head);
    expect(existsSync(path.join(repo.dir, "hook-ran"))).toBe(false);
    git(repo.dir, "config", "--unset", "core.hooksPath");
    git(repo.dir, "reset", "-q");
  });

  it("a malformed checks file is reported, not ignored", async () => {
    writeFile(repo.dir, ".tool-layer.json", JSON.stringify({ checks: [{ name: "x", command: "make test" }] }));
    const r = await d.call("git_check", {});
    expect(r.result.code).toBe("CHECK_FAILED");
    expect(r.result.message).toContain("command");
  });
});

describe("the branch a commit goes on", () => {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));

  it("is the unborn branch before the first commit, the branch after it, and none when HEAD is detached", async () => {
    git(ws.dir, "symbolic-ref", "HEAD", "refs/heads/trunk");
    git(ws.dir, "add", "a.txt");
    expect(await d.ok("git_commit", { message: "first" }, { approved: false })).toMatchObject({
      branch: "trunk",
      text: expect.stringContaining("would commit on trunk: 1 file"),
    });
    await d.ok("git_commit", { message: "first" });
    writeFile(ws.dir, "a.txt", "b\n");
    expect((await d.ok("git_commit", { message: "second", paths: ["a.txt"] }, { approved: false })).branch).toBe("trunk");
    git(ws.dir, "checkout", "-q", "--detach");
    expect(await d.ok("git_commit", { message: "second", paths: ["a.txt"] }, { approved: false })).toMatchObject({
      branch: null,
      text: expect.stringContaining("would commit on detached HEAD"),
    });
  });
});
