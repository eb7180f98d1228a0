import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { descendants, waitDead } from "../helpers/process.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { FIXTURE_SERVER } from "./helpers.js";

const FILESYSTEM_SERVER = path.join(__dirname, "../../node_modules/.bin/mcp-server-filesystem");

/** A state folder of the test's own, so approvals never touch the user's. */
function stateEnv() {
  const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-state-"));
  return { env: { XDG_STATE_HOME: dir }, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const toolsChanged = (d: DaemonClient, test: (data: { added: string[]; removed: string[]; changed: string[] }) => boolean) =>
  d.waitFor((l) => l.event === "tools.changed" && test(l.data), 20_000);

describe("passthrough of MCP servers named by --mcp-config", () => {
  const ws = tmpWorkspace({ files: { "a.txt": "hello\n" } });
  const state = stateEnv();
  let d: DaemonClient;
  beforeAll(async () => {
    const config = path.join(state.env.XDG_STATE_HOME, "servers.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          test: { command: process.execPath, args: [FIXTURE_SERVER] },
          quick: { command: process.execPath, args: [FIXTURE_SERVER], timeout_ms: 300 },
          fs: { command: FILESYSTEM_SERVER, args: [ws.dir] },
        },
      }),
    );
    d = await startDaemon(ws.dir, ["--mcp-config", config], { ...state.env, SECRET_FOR_TEST: "do not pass" });
    await d.waitFor((l) => l.event === "tools.changed" && l.data.added.includes("test_echo"), 30_000);
    await d.waitFor((l) => l.event === "tools.changed" && l.data.added.includes("fs_read_text_file"), 30_000);
    await d.waitFor((l) => l.event === "tools.changed" && l.data.added.includes("quick_slow"), 30_000);
  });
  afterAll(async () => {
    await d.close();
    ws.cleanup();
    state.cleanup();
  });

  it("lists their tools as NAME_TOOL with the server's schema and hints, and calls them", async () => {
    const { tools } = await d.ok("list");
    expect(tools.map((t: { tool_id: string }) => t.tool_id)).toEqual(expect.arrayContaining(["test_echo", "test_add_tool", "fs_read_text_file"]));
    const info = await d.ok("info", { tool_id: "test_echo" });
    expect(info).toMatchObject({ mutating: false, read_only: true, provider: "test" });
    expect(info.description).toMatch(/^test: Echoes its text/);
    expect(info.input_schema.properties.text).toMatchObject({ type: "string" });
    expect(info.state.server).toMatchObject({ name: "test", state: "ready" });
    const r = await d.ok("test_echo", { text: "hi" });
    expect(r).toMatchObject({ text: "hi", structuredContent: { echoed: "hi" } });
    expect((await d.call("test_echo", { text: 5 })).result.code).toBe("INVALID_PARAMS");
  });

  it("a dry run of a mutating passthrough tool calls nothing and previews the call", async () => {
    expect((await d.ok("info", { tool_id: "test_add_tool" })).mutating).toBe(true);
    const before = d.events.length;
    const preview = await d.ok("test_add_tool", { name: "later" }, { approved: false });
    expect(preview).toMatchObject({ dry_run: true, server: "test", tool: "add_tool", arguments: { name: "later" } });
    expect(preview.preview_id).toMatch(/^[0-9a-f]{16}$/);
    await d.ok("test_echo", { text: "round trip" }); // any list_changed the dry run caused would have come by now
    expect(d.events.slice(before).filter((e) => e.event === "tools.changed")).toEqual([]);
    expect((await d.call("test_later", {})).result.code).toBe("NOT_AVAILABLE");
  });

  it("follows the server's tools/list_changed: the new tool arrives with tools.changed, and only it", async () => {
    const changed = toolsChanged(d, (c) => c.added.includes("test_fresh"));
    await d.ok("test_add_tool", { name: "fresh" });
    // The other tools of this server and of the others are as they were: not "changed".
    expect((await changed).data).toEqual({ added: ["test_fresh"], removed: [], changed: [] });
    expect((await d.ok("test_fresh", {})).text).toContain("fresh");
  });

  it("forwards cancel to the server", async () => {
    const slow = d.call("test_slow", { ms: 60_000 }, { id: "slow-1" });
    for (let started = 0; started < 1; ) started = (await d.ok("test_slow_status")).structuredContent.started;
    expect((await d.ok("cancel", { call_id: "slow-1" })).cancelled).toBe(true);
    expect((await slow).result.code).toBe("CANCELLED");
    for (let seen = 0; seen < 1; ) seen = (await d.ok("test_slow_status")).structuredContent.cancelled;
  });

  it("times a call out at the entry's timeout_ms", async () => {
    const r = await d.call("quick_slow", { ms: 60_000 });
    expect(r.result.code).toBe("TIMEOUT");
  });

  it("a server that crashes mid-call is reported with its stderr, and restarted on the next call", async () => {
    const pid = (await d.ok("test_pid")).text;
    const r = await d.call("test_crash", {});
    expect(r.result.code).toBe("MCP_SERVER_FAILED");
    expect(r.result.message).toContain('Its stderr says: "crash: exiting on purpose with code 3"');
    await waitDead(Number(pid));
    const again = await d.ok("test_echo", { text: "back" });
    expect(again.text).toBe("back");
    expect((await d.ok("test_pid")).text).not.toBe(pid);
    const status = (await d.ok("mcp_servers")).servers.find((s: { name: string }) => s.name === "test");
    expect(status).toMatchObject({ state: "ready", restarts: 1 });
  });

  it("a line of garbage on a server's stdout is reported, not fatal", async () => {
    await d.ok("test_garbage", {});
    expect((await d.ok("test_echo", { text: "still" })).text).toBe("still");
    const status = (await d.ok("mcp_servers")).servers.find((s: { name: string }) => s.name === "test");
    expect(status.garbage_lines).toBeGreaterThan(0);
  });

  it("passes a real third-party server through: @modelcontextprotocol/server-filesystem", async () => {
    expect((await d.ok("info", { tool_id: "fs_read_text_file" })).read_only).toBe(true);
    const r = await d.ok("fs_read_text_file", { path: path.join(ws.dir, "a.txt") });
    expect(r.text).toContain("hello");
    const outside = await d.call("fs_read_text_file", { path: "/etc/hostname" });
    expect(outside.result.code).toBe("TOOL_ERROR");
  });

  it("gives a server none of the daemon's secrets", async () => {
    expect((await d.ok("test_env", { name: "SECRET_FOR_TEST" })).text).toBe("(unset)");
  });
});

