/** tool-layer/client (src/client/) against the built daemon: typed calls, events, cancel, session_end, shutdown. */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EventLine, ToolCallError, ToolLayerClient } from "../../src/client/index.js";
import { MAIN } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

const command: [string, string] = [process.execPath, MAIN];

describe("ToolLayerClient", () => {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "one\ntwo\n" } });
  let client: ToolLayerClient;
  beforeAll(async () => {
    client = await ToolLayerClient.start({ root: ws.dir, command });
  });
  afterAll(async () => {
    await client.close();
    ws.cleanup();
  });

  it("calls typed tools: a dry run by default, approved when asked, a failure as ToolCallError", async () => {
    const read = await client.ok("file_read", { path: "a.txt" });
    expect(read.total_lines).toBe(2);
    const preview = await client.ok("file_write", { path: "a.txt", hash: read.hash, content: "ONE\n" });
    expect(preview).toMatchObject({ dry_run: true, path: "a.txt" });
    const written = await client.ok("file_write", { path: "a.txt", hash: read.hash, content: "ONE\n", preview_id: preview.preview_id }, { approved: true });
    expect(written.dry_run).toBeUndefined();
    const answer = await client.call("file_read", { path: "missing.txt" });
    expect(answer.success ? null : answer.result.code).toBe("NOT_FOUND");
    const failure = await client.ok("file_read", { path: "missing.txt" }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ToolCallError);
    expect((failure as ToolCallError).code).toBe("NOT_FOUND");
    // @ts-expect-error: path is a string
    const bad = await client.call("file_read", { path: 1 });
    expect(bad.success ? null : bad.result.code).toBe("INVALID_PARAMS");
  });

  it("streams the events pushed after it is asked, in order, as an async iterator", async () => {
    const events = client.events();
    writeFileSync(path.join(ws.dir, "b.txt"), "bee\n");
    const seen: EventLine[] = [];
    for await (const e of events) {
      seen.push(e);
      if (e.event === "fs.changed" && e.data.changes.some((c) => c.path === "b.txt")) break;
    }
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => seen[0].seq + i));
    expect(seen.every((e) => e.event !== "ready")).toBe(true);
  });

  it("cancels a running call when its signal aborts, and ends a session", async () => {
    const abort = new AbortController();
    const running = client.call("terminal_run", { command: "sleep 30" }, { approved: true, signal: abort.signal });
    await client.ok("terminal_jobs"); // the daemon has read the call before the abort
    abort.abort();
    const answer = await running;
    expect(answer.success ? null : answer.result.code).toBe("CANCELLED");
    expect(await client.cancel("not-running")).toBe(false);
    expect(await client.endSession("s1")).toMatchObject({ session: "s1" });
  });
});

describe("ToolLayerClient and a daemon that ends", () => {
  it("closes the daemon with exit 0, and after it calls reject and the event iterator ends", async () => {
    const ws = tmpWorkspace({ files: { "a.txt": "x\n" } });
    try {
      const client = await ToolLayerClient.start({ root: ws.dir, command });
      const events = client.events();
      expect(await client.close()).toEqual({ code: 0, signal: null });
      expect(await events.next()).toEqual({ value: undefined, done: true });
      await expect(client.call("list")).rejects.toThrow(/exited/);
    } finally {
      ws.cleanup();
    }
  });

  it("counts stdout lines that are not JSON objects (npm start's banner) and still finds ready after them", async () => {
    const ws = tmpWorkspace({ files: { "a.txt": "x\n" } });
    try {
      const banner: [string, ...string[]] = ["sh", "-c", 'printf "> tool-layer@0.1.0 start\\n[1]\\n"; exec "$0" "$@"', ...command];
      const client = await ToolLayerClient.start({ root: ws.dir, command: banner });
      expect(client.badLines).toBe(2);
      expect((await client.ok("list")).tools.length).toBeGreaterThan(0);
      await client.close();
    } finally {
      ws.cleanup();
    }
  });

  it("rejects ready with the daemon's stderr when it cannot start", async () => {
    const client = new ToolLayerClient({ root: "/nonexistent/root", command });
    await expect(client.ready()).rejects.toThrow(/before ready.*nonexistent/s);
    expect((await client.exited).code).toBe(2);
  });
});
