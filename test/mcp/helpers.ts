import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll } from "vitest";
import { type SpawnServer, supervisedSpawn } from "../../src/mcp/child-transport.js";
import { type ServerConfig, parseMcpConfig } from "../../src/mcp/config.js";
import { Supervisor } from "../../src/platform/supervisor.js";

export const FIXTURE_SERVER = fileURLToPath(new URL("../fixtures/mcp-test-server.mjs", import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** One entry through the real parser, as a `--mcp-config` file would give it. */
export function serverEntry(name: string, entry: Record<string, unknown>, env: Record<string, string> = {}): ServerConfig {
  const cfg = parseMcpConfig(JSON.stringify({ mcpServers: { [name]: entry } }), { source: "mcp-config", file: "test.json", root: REPO_ROOT, env });
  if (cfg.problems.length) throw new Error(cfg.problems.map((p) => p.message).join("\n"));
  return cfg.servers[0];
}

/** The test server over stdio. */
export function fixtureEntry(name = "test", extraArgs: string[] = [], more: Record<string, unknown> = {}): ServerConfig {
  return serverEntry(name, { command: process.execPath, args: [FIXTURE_SERVER, ...extraArgs], ...more });
}

/** Starts servers as the daemon does (supervisedSpawn), on a supervisor of the calling test file's own, stopped after it. */
export function testSpawn(): SpawnServer {
  const processes = new Supervisor();
  afterAll(() => processes.stop());
  return supervisedSpawn(processes, "mcp test server");
}

/** Whether a process runs: a zombie (dead, not yet reaped by its parent) counts as gone. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Resolves once `pid` is gone: what a kill sent just now needs to take effect. Bounded by the test's timeout. */
export async function gone(pid: number): Promise<void> {
  while (alive(pid)) await new Promise((r) => setTimeout(r, 20));
}

/** A promise with its resolver, for callbacks a test waits on. */
export function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
