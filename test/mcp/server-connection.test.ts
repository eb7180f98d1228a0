import { type ChildProcess, spawn as spawnProcess } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { MAX_LINE_BYTES, type SpawnSpec } from "../../src/mcp/child-transport.js";
import type { ServerConfig } from "../../src/mcp/config.js";
import { type ConnectionOptions, type McpToolInfo, ServerConnection } from "../../src/mcp/server-connection.js";
import { FIXTURE_SERVER, alive, deferred, fixtureEntry, gone, serverEntry, testSpawn } from "./helpers.js";

const spawn = testSpawn();

async function failure(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ToolError) return e;
    throw e;
  }
  throw new Error("expected the call to fail");
}

const opened: ServerConnection[] = [];
function connection(config: ServerConfig, opts: Partial<ConnectionOptions> = {}): ServerConnection {
  const c = new ServerConnection(config, { spawn, ...opts });
  opened.push(c);
  return c;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
});

describe("ServerConnection over stdio, with the test server", () => {
  let conn: ServerConnection;
  const warnings: string[] = [];
  let changed = deferred<McpToolInfo[]>();

  beforeAll(async () => {
    conn = new ServerConnection(fixtureEntry(), {
      spawn,
      onWarning: (m) => warnings.push(m),
      onToolsChanged: (tools) => changed.resolve(tools),
    });
    await conn.start();
  });
  afterAll(() => conn.close());

  it("lists the tools with their annotations; only readOnlyHint:true is read-only", () => {
    const byName = new Map(conn.tools.map((t) => [t.name, t]));
    expect([...byName.keys()]).toEqual(expect.arrayContaining(["echo", "slow", "crash", "fail", "add_tool", "garbage", "mixed"]));
    expect(byName.get("echo")!.readOnly).toBe(true);
    expect(byName.get("echo")!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(byName.get("echo")!.inputSchema).toMatchObject({ type: "object", properties: { text: { type: "string" } } });
    expect(byName.get("crash")!.readOnly).toBe(false);
    expect(byName.get("garbage")!.annotations).toBeUndefined();
    const s = conn.status();
    expect(s).toMatchObject({ name: "test", state: "ready", transport: "stdio", tool_count: conn.tools.length, last_error: null });
    expect(s.server_info?.name).toBe("tool-layer-test-server");
    expect(alive(s.pid!)).toBe(true);
    expect(s.stderr_tail).toContain("test server: started");
  });

  it("calls a tool: text, content and structuredContent as given", async () => {
    const r = await conn.callTool("echo", { text: "hello" });
    expect(r).toEqual({ text: "hello", content: [{ type: "text", text: "hello" }], structuredContent: { echoed: "hello" } });
  });

  it("carries a message larger than a pipe's chunk in one piece", async () => {
    const big = "x".repeat(3_000_000);
    const r = await conn.callTool("echo", { text: big });
    expect(r.text.length).toBe(big.length);
  });

  it("summarizes content that is not text", async () => {
    const r = await conn.callTool("mixed", {});
    expect(r.text).toBe("first\n[image image/png 70 bytes]\n[resource link file:///tmp/x.txt text/plain]\nsecond");
    expect(r.content).toHaveLength(4);
  });

  it("an isError result is TOOL_ERROR with the server's text", async () => {
    const e = await failure(conn.callTool("fail", {}));
    expect(e.code).toBe("TOOL_ERROR");
    expect(e.message).toContain("the thing failed: no such widget");
    expect(e.details).toMatchObject({ server: "test", tool: "fail" });
  });

  it("a JSON-RPC error from the server (an unknown tool) is TOOL_ERROR, and the connection goes on", async () => {
    const e = await failure(conn.callTool("no_such_tool", {}));
    expect(e.code).toBe("TOOL_ERROR");
    expect(e.message).toContain("no_such_tool");
    expect((await conn.callTool("echo", { text: "still here" })).text).toBe("still here");
  });

  it("cancel is forwarded: the server sees notifications/cancelled and the call answers CANCELLED", async () => {
    const before = (await conn.callTool("slow_status", {})).structuredContent as { cancelled: number };
    const ac = new AbortController();
    const running = deferred<void>();
    const call = failure(conn.callTool("slow", { ms: 60_000 }, { signal: ac.signal, onProgress: () => running.resolve() }));
    await running.promise; // the server reported that the call has begun
    ac.abort();
    const e = await call;
    expect(e.code).toBe("CANCELLED");
    const after = (await conn.callTool("slow_status", {})).structuredContent as { cancelled: number };
    expect(after.cancelled).toBe(before.cancelled + 1);
  });

  it("an already aborted signal sends nothing", async () => {
    const before = (await conn.callTool("slow_status", {})).structuredContent as { started: number };
    const ac = new AbortController();
    ac.abort();
    expect((await failure(conn.callTool("slow", { ms: 10 }, { signal: ac.signal }))).code).toBe("CANCELLED");
    const after = (await conn.callTool("slow_status", {})).structuredContent as { started: number };
    expect(after.started).toBe(before.started);
  });

  it("a timeout answers TIMEOUT and cancels the request on the server", async () => {
    const before = (await conn.callTool("slow_status", {})).structuredContent as { cancelled: number };
    const e = await failure(conn.callTool("slow", { ms: 60_000 }, { timeoutMs: 200 }));
    expect(e.code).toBe("TIMEOUT");
    expect(e.message).toContain("200 ms");
    const after = (await conn.callTool("slow_status", {})).structuredContent as { cancelled: number };
    expect(after.cancelled).toBe(before.cancelled + 1);
  });

  it("follows tools/list_changed: the callback gets the new list", async () => {
    changed = deferred();
    await conn.callTool("add_tool", { name: "fresh_tool" });
    const tools = await changed.promise;
    expect(tools.map((t) => t.name)).toContain("fresh_tool");
    expect(conn.tools.map((t) => t.name)).toContain("fresh_tool");
    expect((await conn.callTool("fresh_tool", {})).text).toBe("fresh_tool ran");
  });

  it("garbage on stdout is reported and skipped; the connection survives", async () => {
    const before = conn.status().garbage_lines;
    const r = await conn.callTool("garbage", {});
    expect(r.text).toBe("printed garbage");
    // The garbage line came before the answer on the same pipe, so it was counted already.
    expect(conn.status()).toMatchObject({ garbage_lines: before + 1, last_garbage: "this line is not JSON-RPC", state: "ready" });
    expect(warnings.some((w) => w.includes("not JSON-RPC") && w.includes('"test"'))).toBe(true);
    expect((await conn.callTool("echo", { text: "after garbage" })).text).toBe("after garbage");
  });
});

describe("ServerConnection: crashes, restarts, failures and cleanup", () => {
  it("a crash mid-call fails it with MCP_SERVER_FAILED and the stderr tail; the next call restarts the server", async () => {
    const states: string[] = [];
    const conn = connection(fixtureEntry(), { onStateChange: (s) => states.push(s.state) });
    await conn.start();
    const pid1 = conn.status().pid!;
    const e = await failure(conn.callTool("crash", {}));
    expect(e.code).toBe("MCP_SERVER_FAILED");
    expect(e.message).toContain("exited with code 3");
    expect(e.message).toContain("crash: exiting on purpose");
    expect(e.details.stderr_tail).toContain("crash: exiting on purpose with code 3");
    expect(conn.status()).toMatchObject({ state: "crashed", pid: null });
    expect(alive(pid1)).toBe(false);

    const r = await conn.callTool("pid", {});
    expect(Number(r.text)).not.toBe(pid1);
    expect(conn.status()).toMatchObject({ state: "ready", restarts: 1, last_error: null });
    expect(states).toEqual(["connecting", "ready", "crashed", "connecting", "ready"]);
  });

  it("a server killed while idle is reported crashed at once and restarted on the next call", async () => {
    const crashed = deferred<string | null>();
    const conn = connection(fixtureEntry(), { onStateChange: (s) => s.state === "crashed" && crashed.resolve(s.last_error) });
    await conn.start();
    process.kill(conn.status().pid!, "SIGKILL");
    expect(await crashed.promise).toBe("it was killed by SIGKILL");
    expect((await conn.callTool("echo", { text: "back" })).text).toBe("back");
    expect(conn.status()).toMatchObject({ state: "ready", restarts: 1 });
  });

  it("a line on stdout over 10 MB ends the connection cleanly: the call fails, the next one restarts", async () => {
    const conn = connection(fixtureEntry());
    await conn.start();
    const pid = conn.status().pid!;
    const e = await failure(conn.callTool("flood", { bytes: MAX_LINE_BYTES + 1_000_000 }));
    expect(e.code).toBe("MCP_SERVER_FAILED");
    expect(e.message).toContain(`a line over ${MAX_LINE_BYTES} bytes`);
    expect(alive(pid)).toBe(false);
    expect((await conn.callTool("echo", { text: "fresh" })).text).toBe("fresh");
  });

  it("restarts are capped: past the cap the call fails without starting the server", async () => {
    const conn = connection(fixtureEntry(), { maxRestarts: 1 });
    await conn.start();
    await failure(conn.callTool("crash", {}));
    await failure(conn.callTool("crash", {})); // restarted once, crashed again
    const e = await failure(conn.callTool("echo", { text: "x" }));
    expect(e.code).toBe("MCP_SERVER_FAILED");
    expect(e.message).toContain("stopped 1 times");
    expect(conn.status()).toMatchObject({ state: "crashed", restarts: 1, pid: null });
  });

  it("a server that cannot be spawned is MCP_SERVER_FAILED naming the program", async () => {
    const conn = connection(serverEntry("nothere", { command: "/nonexistent/mcp-server" }));
    const e = await failure(conn.start());
    expect(e.code).toBe("MCP_SERVER_FAILED");
    expect(e.message).toContain("ENOENT");
    expect(conn.status()).toMatchObject({ state: "failed" });
  });

  it("a server that dies at start is MCP_SERVER_FAILED with its exit code and stderr", async () => {
    const conn = connection(serverEntry("dies", { command: process.execPath, args: ["-e", "console.error('bad config: no token'); process.exit(1)"] }));
    const e = await failure(conn.start());
    expect(e.code).toBe("MCP_SERVER_FAILED");
    expect(e.message).toContain("exited with code 1");
    expect(e.message).toContain("bad config: no token");
    expect(conn.status().last_error).toContain("exited with code 1");
  });

  it("a server that never answers initialize fails within the connect timeout and is killed", async () => {
    let child: ChildProcess | undefined;
    const conn = connection(serverEntry("mute", { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"] }), {
      connectTimeoutMs: 300,
      spawn: (spec) => {
        const started = spawn(spec);
        child = started.child;
        return started;
      },
    });
    const e = await failure(conn.start());
    expect(e.code).toBe("MCP_SERVER_FAILED");
    expect(e.message).toContain("no answer to initialize within 300 ms");
    expect(alive(child!.pid!)).toBe(false);
  });

  it("close() leaves no process: the server, and a grandchild that inherited its stdio", async () => {
    const conn = connection(fixtureEntry());
    await conn.start();
    const pid = conn.status().pid!;
    const grandchild = Number((await conn.callTool("grandchild", {})).text);
    expect(alive(grandchild)).toBe(true);
    await conn.close();
    expect(alive(pid)).toBe(false);
    await gone(grandchild);
    expect(conn.status().state).toBe("closed");
    expect((await failure(conn.callTool("echo", { text: "x" }))).code).toBe("MCP_SERVER_FAILED");
  });

  it("close() ends a server that ignores stdin's end and SIGTERM", async () => {
    const conn = connection(fixtureEntry("stubborn", ["--stubborn"]));
    await conn.start();
    const pid = conn.status().pid!;
    await conn.close();
    expect(alive(pid)).toBe(false);
    expect(conn.status().stderr_tail).toContain("stubborn: ignoring SIGTERM");
  });

  it("the process comes from the spawn function it is given, with the entry's command, cwd and env", async () => {
    const specs: SpawnSpec[] = [];
    process.env.TL_TEST_DAEMON_SECRET = "do-not-leak";
    try {
      const conn = connection(fixtureEntry("spawned", [], { env: { FROM_ENTRY: "yes" }, cwd: "test" }), {
        spawn: (spec) => {
          specs.push(spec);
          return spawn(spec);
        },
      });
      await conn.start();
      expect(specs).toHaveLength(1);
      expect(specs[0].command).toBe(process.execPath);
      expect(specs[0].cwd.endsWith("/test")).toBe(true);
      expect((await conn.callTool("env", { name: "FROM_ENTRY" })).text).toBe("yes");
      // The supervised spawner passes only the SDK's safe variables under the entry's own.
      expect((await conn.callTool("env", { name: "TL_TEST_DAEMON_SECRET" })).text).toBe("(unset)");
      expect((await conn.callTool("env", { name: "PATH" })).text).toBe(process.env.PATH);
    } finally {
      delete process.env.TL_TEST_DAEMON_SECRET;
    }
  });
});

describe("ServerConnection over Streamable HTTP", () => {
  let server: ChildProcess;
  let url: string;

  beforeAll(async () => {
    server = spawnProcess(process.execPath, [FIXTURE_SERVER, "--http"], { stdio: ["pipe", "pipe", "inherit"] });
    const port = await new Promise<string>((resolve) => {
      server.stdout!.setEncoding("utf8");
      server.stdout!.on("data", (s: string) => {
        const m = /listening (\d+)/.exec(s);
        if (m) resolve(m[1]);
      });
    });
    url = `http://127.0.0.1:${port}/mcp`;
  });
  afterAll(() => {
    server.kill();
  });

  it("lists, calls, and follows tools/list_changed", async () => {
    const changed = deferred<McpToolInfo[]>();
    const conn = connection(serverEntry("remote", { type: "http", url }), { onToolsChanged: (t) => changed.resolve(t) });
    const tools = await conn.start();
    expect(tools.map((t) => t.name)).toContain("echo");
    expect(conn.status()).toMatchObject({ state: "ready", transport: "http", pid: null });
    expect((await conn.callTool("echo", { text: "over http" })).text).toBe("over http");
    await conn.callTool("add_tool", { name: "http_added" });
    expect((await changed.promise).map((t) => t.name)).toContain("http_added");
    expect((await failure(conn.callTool("fail", {}))).code).toBe("TOOL_ERROR");
  });

  it("a server that is not there is MCP_SERVER_FAILED", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const conn = connection(serverEntry("absent", { type: "http", url: `http://127.0.0.1:${port}/mcp` }));
    const e = await failure(conn.start());
    expect(e.code).toBe("MCP_SERVER_FAILED");
    expect(e.message).toContain("ECONNREFUSED");
    expect(conn.status().state).toBe("failed");
  });

  it("a server that dies mid-call is MCP_SERVER_FAILED; the next call tries to connect again", async () => {
    const own = spawnProcess(process.execPath, [FIXTURE_SERVER, "--http"], { stdio: ["pipe", "pipe", "ignore"] });
    const port = await new Promise<string>((resolve) => {
      own.stdout!.setEncoding("utf8");
      own.stdout!.on("data", (s: string) => {
        const m = /listening (\d+)/.exec(s);
        if (m) resolve(m[1]);
      });
    });
    const exited = new Promise((r) => own.once("exit", r));
    const conn = connection(serverEntry("dying", { type: "http", url: `http://127.0.0.1:${port}/mcp` }));
    await conn.start();
    const e = await failure(conn.callTool("crash", {}));
    expect(e.code).toBe("MCP_SERVER_FAILED");
    expect(conn.status().state).toBe("crashed");
    await exited;
    const again = await failure(conn.callTool("echo", { text: "x" }));
    expect(again.code).toBe("MCP_SERVER_FAILED");
    expect(again.message).toContain("could not be started");
    expect(conn.status()).toMatchObject({ state: "failed", restarts: 1 });
  });
});
