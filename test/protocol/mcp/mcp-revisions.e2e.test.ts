import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client, ProtocolError, ResourceNotFoundError } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash } from "../../../src/core/hash.js";
import { MAIN } from "../../helpers/daemon.js";
import { git, tmpWorkspace } from "../../helpers/tmp.js";

await initHash();

const GATED_SERVER = fileURLToPath(new URL("../../fixtures/mcp-gated-server.mjs", import.meta.url));
const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
type Revision = typeof MODERN | typeof LEGACY;
const SERVER_INFO = "io.modelcontextprotocol/serverInfo";
/** Where tools/list says which passthrough servers are still starting (docs/mcp-server.md). */
const PENDING = "tool-layer/pendingServers";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
};

/** Not exactly StdioClientTransport, so the SDK probes the daemon in place instead of spawning a sibling to probe. */
class InPlaceStdio extends StdioClientTransport {}

type Text = { type: "text"; text: string };
const textOf = (r: { content?: unknown }) => (r.content as Text[])[0]?.text ?? "";

interface Options {
  /** What the client answers when the daemon asks the person; no elicitation capability when unset. */
  elicit?: "accept" | "decline";
  args?: string[];
}

/** The official SDK client of one revision against the built daemon `--mcp` on `root`. */
async function connect(revision: Revision, root: string, state: string, opts: Options = {}) {
  const client = new Client(
    { name: "test-client", version: "1.0.0" },
    {
      ...(opts.elicit ? { capabilities: { elicitation: { form: {} } } } : {}),
      ...(revision === MODERN ? { versionNegotiation: { mode: { pin: MODERN } } } : {}),
    },
  );
  const asked: string[] = [];
  if (opts.elicit) {
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params.message);
      return opts.elicit === "accept" ? { action: "accept", content: { confirm: true } } : { action: "decline" };
    });
  }
  const transport = new InPlaceStdio({
    command: process.execPath,
    args: [MAIN, "--mcp", "--root", root, ...(opts.args ?? [])],
    stderr: "pipe",
    env: { ...process.env, XDG_STATE_HOME: state } as Record<string, string>,
  });
  await client.connect(transport);
  return { client, asked };
}

/** Resolves on the next notification of `method` that `test` accepts. */
function nextNotification(
  client: Client,
  method: "notifications/tools/list_changed" | "notifications/resources/updated",
  test: (params: Record<string, unknown>) => boolean = () => true,
): Promise<Record<string, unknown>> {
  return new Promise((resolve) =>
    client.setNotificationHandler(method, (n: { params?: Record<string, unknown> }) => {
      if (test(n.params ?? {})) resolve(n.params ?? {});
    }),
  );
}

async function rejection(p: Promise<unknown>): Promise<ProtocolError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof ProtocolError)) throw new Error(`expected a JSON-RPC error, got ${e === undefined ? "a result" : String(e)}`);
  return e;
}

