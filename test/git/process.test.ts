import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { Supervisor } from "../../src/platform/supervisor.js";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { bareRemote, git, hook, remoteRefs, writeFile } from "./fixture.js";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits for a file a child process writes; a condition, not a timing assertion. */
async function waitForFile(file: string): Promise<string> {
  for (let i = 0; i < 500; i++) {
    if (existsSync(file)) {
      const text = readFileSync(file, "utf8");
      if (text.endsWith("\n")) return text.trim();
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${file} never appeared`);
}

async function waitDead(pid: number): Promise<boolean> {
  for (let i = 0; i < 250; i++) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

const supervisor = new Supervisor();
afterAll(() => supervisor.stop());
type Opts = { cwd: string; timeoutMs?: number; group?: boolean; maxBytes?: number };
const runProcess = (cmd: string, args: string[], o: Opts) =>
  supervisor.run({ cmd, args, cwd: o.cwd, group: o.group }, { timeoutMs: o.timeoutMs, maxBytes: o.maxBytes });

describe("the process runner", () => {
  it("a timeout kills the whole process group, grandchildren included", async () => {
    const ws = tmpWorkspace();
    try {
      const r = await runProcess("sh", ["-c", "sleep 30 & echo $! > child.pid; wait"], { cwd: ws.dir, timeoutMs: 300 });
      expect(r.timedOut).toBe(true);
      const pid = Number(readFileSync(path.join(ws.dir, "child.pid"), "utf8"));
      expect(await waitDead(pid)).toBe(true);
    } finally {
      ws.cleanup();
    }
  });

  it("a command run without a group of its own is killed on timeout too", async () => {
    const r = await runProcess("sleep", ["30"], { cwd: process.cwd(), timeoutMs: 200, group: false });
    expect(r.timedOut).toBe(true);
  });

  it("stdin is closed, so a command waiting for input ends at once instead of hanging", async () => {
    const r = await runProcess("cat", [], { cwd: process.cwd(), timeoutMs: 20_000 });
    expect(r).toMatchObject({ code: 0, stdout: "", timedOut: false });
  });

  it("output over the cap is cut and flagged", async () => {
    const r = await runProcess("sh", ["-c", "head -c 5000 /dev/zero"], { cwd: process.cwd(), maxBytes: 1000 });
    expect(r.stdout.length).toBe(1000);
    expect(r.truncated).toBe(true);
  });
});

describe("a slow git call through the daemon", () => {
  let ws: ReturnType<typeof tmpWorkspace>;
  let d: DaemonClient;
  beforeAll(async () => {
    ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
    git(ws.dir, "add", "-A");
    git(ws.dir, "commit", "-q", "-m", "a");
    d = await startDaemon(ws.dir);
  });
  afterAll(async () => {
    await d.close();
    ws.cleanup();
  });

  it("does not block other calls, and cancel kills it (hook included) and changes nothing", async () => {
    const pidFile = path.join(ws.dir, ".git", "hook.pid");
    hook(ws.dir, "pre-commit", `echo $$ > "${pidFile}"\nsleep 60`);
    writeFile(ws.dir, "a.txt", "changed\n");
    git(ws.dir, "add", "a.txt");
    const head = git(ws.dir, "rev-parse", "HEAD");
    const slow = d.call("git_commit", { message: "slow" }, { id: "slow" });
    const hookPid = Number(await waitForFile(pidFile));
    expect(alive(hookPid)).toBe(true);
    // While the hook sleeps, other tools answer.
    expect((await d.ok("git_status")).staged).toEqual([{ path: "a.txt", xy: "M." }]);
    expect((await d.ok("list")).tools.length).toBeGreaterThan(0);
    expect((await d.ok("cancel", { call_id: "slow" })).cancelled).toBe(true);
    expect((await slow).result.code).toBe("CANCELLED");
    expect(await waitDead(hookPid)).toBe(true);
    expect(git(ws.dir, "rev-parse", "HEAD")).toBe(head);
    // git got SIGTERM, not SIGKILL: it removed its index.lock, so the next git call works.
    expect(existsSync(path.join(ws.dir, ".git", "index.lock"))).toBe(false);
    expect(git(ws.dir, "status", "--porcelain")).toBe("M  a.txt\n");
  });

  it("a push that has started changing the remote finishes: cancel answers false and the push lands", async () => {
    const remote = bareRemote();
    try {
      git(ws.dir, "remote", "add", "origin", remote.dir);
      const pidFile = path.join(ws.dir, ".git", "push-hook.pid");
      // The pre-push hook runs inside the push, after the tool committed to it; it waits for a file the test writes.
      const release = path.join(ws.dir, ".git", "release");
      hook(ws.dir, "pre-push", `echo $$ > "${pidFile}"\nwhile [ ! -e "${release}" ]; do sleep 0.05; done`);
      const push = d.call("git_push", {}, { id: "push" });
      await waitForFile(pidFile);
      expect((await d.ok("cancel", { call_id: "push" })).cancelled).toBe(false);
      writeFile(ws.dir, ".git/release", "go\n");
      const r = await push;
      expect(r.success).toBe(true);
      expect(remoteRefs(remote.dir)).toContain(git(ws.dir, "rev-parse", "HEAD").trim());
    } finally {
      remote.cleanup();
    }
  });
});

describe("the git runner's failures", () => {
  it("tells a missing root from a missing git", async () => {
    const { git: runGit } = await import("../../src/git/run.js");
    const ws = tmpWorkspace();
    ws.cleanup();
    await expect(runGit({ repo: { root: ws.dir, processes: supervisor } }, ["status"])).rejects.toMatchObject({ code: "NOT_FOUND" });
    const saved = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      await expect(runGit({ repo: { root: process.cwd(), processes: supervisor } }, ["status"])).rejects.toMatchObject({ code: "TOOL_MISSING" });
    } finally {
      process.env.PATH = saved;
    }
  });
});
