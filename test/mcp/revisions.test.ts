import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/mcp/config.js";
import { type ConnectionOptions, ServerConnection } from "../../src/mcp/server-connection.js";
import { serverEntry, testSpawn } from "./helpers.js";

const REVISION_SERVER = fileURLToPath(new URL("../fixtures/mcp-revision-server.mjs", import.meta.url));
const entry = (...args: string[]) => serverEntry("rev", { command: process.execPath, args: [REVISION_SERVER, ...args] });

const spawn = testSpawn();
const opened: ServerConnection[] = [];
function connection(config: ServerConfig, opts: Partial<ConnectionOptions> = {}): ServerConnection {
  const c = new ServerConnection(config, { spawn, ...opts });
  opened.push(c);
  return c;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
});

describe("ServerConnection finds the revision a server speaks, when the probe alone cannot tell", () => {
  it("a 2026-07-28 server slower to start than the probe waits refuses initialize; it is then connected as 2026-07-28", async () => {
    const c = connection(entry("2026-07-28", "--start-delay-ms", "1000"), { probeTimeoutMs: 100 });
    await c.start();
    expect(c.status()).toMatchObject({ state: "ready", protocol_version: "2026-07-28" });
    expect((await c.callTool("echo", { text: "late" })).structuredContent).toEqual({ echoed: "late", revision: "2026-07-28" });
  });

  it("a 2025-11-25 server that exits on the probe is started again and connected with initialize", async () => {
    const c = connection(entry("2025-11-25", "--exit-on-discover"));
    await c.start();
    expect(c.status()).toMatchObject({ state: "ready", protocol_version: "2025-11-25" });
    expect((await c.callTool("echo", { text: "ok" })).text).toBe("ok");
  });

  it("a restart goes straight to the revision found: a crashed 2026-07-28 server comes back as one", async () => {
    const c = connection(entry("2026-07-28"));
    await c.start();
    process.kill(c.status().pid!, "SIGKILL");
    for (;;) {
      // The crash is noticed when the pipe closes; a call then restarts the server.
      const r = await c.callTool("echo", { text: "again" }).catch((e: Error) => e);
      if (!(r instanceof Error)) break;
      expect(r.message).toMatch(/killed by SIGKILL|restarted on the next call/);
    }
    expect(c.status()).toMatchObject({ state: "ready", protocol_version: "2026-07-28", restarts: 1 });
  });
});
