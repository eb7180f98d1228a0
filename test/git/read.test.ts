import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, git, repoWithRemote, writeFile } from "./fixture.js";

describe("git read-only tools", () => {
  let repo: ReturnType<typeof repoWithRemote>;
  let d: DaemonClient;
  let first: string;
  let second: string;

  beforeAll(async () => {
    repo = repoWithRemote();
    first = git(repo.dir, "rev-parse", "HEAD").trim();
    second = commitFile(repo.dir, "a.txt", "one\nTWO\nthree\n", "capitalise two");
    git(repo.dir, "checkout", "-q", "-b", "feature");
    git(repo.dir, "checkout", "-q", "main");
    writeFile(repo.dir, "b.txt", "bee\nbuzz\n"); // unstaged
    writeFile(repo.dir, "c.txt", "new\n");
    git(repo.dir, "add", "c.txt"); // staged
    writeFile(repo.dir, "d.txt", "untracked\n");
    d = await startDaemon(repo.dir);
  });
  afterAll(async () => {
    await d.close();
    repo.cleanup();
  });

  it("git_status reports branch, upstream, staged, unstaged and untracked files", async () => {
    const r = await d.ok("git_status");
    expect(r.branch).toBe("main");
    expect(r.upstream).toBe("origin/main");
    expect([r.ahead, r.behind]).toEqual([1, 0]);
    expect(r.staged).toEqual([{ path: "c.txt", xy: "A." }]);
    expect(r.unstaged).toEqual([{ path: "b.txt", xy: ".M" }]);
    expect(r.untracked).toEqual(["d.txt"]);
    expect(r.clean).toBe(false);
    expect(r.text).toContain("On main (upstream origin/main, ahead 1, behind 0)");
    expect(r.text).toContain("staged: A c.txt");
  });

  it("git_diff shows the worktree, the index with staged, against a ref, and one path", async () => {
    const work = await d.ok("git_diff");
    expect(work.files).toEqual([{ path: "b.txt", added: 1, deleted: 0 }]);
    expect(work.diff).toContain("+buzz");
    const staged = await d.ok("git_diff", { staged: true });
    expect(staged.files.map((f: any) => f.path)).toEqual(["c.txt"]);
    const vsFirst = await d.ok("git_diff", { ref: first, path: "a.txt" });
    expect(vsFirst.diff).toContain("-two");
    expect(vsFirst.diff).toContain("+TWO");
    expect(vsFirst.files.map((f: any) => f.path)).toEqual(["a.txt"]);
  });

  it("git_log lists commits newest first, limits, and filters by path", async () => {
    const all = await d.ok("git_log");
    expect(all.commits.map((c: any) => c.sha)).toEqual([second, first]);
    expect(all.text.split("\n")[0]).toMatch(/^[0-9a-f]{7} \d{4}-\d\d-\d\d Test: capitalise two$/);
    const one = await d.ok("git_log", { limit: 1 });
    expect(one.commits).toHaveLength(1);
    expect(one.more).toBe(true);
    expect(one.text).toContain("raise limit");
    expect((await d.call("git_log", { ref: "no-such-branch" })).result.code).toBe("NOT_FOUND");
    expect((await d.call("git_log", { ref: "main..no-such" })).result.code).toBe("NOT_FOUND");
    expect((await d.ok("git_log", { ref: `${first}..main` })).commits.map((c: any) => c.sha)).toEqual([second]);
    const b = await d.ok("git_log", { path: "b.txt" });
    expect(b.commits.map((c: any) => c.sha)).toEqual([first]);
  });

  it("git_show shows a commit with its patch, or a file at a ref", async () => {
    const c = await d.ok("git_show", { ref: "HEAD" });
    expect(c.sha).toBe(second);
    expect(c.message).toBe("capitalise two");
    expect(c.files).toEqual([{ path: "a.txt", added: 1, deleted: 1 }]);
    expect(c.diff).toContain("+TWO");
    const root = await d.ok("git_show", { ref: first });
    expect(root.files.map((f: any) => f.path).sort()).toEqual(["a.txt", "b.txt"]);
    const f = await d.ok("git_show", { ref: first, path: "a.txt" });
    expect(f.content).toBe("one\ntwo\nthree\n");
    const missing = await d.call("git_show", { ref: first, path: "c.txt" });
    expect(missing.result.code).toBe("NOT_FOUND");
    writeFile(repo.dir, "bin.dat", Buffer.from([0x89, 0x50, 0x00, 0x01]));
    git(repo.dir, "add", "bin.dat");
    git(repo.dir, "commit", "-q", "-m", "binary", "--", "bin.dat");
    expect((await d.call("git_show", { ref: "HEAD", path: "bin.dat" })).result.code).toBe("BINARY_FILE");
    git(repo.dir, "reset", "-q", "--soft", "HEAD~1");
    git(repo.dir, "rm", "-q", "--cached", "bin.dat");
    rmSync(path.join(repo.dir, "bin.dat"));
    const noRef = await d.call("git_show", { ref: "no-such-branch" });
    expect(noRef.result.code).toBe("NOT_FOUND");
  });

  it("git_branch lists local and remote branches with the current one and tracking", async () => {
    const r = await d.ok("git_branch");
    expect(r.current).toBe("main");
    const main = r.branches.find((b: any) => b.name === "main");
    expect(main).toMatchObject({ current: true, upstream: "origin/main", track: "ahead 1", remote: false });
    expect(r.branches.map((b: any) => b.name)).toEqual(["feature", "main", "origin/main"]);
    expect(r.text).toContain("* main");
  });

  it("refuses refs and paths that look like options, and paths outside the root or in .git", async () => {
    for (const [tool, params, field] of [
      ["git_log", { ref: "--output=/tmp/x" }, "ref"],
      ["git_diff", { ref: "-p" }, "ref"],
      ["git_show", { ref: "--upload-pack=x" }, "ref"],
      ["git_diff", { path: "--cached" }, "path"],
    ] as const) {
      const r = await d.call(tool, params);
      expect(r.result.code).toBe("INVALID_PARAMS");
      expect(r.result.message).toContain(field);
    }
    expect((await d.call("git_diff", { path: "../outside" })).result.code).toBe("PATH_OUTSIDE_ROOT");
    // A path that is nowhere is NOT_FOUND, not "no changes"; a deleted tracked file still diffs.
    const nope = await d.call("git_diff", { path: "nope.txt" });
    expect(nope.result.code).toBe("NOT_FOUND");
    expect(nope.result.message).toContain("nope.txt");
    expect((await d.call("git_diff", { path: "nope.txt", ref: "HEAD" })).result.code).toBe("NOT_FOUND");
    rmSync(path.join(repo.dir, "a.txt"));
    try {
      expect((await d.ok("git_diff", { path: "a.txt" })).files).toEqual([{ path: "a.txt", added: 0, deleted: 3 }]);
    } finally {
      git(repo.dir, "checkout", "--", "a.txt");
    }
    expect((await d.call("git_log", { path: ".git/config" })).result.code).toBe("PATH_FORBIDDEN");
  });

  it("info reports git's version and that the root is a repository", async () => {
    const r = await d.ok("info", { tool_id: "git_status" });
    expect(r.state).toMatchObject({ git: true, repository: true });
    expect(r.state.version).toMatch(/^\d+\.\d+/);
  });
});

