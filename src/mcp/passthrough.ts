import { z } from "zod";
import type { ToolProvider } from "../dispatch/registry.js";
import { ToolError } from "../errors.js";
import { ensureExcluded } from "../git/info-exclude.js";
import type { AnyTool, ToolContext } from "../tools/tool.js";
import type { Workspace } from "../workspace.js";
import { ApprovalStore, approvalsFile } from "./approvals.js";
import type { SpawnServer } from "./child-transport.js";
import { CODEGRAPH_DIR, CODEGRAPH_SERVER_NAME, codegraphIndexed, codegraphInstalled, codegraphServerEntry, initCommand, syncCommand } from "./codegraph.js";
import { type ConfigProblem, type ServerConfig, WORKSPACE_CONFIG_FILE, describeEntry } from "./config.js";
import { loadMcpConfig } from "./load-config.js";
import { assignToolIds, mayBeToolOf } from "./naming.js";
import { portableSchema } from "./portable-schema.js";
import type { McpToolInfo, ServerConnection, ServerStatus } from "./server-connection.js";

/** After the last file change, CodeGraph's sync waits this long: a save burst (a checkout, a build) is one sync of ~2.5 s. */
export const CODEGRAPH_SYNC_DEBOUNCE_MS = 1_000;
/** Above the connection's own timeout, so the call answers the connection's TIMEOUT (and cancels on the server) first. */
const DISPATCH_MARGIN_MS = 5_000;
/**
 * How long a call to a tool of a server still starting waits for it (its tools are not listed before): long enough for
 * a server that starts slowly, short of a call's own timeout. `TOOL_LAYER_MCP_START_WAIT_MS` sets it (for tests).
 */
export const START_WAIT_MS = 10_000;

function startWaitMs(): number {
  const set = Number(process.env.TOOL_LAYER_MCP_START_WAIT_MS);
  return Number.isFinite(set) && set > 0 ? set : START_WAIT_MS;
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
  /** The definitions made last, by tool id: an unchanged tool keeps its definition, so `tools.changed` names only real changes. */
  defs: Map<string, MadeDef>;
}

interface MadeDef {
  connection: ServerConnection;
  /** The server's description of the tool, as JSON. */
  info: string;
  def: AnyTool;
}

/**
 * The user's MCP servers (`.mcp.json`, `--mcp-config`) and CodeGraph, passed through (SPEC 12): each server's tools are
 * a provider's tools in the registry, so they come and go with `tools.changed`. Servers named in the workspace's own
 * `.mcp.json` start only once their entry is approved, and a change to an entry withdraws its approval.
 */
export class McpPassthrough implements ToolProvider {
  readonly name = "mcp";
  private readonly servers = new Map<string, Server>();
  private problems: ConfigProblem[] = [];
  private defs: AnyTool[] = [];
  private readonly approvals: ApprovalStore;
  private stopped = false;
  private reloading: Promise<void> = Promise.resolve();
  private codegraphSync?: CodegraphSync;

  constructor(
    private readonly ws: Workspace,
    private readonly onChange: () => void,
    private readonly options: PassthroughOptions,
  ) {
    this.approvals = new ApprovalStore(approvalsFile(options.stateDir, ws.root), ws.root);
  }

  tools(): readonly AnyTool[] {
    return this.defs;
  }

