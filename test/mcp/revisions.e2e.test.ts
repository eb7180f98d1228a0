import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

const REVISION_SERVER = fileURLToPath(new URL("../fixtures/mcp-revision-server.mjs", import.meta.url));
const entry = (revision: string, ...more: string[]) => ({ command: process.execPath, args: [REVISION_SERVER, revision, ...more] });

/** A daemon with these servers in its --mcp-config, a state folder of its own (outside the workspace). */
async function daemonWith(servers: Record<string, unknown>, env: Record<string, string> = {}) {
  const ws = tmpWorkspace();
  const state = tmpWorkspace();
  const config = path.join(state.dir, "servers.json");
  writeFileSync(config, JSON.stringify({ mcpServers: servers }));
  const d = await startDaemon(ws.dir, ["--mcp-config", config], { XDG_STATE_HOME: state.dir, ...env });
  return { d, cleanup: async () => (await d.close(), ws.cleanup(), state.cleanup()) };
}

const toolsAdded = (d: DaemonClient, id: string) => d.waitFor((l) => l.event === "tools.changed" && l.data.added.includes(id), 30_000);

describe("passthrough of servers that speak one MCP revision each", () => {
  let d: DaemonClient;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ d, cleanup } = await daemonWith({ modern: entry("2026-07-28"), legacy: entry("2025-11-25") }));
    await Promise.all([toolsAdded(d, "modern_echo"), toolsAdded(d, "legacy_echo")]);
  });
  afterAll(() => cleanup());

  for (const [server, revision] of [
    ["modern", "2026-07-28"],
    ["legacy", "2025-11-25"],
  ] as const) {
    it(`${revision}: its tools are listed and called, and its list changes followed`, async () => {
      const status = (await d.ok("mcp_servers")).servers.find((s: { name: string }) => s.name === server);
      expect(status).toMatchObject({ state: "ready", protocol_version: revision, server_info: { name: `revision-${revision}` } });
      expect((await d.ok("info", { tool_id: `${server}_echo` })).read_only).toBe(true);
      const r = await d.ok(`${server}_echo`, { text: "hi" });
      expect(r).toMatchObject({ text: "hi", structuredContent: { echoed: "hi", revision } });
      const added = toolsAdded(d, `${server}_fresh`);
      await d.ok(`${server}_add_tool`, { name: "fresh" });
      expect((await added).data).toEqual({ added: [`${server}_fresh`], removed: [], changed: [] });
      expect((await d.ok(`${server}_fresh`)).text).toBe("fresh ran");
    });
  }
});

describe("no call lost to a server's start", () => {
  it("a call sent right after ready to a tool of a slow-starting server waits for it and succeeds; an unknown id names the server still connecting", async () => {
    // The server answers nothing for 1.5 s: calls sent at ready arrive while it is still connecting.
    const { d, cleanup } = await daemonWith({ slow: entry("2026-07-28", "--start-delay-ms", "1500") });
    try {
      const [echo, unknown] = await Promise.all([d.call("slow_echo", { text: "early" }), d.call("nothing_here", {})]);
      expect(unknown.result.code).toBe("NOT_AVAILABLE");
      expect(unknown.result.message).toContain('MCP server "slow" is still connecting; its tools are not listed yet.');
      expect(echo.success).toBe(true);
      expect(echo.result).toMatchObject({ text: "early", structuredContent: { revision: "2026-07-28" } });
    } finally {
      await cleanup();
    }
  });

  it("a call to a tool of a server that never comes up fails after the bound with MCP_SERVER_FAILED naming it and its state; one cancelled while it waits is CANCELLED", async () => {
    const { d, cleanup } = await daemonWith({ never: entry("2025-11-25", "--start-delay-ms", "600000") }, { TOOL_LAYER_MCP_START_WAIT_MS: "500" });
    try {
      // The call and its cancel in one write: both are read at once, the cancel while the call waits.
      const line = (toolcall_id: string, tool_id: string, params: Record<string, unknown>) =>
        JSON.stringify({ tool_id, session_id: "s1", toolcall_id, approved: true, params });
      d.sendRaw(`${line("waits", "never_echo", { text: "cancel me" })}\n${line("cancel-1", "cancel", { call_id: "waits" })}\n`);
      const [waited, cancel] = await Promise.all(["waits", "cancel-1"].map((id) => d.waitFor((l) => l.call_id === id)));
      expect(cancel.result).toMatchObject({ cancelled: true });
      expect(waited.result.code).toBe("CANCELLED");

      const r = await d.call("never_echo", { text: "lost?" });
      expect(r.result).toMatchObject({ code: "MCP_SERVER_FAILED", server: "never", state: "connecting" });
      expect(r.result.message).toContain('MCP server "never" is still connecting after 500 ms');
    } finally {
      await cleanup();
    }
  });
});
