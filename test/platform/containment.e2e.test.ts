/**
 * SPEC 1 through the real daemon: a child's grandchild that starts a session of its own (setsid) leaves the child's
 * process group, so a group kill misses it; it must still be gone within a second of the daemon, however it ends.
 * Each grandchild is a `sleep` with a number no other process uses, found in /proc.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { alive, processes, until } from "../helpers/process.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";
import { FIXTURE_SERVER } from "../mcp/helpers.js";

/** SPEC 1: none is still running a second after the daemon is gone. */
const SPEC_BOUND_MS = 1_000;
/** A clean shutdown, bounded: the calls' drain, the servers' exit grace and their bounded wait, the supervisor's sweep. */
const SHUTDOWN_BOUND_MS = 30_000;
/** pyright, the MCP server and git all start on a loaded machine. */
const SLOW_MS = 120_000;

let marks = 0;
/** A `sleep` argument no other process on the machine has. */
const mark = () => `${3000 + (process.pid % 1000)}.${Date.now() % 100_000}${++marks}`;

/** The processes running `sleep MARK` (a zombie has no command line: it is gone). */
const sleeping = (sleepArg: string) => processes().filter((p) => p.cmd === `sleep ${sleepArg}`);

/** Waits for `sleep MARK` to run, and checks it left its parent's process group (setsid: it leads one of its own). */
async function escaped(sleepArg: string, boundMs = 60_000): Promise<void> {
  await until(() => sleeping(sleepArg).length > 0, `sleep ${sleepArg} to start`, boundMs);
  for (const p of sleeping(sleepArg)) expect(p.pgid, `sleep ${sleepArg} leads a group of its own`).toBe(p.pid);
}

/** Polls /proc until no `sleep MARK` runs or the bound passes; returns what still runs, by name. */
async function survivors(marks: Record<string, string>, boundMs = SPEC_BOUND_MS): Promise<string[]> {
  const left = () => Object.entries(marks).flatMap(([what, m]) => sleeping(m).map((p) => `${what} (pid ${p.pid})`));
  await until(() => left().length === 0, "the grandchildren to end", boundMs).catch(() => undefined);
  return left();
}

/** What a failing run left behind is not left running on the machine. */
function killLeft(marks: Record<string, string>): void {
  for (const m of Object.values(marks)) for (const p of sleeping(m)) process.kill(p.pid, "SIGKILL");
}

