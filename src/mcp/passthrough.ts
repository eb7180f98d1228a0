import { ToolError } from "../errors.js";
import { ApprovalStore, approvalsFile } from "./approvals.js";
import { CODEGRAPH_SERVER_NAME, codegraphIndexed, codegraphInstalled, codegraphServerEntry } from "./codegraph.js";
import { type CodegraphHost, CodegraphSync } from "./codegraph-sync.js";
import { type ConfigProblem, type ServerConfig, WORKSPACE_CONFIG_FILE, describeEntry } from "./config.js";
import { loadMcpConfig } from "./load-config.js";
import { assignToolIds, mayBeToolOf } from "./naming.js";
import type { McpToolInfo, ServerConnection, ServerStatus } from "./server-connection.js";

/**
 * How long a call to a tool of a server still starting waits for it (its tools are not listed before): long enough for
 * a server that starts slowly, short of a call's own timeout. `TOOL_LAYER_MCP_START_WAIT_MS` sets it (for tests).
 */
export const START_WAIT_MS = 10_000;

function startWaitMs(): number {
  const set = Number(process.env.TOOL_LAYER_MCP_START_WAIT_MS);
  return Number.isFinite(set) && set > 0 ? set : START_WAIT_MS;
}

/** What the passthrough needs from the workspace around it (the Workspace is one; mcp/ never imports it). */
export type McpHost = CodegraphHost;

/** One tool a server serves, as the tool layer (tools/mcp-passthrough.ts) makes a tool of it. */
export interface ServedTool {
  /** The server's name. */
  server: string;
  /** The tool's id in the registry, stable across list changes. */
  id: string;
  config: ServerConfig;
  connection: ServerConnection;
  info: McpToolInfo;
  /** `info` as JSON: an unchanged tool keeps its definition, so `tools.changed` names only real changes. */
  infoJson: string;
}

export type CodegraphMode = "auto" | "on" | "off";

export interface PassthroughOptions {
  /** `--mcp-config FILE`: trusted, since the daemon's caller named it. */
  configFile?: string;
  /** The daemon's state folder (approvals live there, keyed by the root's real path). */
  stateDir: string;
  /** auto: CodeGraph's server when it is installed and the root is indexed; on: index the root first if need be. */
  codegraph: CodegraphMode;
}

/** One configured server as the daemon knows it: its entry, whether it may run, its connection and its tools' ids. */
interface Server {
  config: ServerConfig;
  /** Why it is not running: a workspace entry nobody approved, or one whose entry changed since. */
  blocked?: string;
  connection?: ServerConnection;
  /** Set while the connection is being made (the SDK is loaded lazily), so two reloads never make two. */
  connecting?: Promise<void>;
  ids: Map<string, string>;
}

/**
 * The user's MCP servers (`.mcp.json`, `--mcp-config`) and CodeGraph, passed through (SPEC 12): each server's tools are
 * a provider's tools in the registry (tools/mcp-passthrough.ts), so they come and go with `tools.changed`. Servers named in the workspace's own
 * `.mcp.json` start only once their entry is approved, and a change to an entry withdraws its approval.
 */
export class McpPassthrough {
  private readonly servers = new Map<string, Server>();
  private problems: ConfigProblem[] = [];
  private served: ServedTool[] = [];
  private readonly approvals: ApprovalStore;
  private stopped = false;
  private reloading: Promise<void> = Promise.resolve();
  private codegraphSync?: CodegraphSync;

  constructor(
    private readonly ws: McpHost,
    private readonly onChange: () => void,
    private readonly options: PassthroughOptions,
  ) {
    this.approvals = new ApprovalStore(approvalsFile(options.stateDir, ws.root), ws.root);
  }

  /** Every ready server's tools, in server order. */
  tools(): readonly ServedTool[] {
    return this.served;
  }

  /** A call to a tool of a server still starting waits for the server's listing, at most START_WAIT_MS. */
  awaitTool(id: string, signal: AbortSignal): Promise<void> | undefined {
    const server = this.starting().find((s) => mayBeToolOf(s.config.name, id));
    return server && this.untilStarted(server, signal);
  }