describe("a server that fails at start", () => {
  it("mcp_servers says why in its text: the last line of its stderr that is not a stack frame or Node's footer", async () => {
    const ws = tmpWorkspace();
    const state = stateEnv();
    const config = path.join(state.env.XDG_STATE_HOME, "servers.json");
    const script = "console.error('starting up'); throw new Error('GITHUB_TOKEN is not set')";
    writeFileSync(config, JSON.stringify({ mcpServers: { broken: { command: process.execPath, args: ["-e", script] } } }));
    const d = await startDaemon(ws.dir, ["--mcp-config", config], state.env);
    try {
      let status: { name: string; state: string; stderr_tail: string } | undefined;
      // No event says a server failed: ask until it has (each answer is a fresh look).
      while (status?.state !== "failed") status = (await d.ok("mcp_servers")).servers.find((s: { name: string }) => s.name === "broken");
      expect(status.stderr_tail).toMatch(/Node\.js v\d/); // the last line of its stderr is Node's footer, not the cause
      const text = (await d.ok("mcp_servers")).text;
      expect(text).toContain("broken (mcp-config): failed");
      expect(text).toContain("Error: GITHUB_TOKEN is not set");
    } finally {
      await d.close();
      ws.cleanup();
      state.cleanup();
    }
  });
});