/** A folder with a `python3` that starts `sleep MARK` in a new session, then runs the real python3 (or `then`). */
function fakePython(sleepArg: string, then?: string) {
  const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-fake-python-"));
  const real = execFileSync("sh", ["-c", "command -v python3"], { encoding: "utf8" }).trim();
  const script = `#!/bin/sh\nsetsid sleep ${sleepArg} </dev/null >/dev/null 2>&1 &\n${then ?? `exec "${real}" "$@"`}\n`;
  writeFileSync(path.join(dir, "python3"), script);
  chmodSync(path.join(dir, "python3"), 0o755);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A repository whose pre-commit hook starts `sleep MARK` in a new session (and then waits, or lets the commit go on);
 * an MCP config with the test server; a Python file, so a call starts pyright (which runs `python3` from PATH to learn
 * its search paths).
 */
function setUp(marks: { hook: string; python: string }, hookWaits = true) {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n", "main.py": "x: int = 1\n" } });
  git(ws.dir, "add", "-A");
  git(ws.dir, "commit", "-q", "-m", "initial");
  // A hook that ends at once first waits until its grandchild is in a session of its own: the group kill that follows
  // the hook's end (what it left in its group dies with it) would otherwise take a grandchild not yet past setsid.
  const escapedMark = path.join(ws.dir, ".git", "hook-grandchild-escaped");
  const grandchild = `setsid sh -c 'touch "$0"; exec sleep ${marks.hook}' "${escapedMark}" </dev/null >/dev/null 2>&1 &`;
  // Bounded (10 s): a grandchild that never gets there fails the commit (HOOK_FAILED) instead of hanging the test.
  const waitEscaped = `i=0; while [ ! -e "${escapedMark}" ]; do i=$((i+1)); [ $i -gt 1000 ] && exit 1; sleep 0.01; done`;
  const end = hookWaits ? "exec sleep 60" : `${waitEscaped}\nexit 0`;
  writeFileSync(path.join(ws.dir, ".git", "hooks", "pre-commit"), `#!/bin/sh\n${grandchild}\n${end}\n`, { mode: 0o755 });
  writeFileSync(path.join(ws.dir, "a.txt"), "changed\n");
  git(ws.dir, "add", "a.txt");
  const state = mkdtempSync(path.join(tmpdir(), "tool-layer-state-"));
  const config = path.join(state, "servers.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { test: { command: process.execPath, args: [FIXTURE_SERVER] } } }));
  const python = fakePython(marks.python);
  return {
    ws,
    args: ["--mcp-config", config],
    env: { XDG_STATE_HOME: state, PATH: `${python.dir}${path.delimiter}${process.env.PATH}` },
    cleanup: () => {
      ws.cleanup();
      python.cleanup();
      rmSync(state, { recursive: true, force: true });
    },
  };
}

const mcpReady = (d: DaemonClient) => d.waitFor((l) => l.event === "tools.changed" && l.data.added.includes("test_escape"), 30_000);

describe("a setsid grandchild does not outlive the daemon (SPEC 1)", () => {
  it(
    "SIGKILL of the daemon: an MCP server's, a language server's, a hook's and a terminal job's grandchildren are gone within a second",
    async () => {
      const m = { mcp: mark(), python: mark(), hook: mark(), job: mark() };
      const s = setUp(m);
      const d = await startDaemon(s.ws.dir, [...s.args, "--lsp-sandbox", "off"], s.env);
      try {
        await mcpReady(d);
        void d.call("git_commit", { message: "hook" }, { id: "commit" }); // pending while the hook waits
        void d.call("lsp_diagnostics", { path: "main.py", wait_ms: 1000 }, { id: "lsp" });
        await d.ok("terminal_run", { command: `setsid sleep ${m.job} </dev/null >/dev/null 2>&1 & sleep 60`, background: true });
        expect((await d.ok("test_escape", { seconds: m.mcp })).text).toMatch(/^\d+$/);
        for (const x of Object.values(m)) await escaped(x);
        d.child.kill("SIGKILL");
        await d.exited;
        expect(await survivors(m)).toEqual([]);
      } finally {
        if (alive(d.child.pid!)) d.child.kill("SIGKILL");
        killLeft(m);
        s.cleanup();
      }
    },
    SLOW_MS,
  );

  it(
    "SIGKILL of the daemon: a terminal job's grandchild outside the sandbox (--terminal-sandbox off) is gone within a second",
    async () => {
      const ws = tmpWorkspace({ files: { "a.txt": "a\n" } });
      const job = mark();
      const d = await startDaemon(ws.dir, ["--terminal-sandbox", "off"]);
      try {
        await d.ok("terminal_run", { command: `setsid sleep ${job} </dev/null >/dev/null 2>&1 & sleep 60`, background: true });
        await escaped(job);
        d.child.kill("SIGKILL");
        await d.exited;
        expect(await survivors({ job })).toEqual([]);
      } finally {
        if (alive(d.child.pid!)) d.child.kill("SIGKILL");
        killLeft({ job });
        ws.cleanup();
      }
    },
    SLOW_MS,
  );

  it(
    "a clean shutdown (stdin EOF) ends the setsid grandchildren of an MCP server, a language server, a hook and a terminal job too",
    async () => {
      const m = { mcp: mark(), python: mark(), hook: mark(), job: mark() };
      const s = setUp(m, false);
      const d = await startDaemon(s.ws.dir, [...s.args, "--lsp-sandbox", "off", "--terminal-sandbox", "off"], s.env);
      try {
        await mcpReady(d);
        void d.call("lsp_diagnostics", { path: "main.py", wait_ms: 1000 }, { id: "lsp" });
        await d.ok("terminal_run", { command: `setsid sleep ${m.job} </dev/null >/dev/null 2>&1 & sleep 60`, background: true });
        await d.ok("test_escape", { seconds: m.mcp });
        await d.ok("git_commit", { message: "the hook has run" });
        for (const x of Object.values(m)) await escaped(x);
        d.child.stdin.end();
        expect(await d.exited).toEqual({ code: 0, signal: null });
        expect(await survivors(m)).toEqual([]);
      } finally {
        if (alive(d.child.pid!)) d.child.kill("SIGKILL");
        killLeft(m);
        s.cleanup();
      }
    },
    SLOW_MS,
  );
});

describe("without cgroup containment (TOOL_LAYER_CONTAINMENT=process-group, as on a host without cgroup v2)", () => {
  it(
    "a clean shutdown ends though a language server's setsid grandchild outlives every kill; the log names what is left",
    async () => {
      const m = { python: mark(), blocked: mark() };
      // pyright waits for its python3, which never answers: the setsid grandchild is in the server's tree when it stops.
      const python = fakePython(m.python, `exec sleep ${m.blocked}`);
      const ws = tmpWorkspace({ files: { "main.py": "x: int = 1\n" } });
      const state = mkdtempSync(path.join(tmpdir(), "tool-layer-state-"));
      const env = { XDG_STATE_HOME: state, PATH: `${python.dir}${path.delimiter}${process.env.PATH}`, TOOL_LAYER_CONTAINMENT: "process-group" };
      const d = await startDaemon(ws.dir, ["--lsp-sandbox", "off"], env);
      try {
        expect((await d.ok("info", { tool_id: "git_status" })).state.processes.containment).toMatchObject({ kind: "process-group" });
        expect(await d.ok("lsp_diagnostics", { path: "main.py", wait_ms: 1000 })).toMatchObject({ status: "unknown" });
        await escaped(m.python);
        const [left] = sleeping(m.python);
        d.child.stdin.end();
        const ended = await Promise.race([d.exited, new Promise((resolve) => setTimeout(() => resolve("still running"), SHUTDOWN_BOUND_MS))]);
        expect(ended).toEqual({ code: 0, signal: null });
        expect(d.stderr).toMatch(new RegExp(`pyright-langserver: still running after its stop: .*${left.pid}`));
        expect(sleeping(m.python).map((p) => p.pid)).toEqual([left.pid]); // nothing the daemon had could reach it
      } finally {
        if (alive(d.child.pid!)) d.child.kill("SIGKILL");
        killLeft(m);
        python.cleanup();
        ws.cleanup();
        rmSync(state, { recursive: true, force: true });
      }
    },
    SLOW_MS,
  );

  it(
    "a terminal command answers though a setsid grandchild outside the sandbox still holds its output pipe open",
    async () => {
      const m = { writer: mark() };
      const ws = tmpWorkspace({ files: { "a.txt": "a\n" } });
      const d = await startDaemon(ws.dir, ["--terminal-sandbox", "off"], { TOOL_LAYER_CONTAINMENT: "process-group" });
      try {
        // It waits for the sleep to have left its group (setsid execs sleep after setsid()): the group dies when it exits.
        const command = `echo before; setsid sleep ${m.writer} & while [ "$(cat /proc/$!/comm)" != sleep ]; do :; done; echo after`;
        const r = await d.ok("terminal_run", { command });
        expect(r).toMatchObject({ exit_code: 0, output: "before\nafter\n" });
        await escaped(m.writer);
        expect(d.stderr).toMatch(/still holds its output open after it exited/);
        killLeft(m);
        expect(await d.ok("terminal_run", { command: "echo next" })).toMatchObject({ output: "next\n" });
      } finally {
        await d.close();
        killLeft(m);
        ws.cleanup();
      }
    },
    SLOW_MS,
  );
});
