import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EventBus } from "../../src/platform/bus.js";
import { Supervisor } from "../../src/platform/supervisor.js";
import { Terminal } from "../../src/terminal/terminal.js";
import { Workspace } from "../../src/workspace.js";
import { processes, until, waitDead } from "../helpers/process.js";
import { tmpWorkspace } from "../helpers/tmp.js";

/** Live host processes under this test process whose command line is exactly `cmd`. */
const mine = (cmd: string) => processes().filter((p) => p.cmd === cmd && isDescendant(p.pid));
function isDescendant(pid: number): boolean {
  const all = new Map(processes().map((p) => [p.pid, p.ppid]));
  for (let p = all.get(pid); p !== undefined && p > 1; p = all.get(p)) if (p === process.pid) return true;
  return false;
}

const tmp = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
const state = mkdtempSync(path.join(os.tmpdir(), "tool-layer-state-"));
const supervisor = new Supervisor();
const ws = new Workspace({ root: tmp.dir }, supervisor, new EventBus(), () => undefined);
const terminal = new Terminal(ws, { stateDir: state, maxFileBytes: 200_000 });
const off = new Terminal(ws, { stateDir: state, sandbox: "off" });

beforeAll(() => terminal.ready());
afterAll(async () => {
  await terminal.dispose();
  await off.dispose();
  await supervisor.stop();
  tmp.cleanup();
  rmSync(state, { recursive: true, force: true });
});

describe("Terminal.runArgv: an argv through the terminal's runner", () => {
  test("runs the argv as it is (no shell), stdout and stderr in one output, with the output file", async () => {
    const r = await terminal.runArgv({ argv: ["sh", "-c", 'echo "$1"; echo err >&2; exit 3', "sh", "a > b; $(x)"], timeoutMs: 20_000 });
    expect(r).toMatchObject({ exit_code: 3, timed_out: false, output: "a > b; $(x)\nerr\n", truncated: false });
    expect(readFileSync(r.output_file, "utf8")).toBe("a > b; $(x)\nerr\n");
  });

  test("the same environment rules: secrets withheld, an empty HOME, no prompt; the call's env on top", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { EXA_API_KEY: "exa-value", GH_TOKEN: "gh-value", SOME_PASSWORD: "pw-value", PLAIN: "plain-value" });
    try {
      const r = await terminal.runArgv({ argv: ["sh", "-c", 'env; ls -A "$HOME" | wc -l'], env: { CI: "1" }, timeoutMs: 20_000 });
      expect(r.output).not.toMatch(/exa-value|gh-value|pw-value/);
      expect(r.output).toMatch(/^PLAIN=plain-value$/m);
      expect(r.output).toMatch(/^CI=1$/m);
      expect(r.output).toMatch(/^GIT_TERMINAL_PROMPT=0$/m);
      expect(r.output.trim().split("\n").at(-1)).toBe("0");
    } finally {
      process.env = saved;
    }
  });

  test("a timeout kills the whole tree and is a result, not an error", async () => {
    const r = await terminal.runArgv({ argv: ["sh", "-c", "sleep 1011 & echo started; wait"], timeoutMs: 1_500 });
    expect(r).toMatchObject({ timed_out: true, output: "started\n" });
    await until(() => mine("sleep 1011").length === 0, "the sleeper to be gone");
  });

  test("an abort kills the whole tree", async () => {
    const controller = new AbortController();
    const run = terminal.runArgv({ argv: ["sh", "-c", "sleep 1012 & wait"], timeoutMs: 60_000, signal: controller.signal });
    await until(() => mine("sleep 1012").length === 1, "the sleeper to start");
    const [pid] = mine("sleep 1012").map((p) => p.pid);
    controller.abort(new Error("stop it"));
    await expect(run).rejects.toThrow("stop it");
    await waitDead(pid);
  });

  test("a command whose output passes the file's limit is stopped, and says so; the file holds the limit, not a byte more", async () => {
    const r = await terminal.runArgv({ argv: ["yes"], timeoutMs: 60_000 });
    expect(r.output_limit_hit).toBe(true);
    expect(r.timed_out).toBe(false);
    expect(r.truncated).toBe(true);
    expect(r.output_bytes).toBe(200_000);
    expect(readFileSync(r.output_file, "utf8")).toBe("y\n".repeat(100_000));
  });

  test("a write through /dev/stdout adds to the output, never truncates it", async () => {
    const r = await terminal.runArgv({ argv: ["sh", "-c", "echo one; echo two > /dev/stdout; echo three"], timeoutMs: 20_000 });
    expect(r).toMatchObject({ exit_code: 0, output: "one\ntwo\nthree\n" });
  });

  test("a cwd outside the root, missing, or a file is refused before anything runs", async () => {
    await expect(terminal.runArgv({ argv: ["true"], cwd: "/etc", timeoutMs: 1000 })).rejects.toMatchObject({ code: "PATH_OUTSIDE_ROOT" });
    await expect(terminal.runArgv({ argv: ["true"], cwd: "nope", timeoutMs: 1000 })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(terminal.runArgv({ argv: ["true"], cwd: "a.txt", timeoutMs: 1000 })).rejects.toMatchObject({ code: "INVALID_PARAMS" });
    await expect(terminal.runArgv({ argv: [], timeoutMs: 1000 })).rejects.toMatchObject({ code: "INVALID_PARAMS" });
  });

  test("with the sandbox off: the real HOME, and what it left in its group dies when it exits", async () => {
    const r = await off.runArgv({ argv: ["sh", "-c", 'echo "$HOME"; sleep 1013 > /dev/null 2>&1 &'], timeoutMs: 20_000 });
    expect(r.output).toBe(`${os.homedir()}\n`);
    await until(() => mine("sleep 1013").length === 0, "the leftover to be gone");
  });
});