describe.each([MODERN, LEGACY] as const)("tool-layer --mcp, a %s client", (revision) => {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "one\ntwo\n" } });
  const state = tmpWorkspace();
  const gate = path.join(state.dir, "gate");
  const config = path.join(state.dir, "servers.json");
  let client: Client;

  beforeAll(async () => {
    writeFileSync(config, JSON.stringify({ mcpServers: { test: { command: process.execPath, args: [GATED_SERVER, gate] } } }));
    ({ client } = await connect(revision, ws.dir, state.dir, { args: ["--mcp-config", config] }));
    if (revision === MODERN) await client.listen({ toolsListChanged: true });
  });
  afterAll(async () => {
    await client.close();
    ws.cleanup();
    state.cleanup();
  });

  it("tools/list says a passthrough server is still starting; tools/list_changed follows once it is up; a call sent meanwhile waits for it", async () => {
    const early = await client.listTools();
    expect(early.tools.map((t) => t.name)).toContain("file_read");
    expect(early.tools.map((t) => t.name)).not.toContain("test_echo");
    expect(early._meta?.[PENDING]).toMatchObject({ servers: ["test"], message: expect.stringContaining("notifications/tools/list_changed") });
    const earlyCall = client.callTool({ name: "test_echo", arguments: { text: "early" } }); // its server is still gated

    let names: string[] = [];
    let late = early;
    while (!names.includes("test_echo")) {
      const changed = nextNotification(client, "notifications/tools/list_changed");
      if (!existsSync(gate)) writeFileSync(gate, "");
      await changed;
      late = await client.listTools();
      names = late.tools.map((t) => t.name);
    }
    expect(late._meta?.[PENDING]).toBeUndefined();
    const r = await client.callTool({ name: "test_echo", arguments: { text: "through" } });
    expect(textOf(r)).toBe("through");
    expect(textOf(await earlyCall)).toBe("early");
  });

  it("tools/call answers with the result; an unknown tool is JSON-RPC -32602 naming it", async () => {
    const r = await client.callTool({ name: "file_read", arguments: { path: "a.txt" } });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toMatch(/^file a\.txt · hash [0-9a-f]{16}/);
    if (revision === MODERN) expect(r._meta?.[SERVER_INFO]).toMatchObject({ name: "tool-layer" });
    const e = await rejection(client.callTool({ name: "no_such_tool", arguments: {} }));
    expect(e.code).toBe(-32602);
    expect(e.message).toContain("Unknown tool: no_such_tool");
    // Served as tools in JSON-lines mode only.
    expect((await rejection(client.callTool({ name: "session_end", arguments: {} }))).code).toBe(-32602);
  });

  it("resources/read of a missing file is the resource-not-found error, -32602 with data {uri}; other refusals are not", async () => {
    const uri = pathToFileURL(path.join(ws.dir, "missing.txt")).href;
    const e = await rejection(client.readResource({ uri }));
    expect(e).toBeInstanceOf(ResourceNotFoundError);
    expect(e.code).toBe(-32602);
    expect(e.data).toEqual({ uri });
    // Any other refusal carries more than the URI, so that a client does not take it for "not found".
    const outside = await rejection(client.readResource({ uri: "file:///etc/passwd" }));
    expect(outside).not.toBeInstanceOf(ResourceNotFoundError);
    expect(outside.data).toEqual({ uri: "file:///etc/passwd", code: "PATH_OUTSIDE_ROOT" });
  });

  it("a subscribed file's change reaches the client as resources/updated, with the URI it subscribed with", async () => {
    const file = path.join(ws.dir, "watched.txt");
    writeFileSync(file, "v1\n");
    // The spelling of the root the client used: a trailing "/./" is the same file.
    const uri = `${pathToFileURL(ws.dir).href}/./watched.txt`;
    const updated = nextNotification(client, "notifications/resources/updated", (p) => p.uri === uri);
    if (revision === MODERN) {
      const sub = await client.listen({ resourceSubscriptions: [uri] });
      expect(sub.honoredFilter.resourceSubscriptions).toEqual([uri]);
    } else {
      await client.subscribeResource({ uri });
    }
    writeFileSync(file, "v2\n");
    await updated;
  });
});

describe("tool-layer --mcp, 2026-07-28 only", () => {
  const ws = tmpWorkspace({ files: { "a.txt": "one\n" } });
  const state = tmpWorkspace();
  let client: Client;
  beforeAll(async () => ({ client } = await connect(MODERN, ws.dir, state.dir)));
  afterAll(async () => {
    await client.close();
    ws.cleanup();
    state.cleanup();
  });

  it("server/discover names the revisions, the capabilities, cache hints and the server info", async () => {
    const d = await client.discover();
    expect(d.supportedVersions).toEqual([MODERN]);
    expect(d.capabilities).toMatchObject({ tools: { listChanged: true }, resources: { subscribe: true } });
    expect(d.capabilities).not.toHaveProperty("logging");
    expect(d).toMatchObject({ ttlMs: expect.any(Number), cacheScope: "public" });
    expect(d._meta?.[SERVER_INFO]).toMatchObject({ name: "tool-layer", version: expect.any(String) });
    expect(client.getServerVersion()).toMatchObject({ name: "tool-layer" });
  });

  it("lists and reads carry ttlMs and cacheScope", async () => {
    const list = await client.listTools();
    expect(list).toMatchObject({ ttlMs: 0, cacheScope: "private" });
    const read = await client.readResource({ uri: pathToFileURL(path.join(ws.dir, "a.txt")).href });
    expect(read).toMatchObject({ ttlMs: 0, cacheScope: "private" });
  });
});

/** A JSON-RPC message as the daemon writes it, as far as these tests read it. */
interface WireMessage {
  id?: number;
  method?: string;
  result?: { resultType?: string; requestState?: string; isError?: boolean; [key: string]: unknown };
  error?: { code: number; message: string; data?: unknown };
}

/** The built daemon `--mcp` spoken to in raw JSON lines, each request a stateless 2026-07-28 one. */
function rawDaemon(root: string, state: string) {
  const child = spawn(process.execPath, [MAIN, "--mcp", "--root", root], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, XDG_STATE_HOME: state } });
  const lines: WireMessage[] = [];
  const waiters: (() => void)[] = [];
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d;
    for (const w of waiters.splice(0)) w();
  });
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(JSON.parse(line) as WireMessage);
    for (const w of waiters.splice(0)) w();
  });
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise<void>((r) => waiters.push(r));
  };
  return {
    lines,
    stderr: () => stderr,
    until,
    /** A message as given (a 2025-11-25 one); `send` is the same with the 2026-07-28 envelope. */
    write(message: Record<string, unknown>) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    },
    send(id: number, method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) {
      this.write({ id, method, params: { ...params, _meta: { ...ENVELOPE, ...meta } } });
    },
    async answer(id: number): Promise<WireMessage> {
      await until(() => lines.some((l) => l.id === id));
      return lines.find((l) => l.id === id)!;
    },
    async close(signal?: NodeJS.Signals) {
      if (signal) child.kill(signal);
      else child.stdin.end();
      await new Promise((r) => child.once("exit", r));
    },
  };
}