  /** A call to a tool of a server still starting waits for the server's listing, at most START_WAIT_MS. */
  awaitTool(id: string, signal: AbortSignal): Promise<void> | undefined {
    const server = this.starting().find((s) => mayBeToolOf(s.config.name, id));
    return server && this.untilStarted(server, signal);
  }

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
    if (named.config.source !== "workspace") throw new ToolError("INVALID_PARAMS", `server: "${server}" comes from ${named.config.source === "builtin" ? "the daemon itself" : "--mcp-config"} and needs no approval.`);
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
      if (!server) this.servers.set(config.name, (server = { config, ids: new Map(), defs: new Map() }));
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
      Promise.resolve(started).then(() => "started", () => "started"),
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
      throw connection?.failure() ?? new ToolError("MCP_SERVER_FAILED", `MCP server "${server.config.name}" did not start; mcp_servers says why.`, { server: server.config.name, state: stateOf(server) });
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
    const { getDefaultEnvironment } = await import("@modelcontextprotocol/client/stdio");
    if (this.stopped || this.servers.get(server.config.name) !== server || server.blocked) return;
    const label = `mcp ${server.config.name}`;
    // A user's server gets the SDK's default variables (HOME, PATH, USER, …) and its entry's: none of the daemon's secrets.
    const spawn: SpawnServer = (spec) =>
      this.ws.processes.attach({ cmd: spec.command, args: spec.args, cwd: spec.cwd, exactEnv: { ...getDefaultEnvironment(), ...spec.env }, stdin: "pipe", label });
    server.connection = new ServerConnection(server.config, {
      spawn,
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

  /** The registry's view of every server's tools, ids kept stable across list changes. */
  private rebuild(): void {
    const taken = new Set<string>();
    const defs: AnyTool[] = [];
    for (const server of this.servers.values()) {
      const connection = server.connection;
      const tools = connection && (connection.state === "ready" || connection.tools.length) ? connection.tools : [];
      server.ids = assignToolIds(server.config.name, tools.map((t) => t.name), taken, server.ids);
      const made = new Map<string, MadeDef>();
      for (const t of tools) {
        const id = server.ids.get(t.name)!;
        taken.add(id);
        const info = JSON.stringify(t);
        const before = server.defs.get(id);
        const def = before && before.connection === connection && before.info === info ? before.def : this.toolDef(server, t, id);
        made.set(id, { connection: connection!, info, def });
        defs.push(def);
      }
      server.defs = made;
    }
    this.defs = defs;
    this.onChange();
  }

  private toolDef(server: Server, t: McpToolInfo, id: string): AnyTool {
    const connection = server.connection!;
    const schema = portableSchema(t.inputSchema as Record<string, unknown>);
    const isCodegraph = server.config.name === CODEGRAPH_SERVER_NAME;
    return {
      id,
      provider: server.config.name,
      description: `${server.config.name}: ${t.description || t.title || t.name}`,
      params: paramsOf(schema),
      jsonSchema: schema,
      mutating: !t.readOnly,
      hints: {
        read_only: t.readOnly,
        destructive: t.annotations?.destructiveHint,
        idempotent: t.annotations?.idempotentHint,
        open_world: t.annotations?.openWorldHint,
      },
      timeoutMs: server.config.timeoutMs + DISPATCH_MARGIN_MS,
      state: () => ({ server: connection.status(), tool: t.name }),
      run: async (params: Record<string, unknown>, ctx: ToolContext) => {
        if (ctx.dryRun) {
          return { server: server.config.name, tool: t.name, arguments: params, text: `would call ${t.name} on MCP server ${server.config.name} with ${JSON.stringify(params)}` };
        }
        if (isCodegraph) await this.codegraphSync?.fresh();
        return { ...(await connection.callTool(t.name, params, { signal: ctx.signal })) };
      },
    };
  }
}

/** A server's JSON Schema as the dispatcher's check; a schema zod cannot read is checked by the server alone. */
function paramsOf(schema: Record<string, unknown>): z.ZodType {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return z.looseObject({});
  }
}

/**
 * Keeps CodeGraph's index fresh from the bus (SPEC 12): after files change (outside `.codegraph/`), its own incremental
 * sync runs, debounced and one at a time; a query first waits until what the disk has is in the index.
 */
class CodegraphSync {
  private dirty = false;
  private timer?: NodeJS.Timeout;
  private running: Promise<void> = Promise.resolve();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly ws: Workspace,
    private readonly stateDir: string,
  ) {
    this.unsubscribe = ws.bus.on("fs.changed", ({ changes }) => {
      if (!changes.some((c) => !c.path.startsWith(`${CODEGRAPH_DIR}/`))) return;
      this.dirty = true;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.sync(), CODEGRAPH_SYNC_DEBOUNCE_MS);
      this.timer.unref();
    });
  }

  /** The first index of the root, when `--codegraph on` asked for one; its folder kept out of git either way. */
  async ensureIndexed(): Promise<void> {
    await ensureExcluded({ repo: this.ws.git }, `/${CODEGRAPH_DIR}/`).catch((e: Error) => this.ws.log(`could not keep ${CODEGRAPH_DIR}/ out of git: ${e.message}`));
    if (codegraphIndexed(this.ws.root)) return;
    const cmd = initCommand(this.ws.root, this.stateDir);
    if (cmd) await this.run(cmd, "init");
  }

  /** Resolves once every change the disk has is in the index. */
  async fresh(): Promise<void> {
    await this.ws.settle();
    if (this.dirty) {
      clearTimeout(this.timer);
      await this.sync();
    }
    await this.running;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.unsubscribe();
  }

  private sync(): Promise<void> {
    this.running = this.running.then(async () => {
      if (!this.dirty) return;
      this.dirty = false;
      const cmd = syncCommand(this.ws.root, this.stateDir);
      if (cmd) await this.run(cmd, "sync");
    });
    return this.running;
  }

  private async run(cmd: { argv: string[]; env: Record<string, string>; cwd: string }, what: string): Promise<void> {
    const [bin, ...args] = cmd.argv;
    const r = await this.ws.processes.run({ cmd: bin, args, cwd: cmd.cwd, env: cmd.env, label: `codegraph ${what}` }, { timeoutMs: 600_000 }).catch((e: Error) => ({ code: null, stderr: e.message, timedOut: false }));
    if (r.code !== 0) this.ws.log(`codegraph ${what} failed (exit ${r.code}): ${r.stderr.trim().slice(-500)}`);
  }
}

/** A server's state before it has a connection. */
function stateOf(s: Server): string {
  if (s.blocked) return "not approved";
  return s.connecting ? "connecting" : "idle";
}

export type { ServerStatus };
