import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { commitFile, expectUnchanged, git, hook, otherClone, remoteRefs, repoWithRemote, writeFile } from "./fixture.js";

describe("git_push, git_fetch, git_pull, git_clone against real bare remotes", () => {
  let repo: ReturnType<typeof repoWithRemote>;
  let other: ReturnType<typeof otherClone>;
  let d: DaemonClient;

  beforeAll(async () => {
    repo = repoWithRemote();
    other = otherClone(repo.remote);
    d = await startDaemon(repo.dir);
  });
  afterAll(async () => {
    await d.close();
    other.cleanup();
    repo.cleanup();
  });

  it("git_push previews with the outgoing commits and changes nothing, locally or on the remote; then pushes", async () => {
    const sha = commitFile(repo.dir, "a.txt", "pushed\n", "to push");
    const preview = await expectUnchanged([repo.dir], [repo.remote], () => d.ok("git_push", {}, { approved: false }));
    expect(preview.commits.map((c: any) => c.sha)).toEqual([sha]);
    expect(preview.refs).toEqual([expect.objectContaining({ flag: " ", to: "refs/heads/main" })]);
    expect(preview.text).toContain("would push main to origin/main");
    const r = await d.ok("git_push");
    expect(r.text).toContain("pushed main to origin/main: 1 commit");
    expect(git(repo.remote, "rev-parse", "main").trim()).toBe(sha);
  });

  it("git_push finds the branch when a tag has its name (the branch is main, not heads/main)", async () => {
    const sha = commitFile(repo.dir, "a.txt", "tagged alike\n", "beside a tag named main");
    git(repo.dir, "tag", "main");
    try {
      const preview = await d.ok("git_push", {}, { approved: false });
      expect(preview.commits.map((c: any) => c.sha)).toEqual([sha]);
      expect(preview.text).toContain("would push main to origin/main");
    } finally {
      git(repo.dir, "tag", "-d", "main");
    }
  });

  it("a push behind the remote is REJECTED with a sentence saying to pull first", async () => {
    git(other.dir, "pull", "-q");
    commitFile(other.dir, "b.txt", "theirs\n", "their commit");
    git(other.dir, "push", "-q");
    commitFile(repo.dir, "a.txt", "ours\n", "our commit");
    const preview = await d.call("git_push", {}, { approved: false });
    expect(preview.result.code).toBe("REJECTED");
    const before = remoteRefs(repo.remote);
    const r = await d.call("git_push", {});
    expect(r.result.code).toBe("REJECTED");
    expect(r.result.message).toMatch(/Pull first \(git_pull\)/);
    expect(remoteRefs(repo.remote)).toBe(before);
  });

  it("git_fetch previews without moving refs, then updates the remote-tracking branch", async () => {
    const theirs = git(repo.remote, "rev-parse", "main").trim();
    const preview = await expectUnchanged([repo.dir], [repo.remote], () => d.ok("git_fetch", {}, { approved: false }));
    expect(preview.text).toContain("main");
    expect(preview.text).toContain("origin/main");
    const r = await d.ok("git_fetch");
    expect(r.updates).toEqual([expect.objectContaining({ ref: "origin/main", new: theirs })]);
    expect(git(repo.dir, "rev-parse", "origin/main").trim()).toBe(theirs);
  });

  it("force pushes with lease: refused when someone pushed after our fetch; after a fetch it goes, backing up their tip", async () => {
    // Someone pushes after our fetch: our lease (what we last fetched) no longer holds.
    commitFile(other.dir, "b.txt", "theirs again\n", "their second commit");
    git(other.dir, "push", "-q");
    const theirTip = git(repo.remote, "rev-parse", "main").trim();
    const before = remoteRefs(repo.remote);
    const refused = await d.call("git_push", { force: true });
    expect(refused.result.code).toBe("REJECTED");
    expect(refused.result.message).toContain("changed since your last fetch");
    expect(remoteRefs(repo.remote)).toBe(before);

    await d.ok("git_fetch");
    const preview = await expectUnchanged([repo.dir], [repo.remote], () => d.ok("git_push", { force: true }, { approved: false }));
    expect(preview.refs[0].flag).toBe("+");
    const r = await d.ok("git_push", { force: true });
    expect(git(repo.remote, "rev-parse", "main").trim()).toBe(git(repo.dir, "rev-parse", "HEAD").trim());
    // Their commits are not lost: the backup ref holds the old remote tip.
    expect(r.backup.ref).toMatch(/^refs\/tool-layer\/backup\/\d{8}T\d+Z-push-force$/);
    expect(git(repo.dir, "rev-parse", r.backup.ref).trim()).toBe(theirTip);
    expect(git(repo.dir, "log", "--format=%s", r.backup.ref)).toContain("their second commit");
  });

  it("git_pull previews incoming commits and predicted conflicts without moving any ref; then merges", async () => {
    git(other.dir, "fetch", "-q");
    git(other.dir, "reset", "-q", "--hard", "origin/main");
    commitFile(other.dir, "a.txt", "their a\n", "their a");
    commitFile(other.dir, "new-from-them.txt", "x\n", "their file");
    git(other.dir, "push", "-q");
    commitFile(repo.dir, "a.txt", "our a\n", "our a");
    const preview = await expectUnchanged([repo.dir], [repo.remote], () => d.ok("git_pull", {}, { approved: false }));
    expect(preview.incoming.map((c: any) => c.subject)).toEqual(["their file", "their a"]);
    expect(preview.outgoing.map((c: any) => c.subject)).toEqual(["our a"]);
    expect(preview.fast_forward).toBe(false);
    expect(preview.conflicts).toEqual(["a.txt"]);
    expect(preview.text).toContain("merge would CONFLICT in: a.txt");

    const rebasePreview = await expectUnchanged([repo.dir], [repo.remote], () => d.ok("git_pull", { rebase: true }, { approved: false }));
    expect(rebasePreview.replay.map((s: any) => [s.subject, s.conflicts])).toEqual([["our a", ["a.txt"]]]);

    // A rebase pull with a conflict stops there (SPEC 9); abandoning it puts the branch back as it was.
    const head = git(repo.dir, "rev-parse", "HEAD");
    const rebased = await d.call("git_pull", { rebase: true });
    expect(rebased.result.code).toBe("CONFLICT");
    expect(rebased.result).toMatchObject({ files: ["a.txt"], in_progress: "rebase" });
    expect(rebased.result.message).toContain(`git_rebase {action:"abort"}`);
    await d.ok("git_rebase", { action: "abort" });
    expect(git(repo.dir, "rev-parse", "HEAD")).toBe(head);
    expect(git(repo.dir, "status", "--porcelain")).toBe("");

    // Drop our conflicting commit: the pull is then a fast-forward.
    git(repo.dir, "reset", "-q", "--hard", "HEAD~1");
    // A local change to a file the pull brings: refused before anything is touched, preview and real alike.
    writeFile(repo.dir, "a.txt", "uncommitted\n");
    for (const approved of [false, true]) {
      const blocked = await expectUnchanged([repo.dir], [repo.remote], () => d.call("git_pull", {}, { approved }));
      expect(blocked.result).toMatchObject({ code: "CONFLICT", files: ["a.txt"] });
    }
    git(repo.dir, "checkout", "--", "a.txt");
    const ff = await d.ok("git_pull", {}, { approved: false });
    expect(ff.fast_forward).toBe(true);
    const r = await d.ok("git_pull");
    expect(r.head).toBe(git(repo.remote, "rev-parse", "main").trim());
    expect(existsSync(path.join(repo.dir, "new-from-them.txt"))).toBe(true);
  });

  it("an approved pull that merges says what it did, not what it would do", async () => {
    commitFile(other.dir, "theirs-clean.txt", "theirs\n", "their clean change");
    git(other.dir, "push", "-q");
    commitFile(repo.dir, "ours-clean.txt", "ours\n", "our clean change");
    const preview = await d.ok("git_pull", {}, { approved: false });
    expect(preview.text).toContain("merge would be clean");
    const r = await d.ok("git_pull");
    expect(r.text).toContain("merged without conflicts");
    expect(r.text).not.toMatch(/would/);
    expect(git(repo.dir, "rev-list", "--parents", "-n1", "HEAD").trim().split(" ")).toHaveLength(3);
  });

  it("a pull that conflicts leaves the merge in progress and says how to finish or abandon it", async () => {
    commitFile(other.dir, "b.txt", "their b\n", "their b");
    git(other.dir, "push", "-q");
    commitFile(repo.dir, "b.txt", "our b\n", "our b");
    const r = await d.call("git_pull", {});
    expect(r.result.code).toBe("CONFLICT");
    expect(r.result.files).toEqual(["b.txt"]);
    expect(r.result.message).toContain("git_conflict_finalize");
    expect(r.result.message).toContain("git_merge {abort:true}");
    expect((await d.ok("git_status")).operation).toBe("merge");
    await d.ok("git_merge", { abort: true });
    expect((await d.ok("git_status")).operation).toBe(null);
  });

  it("a failing push check blocks the push and the remote is untouched; the preview lists the check and runs nothing", async () => {
    git(repo.dir, "reset", "-q", "--hard", "origin/main");
    commitFile(repo.dir, "c.txt", "check me\n", "to check");
    writeFile(
      repo.dir,
      ".tool-layer.json",
      JSON.stringify({ checks: [{ name: "e2e", command: ["sh", "-c", "echo ran > e2e-ran; echo 3 e2e tests failed; exit 2"], on: ["push"] }] }),
    );
    const before = remoteRefs(repo.remote);
    const preview = await d.ok("git_push", {}, { approved: false });
    expect(preview.checks).toEqual([{ name: "e2e", command: ["sh", "-c", "echo ran > e2e-ran; echo 3 e2e tests failed; exit 2"], timeout_ms: 120_000 }]);
    expect(existsSync(path.join(repo.dir, "e2e-ran"))).toBe(false);
    const r = await d.call("git_push", {});
    expect(r.result.code).toBe("CHECK_FAILED");
    expect(r.result.message).toContain("check e2e: failed (exit 2)");
    expect(r.result.message).toContain("3 e2e tests failed");
    expect(remoteRefs(repo.remote)).toBe(before);
    rmSync(path.join(repo.dir, ".tool-layer.json"));
    rmSync(path.join(repo.dir, "e2e-ran"));
  });

  it("a pre-push hook failure is HOOK_FAILED, and the preview does not run the hook", async () => {
    git(repo.dir, "reset", "-q", "--hard", "origin/main");
    await d.ok("git_pull");
    commitFile(repo.dir, "c.txt", "c\n", "c");
    hook(repo.dir, "pre-push", 'echo ran > pre-push-ran\necho "pre-push says no" >&2\nexit 1');
    const preview = await d.ok("git_push", {}, { approved: false });
    expect(existsSync(path.join(repo.dir, "pre-push-ran"))).toBe(false);
    expect(preview.hooks).toEqual([{ hook: "pre-push", path: ".git/hooks/pre-push", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    const r = await d.call("git_push", {});
    expect(r.result.code).toBe("HOOK_FAILED");
    expect(r.result.message).toContain("pre-push says no");
    git(repo.dir, "clean", "-qf");
    // A passing hook: the approved push names the hook it ran, with the hash of what ran.
    hook(repo.dir, "pre-push", "echo ran > pre-push-ran\nexit 0");
    const planned = (await d.ok("git_push", {}, { approved: false })).hooks;
    const pushed = await d.ok("git_push", {});
    expect(pushed.hooks).toEqual(planned);
    expect(pushed.text).toContain("hook pre-push ran: .git/hooks/pre-push");
    expect(existsSync(path.join(repo.dir, "pre-push-ran"))).toBe(true);
    git(repo.dir, "clean", "-qf");
    hook(repo.dir, "pre-push", 'echo "pre-push says no" >&2\nexit 1');
  });

  it("git_clone previews via ls-remote and clones a repository inside the root; an existing folder is ALREADY_EXISTS", async () => {
    // A bare repository inside the workspace (as a file://-free local path), standing for one the workspace holds.
    execFileSync("git", ["clone", "-q", "--bare", repo.remote, path.join(repo.dir, "mirror.git")]);
    const preview = await expectUnchanged([repo.dir], [repo.remote], () => d.ok("git_clone", { url: "mirror.git", path: "vendor/copy" }, { approved: false }));
    expect(preview.default_branch).toBe("main");
    expect(preview.branches).toEqual(["main"]);
    expect(existsSync(path.join(repo.dir, "vendor"))).toBe(false);
    const r = await d.ok("git_clone", { url: "mirror.git", path: "vendor/copy" });
    expect(r.path).toBe("vendor/copy");
    expect(git(path.join(repo.dir, "vendor/copy"), "rev-parse", "HEAD").trim()).toBe(git(repo.remote, "rev-parse", "main").trim());
    expect((await d.ok("git_clone", { url: `file://${path.join(repo.dir, "mirror.git")}`, path: "vendor/copy2" })).path).toBe("vendor/copy2");
    expect((await d.call("git_clone", { url: "mirror.git", path: "vendor/copy" })).result.code).toBe("ALREADY_EXISTS");
    expect((await d.call("git_clone", { url: "mirror.git", path: "../escape" })).result.code).toBe("PATH_OUTSIDE_ROOT");
    rmSync(path.join(repo.dir, "vendor"), { recursive: true, force: true });
    rmSync(path.join(repo.dir, "mirror.git"), { recursive: true, force: true });
  });

  it("git_clone of a repository outside the root is PATH_OUTSIDE_ROOT, in the preview too; transport helpers and plain http are refused at once", async () => {
    const outside = path.relative(repo.dir, repo.remote);
    expect(outside.startsWith("..")).toBe(true);
    for (const url of [outside, repo.remote, `file://${repo.remote}`]) {
      for (const approved of [false, true]) {
        const r = await expectUnchanged([repo.dir], [repo.remote], () => d.call("git_clone", { url, path: "stolen" }, { approved }));
        expect(r.result.code, `${url} approved:${approved}`).toBe("PATH_OUTSIDE_ROOT");
      }
    }
    // A repository inside the root whose git data or objects live outside it is outside too.
    writeFile(repo.dir, "linked/.git", `gitdir: ${repo.remote}\n`);
    execFileSync("git", ["init", "-q", "--bare", path.join(repo.dir, "borrow.git")]);
    writeFile(repo.dir, "borrow.git/objects/info/alternates", `${path.join(repo.remote, "objects")}\n`);
    for (const url of ["linked", "borrow.git"])
      expect((await d.call("git_clone", { url, path: "stolen" }, { approved: false })).result.code, url).toBe("PATH_OUTSIDE_ROOT");
    // fd:: would wait on a descriptor for a minute, ext:: runs a command: neither starts.
    for (const url of ["fd::3", "ext::sh -c touch% pwned", "http://127.0.0.1:9/x.git", "file://elsewhere/x"]) {
      const r = await d.call("git_clone", { url, path: "stolen" }, { approved: false });
      expect(r.result.code, url).toBe("INVALID_PARAMS");
      expect((await d.call("git_clone", { url, path: "stolen" })).result.code, url).toBe("INVALID_PARAMS");
    }
    expect(existsSync(path.join(repo.dir, "stolen"))).toBe(false);
    expect(existsSync(path.join(repo.dir, "pwned"))).toBe(false);
    rmSync(path.join(repo.dir, "linked"), { recursive: true, force: true });
    rmSync(path.join(repo.dir, "borrow.git"), { recursive: true, force: true });
  });

  it("git_checkout of a branch only the remote has creates the tracking branch", async () => {
    git(other.dir, "checkout", "-q", "-b", "their-feature");
    commitFile(other.dir, "f.txt", "feature\n", "feature");
    git(other.dir, "push", "-q", "-u", "origin", "their-feature");
    git(other.dir, "checkout", "-q", "main");
    await d.ok("git_fetch");
    const preview = await expectUnchanged([repo.dir], [], () => d.ok("git_checkout", { ref: "their-feature" }, { approved: false }));
    expect(preview.files).toContain("f.txt");
    const r = await d.ok("git_checkout", { ref: "their-feature" });
    expect(r.branch).toBe("their-feature");
    expect(git(repo.dir, "rev-parse", "--abbrev-ref", "their-feature@{upstream}").trim()).toBe("origin/their-feature");
    await d.ok("git_checkout", { ref: "main" });
  });

  it("refuses options smuggled in as url, remote or branch; nothing runs", async () => {
    for (const [tool, params] of [
      ["git_clone", { url: "--upload-pack=touch /tmp/pwned", path: "x" }],
      ["git_clone", { url: "-u", path: "x" }],
      ["git_push", { remote: "--exec=touch pwned" }],
      ["git_push", { branch: "--delete" }],
      ["git_fetch", { remote: "--upload-pack=touch pwned" }],
      ["git_pull", { branch: "-q" }],
      ["git_clone", { url: "ok", path: "--template=x" }],
    ] as const) {
      const r = await d.call(tool, params);
      expect(r.result.code, `${tool} ${JSON.stringify(params)}`).toBe("INVALID_PARAMS");
    }
    expect(existsSync(path.join(repo.dir, "pwned"))).toBe(false);
    for (const branch of ["main^", "main:refs/heads/other", "a..b"]) {
      expect((await d.call("git_push", { branch })).result.code, branch).toBe("INVALID_PARAMS");
      expect((await d.call("git_pull", { branch }, { approved: false })).result.code, branch).toBe("INVALID_PARAMS");
    }
  });

  it("an unreachable remote fails fast with no prompt", async () => {
    git(repo.dir, "remote", "add", "dead", "http://127.0.0.1:9/x.git");
    git(repo.dir, "remote", "add", "gone", "/nonexistent/repo.git");
    for (const remote of ["dead", "gone"]) {
      const f = await d.call("git_fetch", { remote });
      expect(f.result.code, remote).toBe("GIT_FAILED");
      const p = await d.call("git_push", { remote }, { approved: false });
      expect(p.result.code, remote).toBe("GIT_FAILED");
      // The failing pre-push hook of the previous test is still there: a dead remote must still read as GIT_FAILED.
      const real = await d.call("git_push", { remote });
      expect(real.result.code, remote).toBe("GIT_FAILED");
    }
    const c = await d.call("git_clone", { url: "https://127.0.0.1:9/x.git", path: "nothere" }, { approved: false });
    expect(c.result.code).toBe("GIT_FAILED");
    expect(c.result.message).toMatch(/127\.0\.0\.1|connect/i);
    const missing = await d.call("git_push", { remote: "nope" });
    expect(missing.result.code).toBe("NOT_FOUND");
  });
});
