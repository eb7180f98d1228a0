/** `${VAR}` values of MCP server entries are secrets: a model sees the references, never the values. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { FIXTURE_SERVER } from "./helpers.js";

const SECRET = "ghp_s3cretV4lue0fTheT0ken";
const REF = "${GH_TOKEN}";
/** Prints its arguments and API_KEY on stderr, as a server that logs its configuration does, then fails. */
const TELLS_ALL = "console.error('args:', process.argv.slice(1).join(' '), 'key:', process.env.API_KEY); process.exit(1)";

const mcpJson = {
  mcpServers: {
    works: { command: process.execPath, args: [FIXTURE_SERVER, `--token=${REF}`], env: { API_KEY: REF } },
    tells: { command: process.execPath, args: ["-e", TELLS_ALL, "--", `--token=${REF}`], env: { API_KEY: `Bearer ${REF}` } },
    remote: { type: "http", url: `http://127.0.0.1:9/mcp?key=${REF}`, headers: { Authorization: `Bearer ${REF}` } },
  },
};

describe("secrets in .mcp.json entries", () => {
  const ws = tmpWorkspace({ git: true, files: { ".mcp.json": JSON.stringify(mcpJson) } });
  const stateDir = mkdtempSync(path.join(tmpdir(), "tool-layer-state-"));
  let d: DaemonClient;
  beforeAll(async () => {
    d = await startDaemon(ws.dir, [], { XDG_STATE_HOME: stateDir, GH_TOKEN: SECRET });
  });
  afterAll(async () => {
    await d.close();
    ws.cleanup();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it("mcp_approve previews each entry with its references: args, env, URL and headers", async () => {
    const preview = await d.ok("mcp_approve", {}, { approved: false });
    expect(JSON.stringify(preview)).not.toContain(SECRET);
    const command = (name: string) => preview.servers.find((s: { server: string }) => s.server === name).command as string;
    expect(command("works")).toContain(`--token=${REF}`);
    expect(command("works")).toContain(`API_KEY=${REF}`);
    expect(command("remote")).toContain(`key=${REF}`);
    expect(command("remote")).toContain(`Authorization: Bearer ${REF}`);
    expect(preview.text).toContain(`--token=${REF}`);
  });

  it("once they run: mcp_servers, info and the failures' stderr show references; the servers get the values", async () => {
    const added = d.waitFor((l) => l.event === "tools.changed" && l.data.added.includes("works_echo"), 30_000);
    await d.ok("mcp_approve", {});
    await added;
    let servers: { name: string; state: string; stderr_tail: string }[] = [];
    // No event says a server failed: ask until both have (each answer is a fresh look).
    while (!["tells", "remote"].every((n) => servers.find((s) => s.name === n)?.state === "failed")) servers = (await d.ok("mcp_servers")).servers;
    const tells = servers.find((s) => s.name === "tells");
    expect(tells?.stderr_tail).toContain(`args: --token=${REF} key: Bearer ${REF}`);
    expect((await d.ok("mcp_servers")).text).toContain(`--token=${REF}`);
    await d.ok("info", { tool_id: "works_echo" });
    // Nothing the daemon wrote on stdout so far (answers and events) has the value.
    expect(d.lines.filter((l) => JSON.stringify(l).includes(SECRET))).toEqual([]);
    // The servers do get it.
    expect((await d.ok("works_env", { name: "API_KEY" })).text).toBe(SECRET);
  });
});