describe("git tools outside a repository", () => {
  it("answer NOT_A_REPOSITORY, and info says so", async () => {
    const ws = tmpWorkspace({ files: { "x.txt": "x\n" } });
    const d = await startDaemon(ws.dir, [], { GIT_CEILING_DIRECTORIES: ws.dir.split("/").slice(0, -1).join("/") });
    try {
      for (const tool of ["git_status", "git_log", "git_branch", "git_diff"]) {
        const r = await d.call(tool, {});
        expect(r.result.code, tool).toBe("NOT_A_REPOSITORY");
        expect(r.result.message).toContain("not inside a git repository");
      }
      expect((await d.ok("info", { tool_id: "git_status" })).state).toMatchObject({ git: true, repository: false });
      // Then it becomes a repository with no commits yet: the tools answer, they do not fail.
      git(ws.dir, "init", "-q", "-b", "main");
      expect((await d.ok("git_log")).text).toBe("no commits yet");
      expect((await d.ok("git_status")).text).toBe("On main (no upstream), no commits yet\nuntracked: x.txt");
      expect((await d.ok("git_branch")).branches).toEqual([]);
    } finally {
      await d.close();
      ws.cleanup();
    }
  });
});

describe("long output", () => {
  it("a diff over the cap is cut at a line with a note saying how to narrow; the stat stays whole", async () => {
    const ws = tmpWorkspace({ git: true, files: { "big.txt": Array.from({ length: 3000 }, (_, i) => `line ${i}`).join("\n") + "\n", "small.txt": "s\n" } });
    git(ws.dir, "add", "-A");
    git(ws.dir, "commit", "-q", "-m", "big");
    writeFile(ws.dir, "big.txt", Array.from({ length: 3000 }, (_, i) => `changed line ${i}`).join("\n") + "\n");
    writeFile(ws.dir, "small.txt", "t\n");
    const d = await startDaemon(ws.dir);
    try {
      const r = await d.ok("git_diff");
      expect(r.truncated).toBe(true);
      expect(r.files.map((f: any) => f.path)).toEqual(["big.txt", "small.txt"]);
      expect(r.diff).toMatch(/\n… \[diff cut at 40000 characters of \d+; pass path to see one file/);
      expect(r.diff.length).toBeLessThan(41_000);
      const one = await d.ok("git_diff", { path: "small.txt" });
      expect(one.truncated).toBe(false);
      expect(one.diff).toContain("+t");
    } finally {
      await d.close();
      ws.cleanup();
    }
  });
});