describe("a command's cgroup: joined while bwrap sets the sandbox up", () => {
  /** Forks up to 100 `sleep 30.MARK` (bounded: never a real fork bomb), reports how many started before the first failure. */
  const FORK_LOOP = [
    'const { spawn } = require("child_process"); const kids = []; let err = null;',
    "const done = () => { console.log(JSON.stringify({ started: kids.length, err })); for (const k of kids) k.kill('SIGKILL'); process.exit(0); };",
    "const next = (i) => { if (i >= 100 || err) return done(); const c = spawn('sleep', [process.env.MARK]);",
    "c.on('error', (e) => { err = e.code; next(i + 1); }); c.on('spawn', () => { kids.push(c); next(i + 1); }); };",
    "next(0);",
  ].join(" ");
  const limited = new Terminal(ws, { stateDir: state, limits: { pids: 24, memoryBytes: 2 ** 30 } });
  afterAll(() => limited.dispose());

  test("what the command forks is counted against its limit, in one command after another", async () => {
    const s = await limited.ready();
    if (!s.probe.available || !s.held.pids) return; // no sandbox or no pids controller here: nothing to hold
    for (const round of [1, 2]) {
      const mark = `30.${process.pid}${round}`;
      const r = await limited.runArgv({ argv: [process.execPath, "-e", FORK_LOOP], env: { MARK: mark }, timeoutMs: 60_000 });
      const report = JSON.parse(r.output.trim().split("\n").pop()!) as { started: number; err: string | null };
      expect(report.err).toBe("EAGAIN");
      expect(report.started).toBeGreaterThan(0);
      expect(report.started).toBeLessThan(24);
      await until(() => mine(`sleep ${mark}`).length === 0, "the sleepers to be gone");
    }
  });

  test("a timeout while the sandbox is still being set up is a timeout, not a failure to join", async () => {
    // 1 ms: the kill comes while bwrap still waits for its cgroups (or, on a loaded machine, just after).
    const r = await limited.runArgv({ argv: ["sh", "-c", "sleep 1014"], timeoutMs: 1 });
    expect(r).toMatchObject({ timed_out: true, output: "" });
    await until(() => mine("sleep 1014").length === 0, "nothing left");
  });
});

describe("plan: the shell check before anything", () => {
  test("a write from the shell is SHELL_WRITE_REFUSED; code hidden in the env is refused too", async () => {
    await expect(terminal.plan({ command: "echo x > a.txt" })).rejects.toMatchObject({ code: "SHELL_WRITE_REFUSED" });
    await expect(terminal.plan({ command: "ls", env: { BASH_ENV: "a.txt" } })).rejects.toMatchObject({ code: "INVALID_PARAMS" });
    await expect(terminal.plan({ command: "bash -s", stdin: "echo x > a.txt\n" })).rejects.toMatchObject({ code: "SHELL_WRITE_REFUSED" });
    const plan = await terminal.plan({ command: "cat a.txt | wc -l" });
    expect(plan.commands).toEqual(["cat a.txt", "wc -l"]);
    expect(plan.argv.slice(0, 3)).toEqual(["bwrap", "--ro-bind", "/"]);
    expect(plan.argv).toContain(path.join(tmp.dir, ".git"));
  });
});
