import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash, tagOf } from "../../../src/core/hash.js";
import { MAIN } from "../../helpers/daemon.js";
import { git, tmpWorkspace } from "../../helpers/tmp.js";
import { FIXTURE_SERVER } from "../../mcp/helpers.js";

await initHash();

type Text = { type: "text"; text: string };
const textOf = (r: { content?: unknown }) => (r.content as Text[])[0]?.text ?? "";

describe("tool-layer --mcp, driven by the SDK's own Client", () => {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "one\ntwo\nthree\n" } });
  const config = path.join(ws.dir, "..", `${path.basename(ws.dir)}-servers.json`);
  /** Outside the workspace: the daemon refuses a state folder inside it. */
  const state = tmpWorkspace();
  let client: Client;
  const updated: string[] = [];
  let listChanged = 0;
  let changedWaiter: (() => void) | undefined;
  const logged: { event: string; data: any }[] = [];
  let loggedWaiter: (() => void) | undefined;

  beforeAll(async () => {
    writeFileSync(config, JSON.stringify({ mcpServers: { test: { command: process.execPath, args: [FIXTURE_SERVER] } } }));
    client = new Client({ name: "test-client", version: "1.0.0" });
    client.setNotificationHandler("notifications/resources/updated", (n) => void updated.push(n.params.uri));
    client.setNotificationHandler("notifications/message", (n) => {
      if (n.params.logger === "tool-layer") logged.push(n.params.data as { event: string; data: any });
      loggedWaiter?.();
    });
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      listChanged++;
      changedWaiter?.();
    });
    // --mcp-confirm none: these calls are about tags, previews and pushes; the confirmation gate has tests of its own.
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, "--mcp", "--root", ws.dir, "--mcp-config", config, "--mcp-confirm", "none"],
        stderr: "pipe",
        env: { ...process.env, XDG_STATE_HOME: state.dir } as Record<string, string>,
      }),
    );
  });
  afterAll(async () => {
    await client.close();
    ws.cleanup();
    state.cleanup();
  });

  async function toolNames(): Promise<string[]> {
    return (await client.listTools()).tools.map((t) => t.name);
  }

  it("lists every tool with its schema and annotations, a dry_run param on mutating ones, and not list/info/cancel", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["file_read", "file_write", "git_status", "search"]));
    for (const hidden of ["list", "info", "cancel", "session_end"]) expect(names).not.toContain(hidden);
    const read = tools.find((t) => t.name === "file_read")!;
    expect(read.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(read.inputSchema.properties).not.toHaveProperty("dry_run");
    const write = tools.find((t) => t.name === "file_write")!;
    expect(write.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(write.inputSchema.properties).toHaveProperty("dry_run");
    expect(write.inputSchema.properties).toHaveProperty("preview_id");
  });

  it("reads a file by tags and writes it by tags; a stale hash is an isError result with the code", async () => {
    const read = await client.callTool({ name: "file_read", arguments: { path: "a.txt" } });
    expect(textOf(read).split("\n")[1]).toBe(`1|${tagOf("one")} one`);
    const hash = (read.structuredContent as { hash: string }).hash;
    const written = await client.callTool({
      name: "file_write",
      arguments: { path: "a.txt", hash, edits: [{ type: "replace", startline: tagOf("two"), content: "TWO" }] },
    });
    expect(written.isError).toBeFalsy();
    expect(readFileSync(path.join(ws.dir, "a.txt"), "utf8")).toBe("one\nTWO\nthree\n");
    const stale = await client.callTool({ name: "file_write", arguments: { path: "a.txt", hash, content: "x\n" } });
    expect(stale.isError).toBe(true);
    expect(textOf(stale)).toMatch(/^HASH_MISMATCH: /);
    expect(stale.structuredContent).toMatchObject({ code: "HASH_MISMATCH", current_hash: fileHash(readFileSync(path.join(ws.dir, "a.txt"))) });
  });

  it("dry_run:true previews and changes nothing; the preview_id then binds the real call", async () => {
    const before = readFileSync(path.join(ws.dir, "a.txt"));
    const args = { path: "a.txt", hash: fileHash(before), content: "replaced\n" };
    const preview = await client.callTool({ name: "file_write", arguments: { ...args, dry_run: true } });
    expect(preview.structuredContent).toMatchObject({ dry_run: true, preview_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(readFileSync(path.join(ws.dir, "a.txt"))).toEqual(before);
    const ran = await client.callTool({
      name: "file_write",
      arguments: { ...args, preview_id: (preview.structuredContent as { preview_id: string }).preview_id },
    });
    expect(ran.isError).toBeFalsy();
    expect(readFileSync(path.join(ws.dir, "a.txt"), "utf8")).toBe("replaced\n");
    expect((await client.callTool({ name: "file_write", arguments: { ...args, dry_run: "yes" } })).isError).toBe(true);
  });

  it("resources/read gives the tagged rendering with its header line", async () => {
    const uri = pathToFileURL(path.join(ws.dir, "a.txt")).href;
    const r = await client.readResource({ uri });
    const text = (r.contents[0] as { text: string }).text;
    expect(text.split("\n")[0]).toMatch(/^file a\.txt · hash [0-9a-f]{16} · lines 1-1 of 1$/);
    expect(text.split("\n")[1]).toBe(`1|${tagOf("replaced")} replaced`);
    await expect(client.readResource({ uri: pathToFileURL(path.join(ws.dir, "nope.txt")).href })).rejects.toThrow(/NOT_FOUND/);
    await expect(client.readResource({ uri: "file:///etc/passwd" })).rejects.toThrow(/PATH_OUTSIDE_ROOT/);
  });

  it("resources/read stops at the first 2,000 lines", async () => {
    writeFileSync(path.join(ws.dir, "long.txt"), Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
    const r = await client.readResource({ uri: pathToFileURL(path.join(ws.dir, "long.txt")).href });
    const lines = (r.contents[0] as { text: string }).text.split("\n");
    expect(lines[0]).toMatch(/ · lines 1-2000 of 2500 · next offset 2001$/);
    expect(lines.at(-1)).toMatch(/^2000\|\w+ line 2000$/);
  });

  it("sends git.changed as a logging notification of logger tool-layer", async () => {
    const seen = new Promise<void>((resolve) => {
      loggedWaiter = () => logged.some((l) => l.event === "git.changed" && l.data.head) && resolve();
    });
    git(ws.dir, "commit", "-q", "--allow-empty", "-m", "first");
    await seen;
    const head = git(ws.dir, "rev-parse", "HEAD").trim();
    expect(logged.find((l) => l.event === "git.changed" && l.data.head)!.data).toMatchObject({ head, branch: "main" });
  });

  it("sends resources/updated when a subscribed file changes on disk", async () => {
    const file = path.join(ws.dir, "watched.txt");
    writeFileSync(file, "v1\n");
    const uri = pathToFileURL(file).href;
    await client.subscribeResource({ uri });
    writeFileSync(file, "v2\n");
    for (let i = 0; i < 500 && !updated.includes(uri); i++) await client.ping();
    expect(updated).toContain(uri);
  });

  it("sends tools/list_changed when a passthrough server's tools change", async () => {
    for (let i = 0; i < 500 && !(await toolNames()).includes("test_add_tool"); i++) await client.ping();
    const before = listChanged;
    const changed = new Promise<void>((resolve) => (changedWaiter = resolve));
    const r = await client.callTool({ name: "test_add_tool", arguments: { name: "brand_new" } });
    expect(r.isError).toBeFalsy();
    await changed;
    expect(listChanged).toBeGreaterThan(before);
    expect(await toolNames()).toContain("test_brand_new");
  });

  it("a cancelled call is cancelled in the daemon and on the passthrough server", async () => {
    const controller = new AbortController();
    const slow = client.callTool({ name: "test_slow", arguments: { ms: 60_000 } }, { signal: controller.signal });
    for (let started = 0; started < 1; )
      started = ((await client.callTool({ name: "test_slow_status", arguments: {} })).structuredContent as { started: number }).started;
    controller.abort();
    await expect(slow).rejects.toThrow();
    for (let seen = 0; seen < 1; )
      seen = ((await client.callTool({ name: "test_slow_status", arguments: {} })).structuredContent as { cancelled: number }).cancelled;
  });
});

describe("tool-layer --mcp on bad input", () => {
  it("answers a malformed message with a JSON-RPC error and goes on", async () => {
    const ws = tmpWorkspace();
    const child = spawn(process.execPath, [MAIN, "--mcp", "--root", ws.dir], { stdio: ["pipe", "pipe", "inherit"] });
    const lines: any[] = [];
    const waiters: { test: (l: any) => boolean; resolve: (l: any) => void }[] = [];
    createInterface({ input: child.stdout }).on("line", (line) => {
      const msg = JSON.parse(line);
      lines.push(msg);
      for (const w of waiters.splice(0)) w.test(msg) ? w.resolve(msg) : waiters.push(w);
    });
    const next = (test: (l: any) => boolean) => new Promise<any>((resolve) => (lines.find(test) ? resolve(lines.find(test)) : waiters.push({ test, resolve })));
    try {
      child.stdin.write(
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}\n',
      );
      await next((l) => l.id === 1);
      child.stdin.write("this is not json\n");
      expect((await next((l) => l.error?.code === -32700)).id).toBeNull();
      child.stdin.write('{"id":7,"method":42}\n');
      expect((await next((l) => l.error?.code === -32600)).id).toBe(7);
      child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
      expect((await next((l) => l.id === 2)).result.tools.length).toBeGreaterThan(10);
    } finally {
      child.stdin.end();
      await new Promise((r) => child.once("exit", r));
      ws.cleanup();
    }
  });
});