describe("tool-layer --mcp on the 2026-07-28 wire", () => {
  const version = (v: string) => ({ "io.modelcontextprotocol/protocolVersion": v });

  it("answers a request naming a revision it does not serve with -32022, on the opening and later, and logs events to stderr only", async () => {
    const ws = tmpWorkspace({ git: true });
    const state = tmpWorkspace();
    const d = rawDaemon(ws.dir, state.dir);
    try {
      d.send(1, "tools/list", {}, version("1900-01-01"));
      expect((await d.answer(1)).error).toMatchObject({ code: -32022, data: { supported: [MODERN], requested: "1900-01-01" } });
      d.send(2, "tools/list");
      expect((await d.answer(2)).result).toMatchObject({
        resultType: "complete",
        ttlMs: 0,
        cacheScope: "private",
        _meta: { [SERVER_INFO]: { name: "tool-layer" } },
      });
      d.send(3, "tools/list", {}, version("2099-01-01"));
      expect((await d.answer(3)).error).toMatchObject({ code: -32022, data: { supported: [MODERN], requested: "2099-01-01" } });
      d.send(4, "tools/call", { name: "git_status", arguments: {} }, version("2099-01-01"));
      expect((await d.answer(4)).error).toMatchObject({ code: -32022 });

      // A pushed event that a 2025-11-25 client gets as notifications/message goes to stderr here.
      git(ws.dir, "commit", "-q", "--allow-empty", "-m", "first");
      await d.until(() => d.stderr().includes("git.changed"));
      d.send(5, "tools/list");
      await d.answer(5);
      expect(d.lines.filter((l) => l.method === "notifications/message")).toEqual([]);
    } finally {
      await d.close();
      ws.cleanup();
      state.cleanup();
    }
  });

  it("a server/discover probe followed by initialize is served as 2025-11-25, the probe's instance gone", async () => {
    const ws = tmpWorkspace({ git: true });
    const state = tmpWorkspace();
    const d = rawDaemon(ws.dir, state.dir);
    try {
      d.send(1, "server/discover");
      expect((await d.answer(1)).result).toMatchObject({ supportedVersions: [MODERN] });
      d.write({ id: 2, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
      expect((await d.answer(2)).result).toMatchObject({ protocolVersion: "2025-11-25", serverInfo: { name: "tool-layer" } });
      d.write({ method: "notifications/initialized" });
      git(ws.dir, "commit", "-q", "--allow-empty", "-m", "first");
      await d.until(() => d.lines.some((l) => l.method === "notifications/message"));
      d.write({ id: 3, method: "tools/list" });
      await d.answer(3);
      // One instance hears the bus: the discarded 2026-07-28 one would have logged the event to stderr.
      expect(d.lines.filter((l) => l.method === "notifications/message")).toHaveLength(1);
      expect(d.stderr()).not.toContain("git.changed");
    } finally {
      await d.close();
      ws.cleanup();
      state.cleanup();
    }
  });

  it("acknowledges a listen with what it honors, and ends it with its result when the daemon stops", async () => {
    const ws = tmpWorkspace();
    const state = tmpWorkspace();
    const d = rawDaemon(ws.dir, state.dir);
    try {
      d.send(1, "subscriptions/listen", { notifications: { toolsListChanged: true, promptsListChanged: true } });
      await d.until(() => d.lines.some((l) => l.method === "notifications/subscriptions/acknowledged"));
      expect(d.lines.find((l) => l.method === "notifications/subscriptions/acknowledged")).toMatchObject({
        params: { notifications: { toolsListChanged: true } },
      });
    } finally {
      await d.close("SIGTERM");
      ws.cleanup();
      state.cleanup();
    }
    expect(d.lines.find((l) => l.id === 1)?.result).toMatchObject({ resultType: "complete", _meta: { "io.modelcontextprotocol/subscriptionId": 1 } });
  });

  it("refuses a tools/call whose name or arguments are malformed with -32602, and still answers a good one", async () => {
    const ws = tmpWorkspace({ files: { "a.txt": "x\n" } });
    const state = tmpWorkspace();
    const d = rawDaemon(ws.dir, state.dir);
    try {
      d.send(1, "tools/call", { name: 5, arguments: {} });
      d.send(2, "tools/call", { name: "file_read", arguments: "a.txt" });
      d.send(3, "tools/call", { name: "file_read", arguments: ["a.txt"] });
      d.send(4, "tools/call", { arguments: { path: "a.txt" } });
      d.send(5, "tools/call", { name: "file_read", arguments: { path: "a.txt" } });
      for (const id of [1, 2, 3, 4]) expect((await d.answer(id)).error, `request ${id}`).toMatchObject({ code: -32602 });
      expect((await d.answer(5)).result).toMatchObject({ resultType: "complete", structuredContent: { hash: fileHash(Buffer.from("x\n")) } });
    } finally {
      await d.close();
      ws.cleanup();
      state.cleanup();
    }
  });

  it("does not take a confirmation the daemon did not ask for: inputResponses without its requestState are asked again", async () => {
    const ws = tmpWorkspace({ files: { "doomed.txt": "x\n" } });
    const state = tmpWorkspace();
    const d = rawDaemon(ws.dir, state.dir);
    const asks = { "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } };
    const call = (id: number, extra: Record<string, unknown>) =>
      d.send(id, "tools/call", { name: "file_delete", arguments: { path: "doomed.txt", hash: fileHash(Buffer.from("x\n")) }, ...extra }, asks);
    try {
      const accepted = { confirm: { action: "accept", content: { confirm: true } } };
      call(1, { inputResponses: accepted });
      const asked = (await d.answer(1)).result;
      expect(asked).toMatchObject({
        resultType: "input_required",
        inputRequests: { confirm: { method: "elicitation/create" } },
        requestState: expect.any(String),
      });
      call(2, { inputResponses: accepted, requestState: "v1.forged.state" });
      expect((await d.answer(2)).error).toMatchObject({ code: -32602 });
      expect(existsSync(path.join(ws.dir, "doomed.txt"))).toBe(true);
      call(3, { inputResponses: accepted, requestState: asked?.requestState });
      expect((await d.answer(3)).result?.isError).toBeFalsy();
      expect(existsSync(path.join(ws.dir, "doomed.txt"))).toBe(false);
    } finally {
      await d.close();
      ws.cleanup();
      state.cleanup();
    }
  });
});

it("--mcp-confirm takes destructive, mutating or none, and names a bad value in one line", () => {
  const r = spawnSync(process.execPath, [MAIN, "--mcp", "--mcp-confirm", "always"], { input: "", encoding: "utf8" });
  expect(r.status).toBe(2);
  expect(r.stderr.trim()).toMatch(/^[^\n]*--mcp-confirm must be destructive, mutating or none, not always$/);
});

describe.each([MODERN, LEGACY] as const)("--mcp-confirm destructive (the default), a %s client", (revision) => {
  const ws = tmpWorkspace({ files: { "keep.txt": "k\n", "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" } });
  const state = tmpWorkspace();
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    ws.cleanup();
    state.cleanup();
  });
  const exists = (rel: string) => existsSync(path.join(ws.dir, rel));
  const del = (rel: string, more: Record<string, unknown> = {}) => ({
    name: "file_delete",
    arguments: { path: rel, hash: fileHash(readFileSync(path.join(ws.dir, rel))), ...more },
  });

  it("asks the person before a destructive call and runs it once they accept; reads and previews are not asked", async () => {
    const { client, asked } = await connect(revision, ws.dir, state.dir, { elicit: "accept" });
    clients.push(client);
    expect((await client.callTool({ name: "file_read", arguments: { path: "a.txt" } })).isError).toBeFalsy();
    expect((await client.callTool(del("a.txt", { dry_run: true }))).isError).toBeFalsy();
    expect(asked).toEqual([]);
    const r = await client.callTool(del("a.txt"));
    expect(r.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("file_delete");
    expect(asked[0]).toContain("a.txt");
    expect(exists("a.txt")).toBe(false);
  });

  it("does nothing when the person declines", async () => {
    const { client, asked } = await connect(revision, ws.dir, state.dir, { elicit: "decline" });
    clients.push(client);
    const r = await client.callTool(del("b.txt"));
    expect(asked).toHaveLength(1);
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ code: "DECLINED" });
    expect(exists("b.txt")).toBe(true);
  });

  it("refuses, changing nothing, when the client cannot ask anyone; --mcp-confirm none lets the call through", async () => {
    const { client } = await connect(revision, ws.dir, state.dir);
    clients.push(client);
    const r = await client.callTool(del("c.txt"));
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ code: "CONFIRMATION_UNAVAILABLE" });
    expect(textOf(r)).toContain("--mcp-confirm");
    expect(exists("c.txt")).toBe(true);
    const { client: trusting } = await connect(revision, ws.dir, state.dir, { args: ["--mcp-confirm", "none"] });
    clients.push(trusting);
    expect((await trusting.callTool(del("c.txt"))).isError).toBeFalsy();
    expect(exists("c.txt")).toBe(false);
  });
});