  /** The servers still connecting, in a sentence for an unknown id's NOT_AVAILABLE; undefined when none is. */
  notYet(): string | undefined {
    const names = this.starting().map((s) => JSON.stringify(s.config.name));
    if (!names.length) return undefined;
    const one = names.length === 1;
    return `MCP server${one ? "" : "s"} ${names.join(", ")} ${one ? "is" : "are"} still connecting; ${one ? "its" : "their"} tools are not listed yet.`;
  }

  /** Reads the configuration and starts what may start, without waiting for the servers (`ready` does not). */
  async start(): Promise<void> {
    await this.reload();
    this.ws.bus.on("fs.changed", ({ changes }) => {
      if (changes.some((c) => c.path === WORKSPACE_CONFIG_FILE)) this.reloading = this.reloading.then(() => this.reload());
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.codegraphSync?.stop();
    await Promise.all([...this.servers.values()].map((s) => s.connection?.close()));
  }

  /** Every server, for `mcp_servers` and `info`. */
  status(): { servers: Record<string, unknown>[]; problems: ConfigProblem[] } {
    return {
      servers: [...this.servers.values()].map((s) => ({
        ...(s.connection?.status() ?? { name: s.config.name, source: s.config.source, transport: s.config.transport, state: stateOf(s), tool_count: 0 }),
        ...(s.blocked ? { blocked: s.blocked } : {}),
        command: describeEntry(s.config),
        tools: [...s.ids.values()],
      })),
      problems: this.problems,
    };
  }

  /** The workspace servers an approval would cover now (all waiting ones, or the one named). */
  pendingApprovals(server?: string): ServerConfig[] {
    const waiting = [...this.servers.values()].filter((s) => s.config.source === "workspace" && s.blocked).map((s) => s.config);
    if (server === undefined) return waiting;
    const named = this.servers.get(server);
    if (!named) throw new ToolError("NOT_FOUND", `No MCP server is named "${server}"; mcp_servers lists them.`);
    if (named.config.source !== "workspace")
      throw new ToolError(
        "INVALID_PARAMS",
        `server: "${server}" comes from ${named.config.source === "builtin" ? "the daemon itself" : "--mcp-config"} and needs no approval.`,
      );
    return waiting.filter((c) => c.name === server);
  }

  async approve(configs: ServerConfig[]): Promise<void> {
    for (const c of configs) await this.approvals.approve(c.name, c.digest);
    await this.reload();
  }

  async revoke(server: string): Promise<boolean> {
    const withdrawn = await this.approvals.revoke(server);
    await this.reload();
    return withdrawn;
  }

  /** Reads the configuration again and brings the servers in line: changed or removed entries stop, new approved ones start. */
  private async reload(): Promise<void> {
    if (this.stopped) return;
    const config = await loadMcpConfig(this.ws.root, this.options.configFile);
    const entries = [...config.servers];
    const codegraph = this.codegraphEntry();
    if (codegraph && !entries.some((e) => e.name === CODEGRAPH_SERVER_NAME)) entries.push(codegraph);
    this.problems = config.problems;
    for (const p of config.problems) this.ws.log(`MCP configuration: ${p.message}`);

    const wanted = new Map(entries.map((e) => [e.name, e]));
    for (const [name, server] of this.servers) {
      const next = wanted.get(name);
      if (!next || next.digest !== server.config.digest) {
        await server.connection?.close();
        this.servers.delete(name);
      }
    }
    for (const config of entries) {
      const approved = config.source !== "workspace" || (await this.approvals.isApproved(config.name, config.digest));
      let server = this.servers.get(config.name);
      if (!server) this.servers.set(config.name, (server = { config, ids: new Map() }));
      server.blocked = approved ? undefined : `its entry in ${WORKSPACE_CONFIG_FILE} is not approved; mcp_approve starts it`;
      if (!approved && server.connection) {
        await server.connection.close();
        server.connection = undefined;
      }
      if (approved && !server.connection) server.connecting ??= this.connect(server).finally(() => (server.connecting = undefined));
    }
    this.rebuild();
  }

  /** The servers whose tools are not listed yet because they are still starting (not those waiting for approval). */
  private starting(): Server[] {
    return [...this.servers.values()].filter((s) => !s.blocked && (s.connecting !== undefined || s.connection?.state === "connecting"));
  }

  /** Resolves once `server` is up (its tools listed); rejects with MCP_SERVER_FAILED when it failed or is still starting at the bound. */
  private async untilStarted(server: Server, signal: AbortSignal): Promise<void> {
    const boundMs = startWaitMs();
    const started = server.connecting ?? server.connection?.start();
    let timer: NodeJS.Timeout | undefined;
    let onAbort = () => {};
    const outcome = await Promise.race([
      Promise.resolve(started).then(
        () => "started",
        () => "started",
      ),
      new Promise<string>((resolve) => (timer = setTimeout(() => resolve("bound"), boundMs))),
      new Promise<string>((resolve) => signal.addEventListener("abort", (onAbort = () => resolve("aborted")), { once: true })),
    ]).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    });
    if (outcome === "aborted") throw signal.reason;
    const connection = server.connection;
    if (outcome === "started") {
      if (connection?.state === "ready" || this.servers.get(server.config.name) !== server) return;
      throw (
        connection?.failure() ??
        new ToolError("MCP_SERVER_FAILED", `MCP server "${server.config.name}" did not start; mcp_servers says why.`, {
          server: server.config.name,
          state: stateOf(server),
        })
      );
    }
    const state = connection?.state ?? stateOf(server);
    throw new ToolError(
      "MCP_SERVER_FAILED",
      `MCP server "${server.config.name}" is still ${state} after ${boundMs} ms, so its tools are not listed yet; call again later, or see mcp_servers for how it is doing.`,
      { server: server.config.name, state, ...(connection ? { stderr_tail: connection.status().stderr_tail } : {}) },
    );
  }