describe("the workspace's own .mcp.json", () => {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "x\n" } });
  const state = stateEnv();
  const marker = path.join(ws.dir, "started.marker");
  let d: DaemonClient;
  const entry = (tag: string) => ({
    mcpServers: { local: { command: "sh", args: ["-c", `echo ${tag} >> '${marker}'; exec '${process.execPath}' '${FIXTURE_SERVER}'`] } },
  });
  beforeAll(async () => {
    d = await startDaemon(ws.dir, [], state.env);
  });
  afterAll(async () => {
    await d.close();
    ws.cleanup();
    state.cleanup();
  });

  it("written through file_write, starts nothing until approved; mcp_approve previews the command line", async () => {
    await d.ok("file_write", { path: ".mcp.json", content: JSON.stringify(entry("one")) });
    await d.waitFor((l) => l.event === "fs.changed" && l.data.changes.some((c: { path: string }) => c.path === ".mcp.json"));
    let status: any;
    // The configuration is read again right after the event; a few calls later it is in.
    for (let i = 0; i < 200 && !status; i++) status = (await d.ok("mcp_servers")).servers.find((s: { name: string }) => s.name === "local");
    expect(status).toMatchObject({ state: "not approved", source: "workspace" });
    expect(existsSync(marker)).toBe(false);
    const preview = await d.ok("mcp_approve", {}, { approved: false });
    expect(preview.servers).toEqual([{ server: "local", command: expect.stringContaining("echo one"), digest: expect.any(String) }]);
    expect(existsSync(marker)).toBe(false);
    const added = toolsChanged(d, (c) => c.added.includes("local_echo"));
    await d.ok("mcp_approve", { preview_id: preview.preview_id });
    await added;
    expect(readFileSync(marker, "utf8")).toBe("one\n");
    expect((await d.ok("local_echo", { text: "ok" })).text).toBe("ok");
  });

  it("a change to the entry withdraws its approval: the server stops and its tools leave", async () => {
    const pid = Number((await d.ok("local_pid")).text);
    const current = await d.ok("file_read", { path: ".mcp.json" });
    const removed = toolsChanged(d, (c) => c.removed.includes("local_echo"));
    await d.ok("file_write", { path: ".mcp.json", hash: current.hash, content: JSON.stringify(entry("two")) });
    await removed;
    await waitDead(pid);
    const status = (await d.ok("mcp_servers")).servers.find((s: { name: string }) => s.name === "local");
    expect(status.state).toBe("not approved");
    expect(readFileSync(marker, "utf8")).toBe("one\n");
  });

  it("mcp_revoke withdraws an approval", async () => {
    const added = toolsChanged(d, (c) => c.added.includes("local_echo"));
    await d.ok("mcp_approve", { server: "local" });
    await added;
    const removed = toolsChanged(d, (c) => c.removed.includes("local_echo"));
    expect((await d.ok("mcp_revoke", { server: "local" })).withdrawn).toBe(true);
    await removed;
  });

  it("the daemon leaves no server running when it exits", async () => {
    const added = toolsChanged(d, (c) => c.added.includes("local_echo"));
    await d.ok("mcp_approve", { server: "local" });
    await added;
    const kids = descendants(d.child.pid!);
    expect(kids.length).toBeGreaterThan(0);
    await d.close();
    for (const pid of kids) await waitDead(pid);
  });
});

describe("a --tools manifest and passthrough tools", () => {
  it("disables a passthrough tool by id with enabled:false", async () => {
    const ws = tmpWorkspace();
    const state = stateEnv();
    const config = path.join(state.env.XDG_STATE_HOME, "servers.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { test: { command: process.execPath, args: [FIXTURE_SERVER] } } }));
    const manifest = JSON.parse(readFileSync(path.join(__dirname, "../../tools.json"), "utf8"));
    const tools = path.join(state.env.XDG_STATE_HOME, "tools.json");
    writeFileSync(tools, JSON.stringify([...manifest, { name: "test_crash", enabled: false }, { name: "test_echo", description: "Says it back." }]));
    const d = await startDaemon(ws.dir, ["--mcp-config", config, "--tools", tools], state.env);
    try {
      await toolsChanged(d, (c) => c.added.includes("test_echo"));
      expect((await d.call("test_crash", {})).result.code).toBe("NOT_AVAILABLE");
      expect((await d.ok("info", { tool_id: "test_echo" })).description).toBe("Says it back.");
      // At the start no server had offered them yet: a warning, not an exit (SPEC 6).
      expect(d.stderr).toMatch(/names tools no built-in has.*test_crash, test_echo/);
    } finally {
      await d.close();
      ws.cleanup();
      state.cleanup();
    }
  });
});

describe("CodeGraph, wrapped as it is", () => {
  it("indexes the root, answers a query, and sees a file changed through file_write in its next answer", async () => {
    const ws = tmpWorkspace({ git: true, files: { "src/math.ts": "export function alphaSum(a: number, b: number) {\n  return a + b;\n}\n" } });
    const state = stateEnv();
    const d = await startDaemon(ws.dir, ["--codegraph", "on"], state.env);
    try {
      await toolsChanged(d, (c) => c.added.includes("codegraph_search"));
      const info = await d.ok("info", { tool_id: "codegraph_search" });
      expect(info).toMatchObject({ read_only: true, provider: "codegraph" });
      const first = await d.ok("codegraph_search", { query: "alphaSum" });
      expect(first.text).toContain("alphaSum");
      await d.ok("file_write", { path: "src/more.ts", content: "export function betaProduct(a: number, b: number) {\n  return a * b;\n}\n" });
      const next = await d.ok("codegraph_search", { query: "betaProduct" });
      expect(next.text).toContain("betaProduct");
      // Its folder is the daemon's business: no events, not in git's view.
      expect(
        d.events
          .filter((e) => e.event === "fs.changed")
          .flatMap((e) => e.data.changes)
          .filter((c: { path: string }) => c.path.startsWith(".codegraph/")),
      ).toEqual([]);
      expect((await d.ok("git_status")).untracked).not.toContainEqual(expect.stringMatching(/^\.codegraph/));
    } finally {
      await d.close();
      ws.cleanup();
      state.cleanup();
    }
  }, 120_000);
});