  private codegraphEntry(): ServerConfig | null {
    if (this.options.codegraph === "off" || !codegraphInstalled()) return null;
    if (!codegraphIndexed(this.ws.root) && this.options.codegraph !== "on") return null;
    this.codegraphSync ??= new CodegraphSync(this.ws, this.options.stateDir);
    return codegraphServerEntry(this.ws.root, this.options.stateDir);
  }

  private async connect(server: Server): Promise<void> {
    const { ServerConnection } = await import("./server-connection.js"); // the SDK takes ~350 ms to load: not before ready
    const { supervisedSpawn } = await import("./child-transport.js");
    if (this.stopped || this.servers.get(server.config.name) !== server || server.blocked) return;
    server.connection = new ServerConnection(server.config, {
      // A user's server gets the SDK's default variables (HOME, PATH, USER, …) and its entry's: none of the daemon's secrets.
      spawn: supervisedSpawn(this.ws.processes, `mcp ${server.config.name}`),
      onToolsChanged: () => this.rebuild(),
      onWarning: (m) => this.ws.log(`MCP server ${server.config.name}: ${m}`),
    });
    if (server.config.name === CODEGRAPH_SERVER_NAME) await this.codegraphSync?.ensureIndexed();
    if (!server.connection) return; // withdrawn meanwhile
    await server.connection.start().then(
      () => this.rebuild(),
      (e: unknown) => this.ws.log(`MCP server ${server.config.name} did not start: ${(e as Error).message}`),
    );
  }

  /** Every server's tools, ids kept stable across list changes. */
  private rebuild(): void {
    const taken = new Set<string>();
    const served: ServedTool[] = [];
    for (const server of this.servers.values()) {
      const connection = server.connection;
      const tools = connection && (connection.state === "ready" || connection.tools.length) ? connection.tools : [];
      server.ids = assignToolIds(
        server.config.name,
        tools.map((t) => t.name),
        taken,
        server.ids,
      );
      for (const t of tools) {
        const id = server.ids.get(t.name)!;
        taken.add(id);
        served.push({ server: server.config.name, id, config: server.config, connection: connection!, info: t, infoJson: JSON.stringify(t) });
      }
    }
    this.served = served;
    this.onChange();
  }

  /** Calls a served tool on its server; CodeGraph's index is brought up to date with the disk first. */
  async call(tool: ServedTool, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
    if (tool.server === CODEGRAPH_SERVER_NAME) await this.codegraphSync?.fresh();
    return { ...(await tool.connection.callTool(tool.info.name, params, { signal })) };
  }
}

/** A server's state before it has a connection. */
function stateOf(s: Server): string {
  if (s.blocked) return "not approved";
  return s.connecting ? "connecting" : "idle";
}

export type { ServerStatus };
