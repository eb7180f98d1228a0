import {
  type CallToolResult,
  Client,
  type Implementation,
  type PriorDiscovery,
  ProtocolError,
  ProtocolErrorCode,
  SSEClientTransport,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  type Tool,
  type ToolAnnotations,
  type Transport,
} from "@modelcontextprotocol/client";
import { ToolError } from "../errors.js";
import { ChildProcessTransport, type SpawnServer } from "./child-transport.js";
import { type ServerConfig, type ServerSource, redact } from "./config.js";
import { type PassthroughResult, renderContent } from "./results.js";
import { stderrCause } from "./stderr-cause.js";

/**
 * One connection to one configured MCP server (SPEC 12) through the SDK's Client: stdio over a child process the
 * daemon starts, or Streamable HTTP (and the older SSE). Knows the server's tools, forwards calls with a timeout and
 * cancel, follows `tools/list_changed`, notices a crash, and restarts on the next call, a bounded number of times.
 */

export type ServerState = "idle" | "connecting" | "ready" | "failed" | "crashed" | "closed";

export interface McpToolInfo {
  /** The server's own name for the tool (the registry maps it to an id). */
  name: string;
  title?: string;
  description: string;
  inputSchema: Tool["inputSchema"];
  outputSchema?: Tool["outputSchema"];
  annotations?: ToolAnnotations;
  /** Only a tool the server marks `readOnlyHint: true` is read-only; any other is mutating (SPEC 12). */
  readOnly: boolean;
}

export interface ServerStatus {
  name: string;
  source: ServerSource;
  transport: ServerConfig["transport"];
  state: ServerState;
  pid: number | null;
  tool_count: number;
  last_error: string | null;
  stderr_tail: string;
  restarts: number;
  /** Lines on stdout that were not JSON-RPC (skipped, not fatal), and the last of them. */
  garbage_lines: number;
  last_garbage: string | null;
  server_info: Implementation | null;
  /** The MCP revision the connection speaks (2026-07-28 or a 2025 one), once connected. */
  protocol_version: string | null;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Defaults to the entry's `timeout_ms` (60 s). */
  timeoutMs?: number;
  /** The server's progress notifications for this call (it is asked for them only when this is given). */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

export interface ConnectionOptions {
  /** Starts stdio servers: the daemon's supervisor's (supervisedSpawn), so no server runs outside its supervision. */
  spawn: SpawnServer;
  clientInfo?: Implementation;
  connectTimeoutMs?: number;
  /** How long the `server/discover` probe waits (PROBE_TIMEOUT_MS). */
  probeTimeoutMs?: number;
  maxRestarts?: number;
  restartWindowMs?: number;
  /** The server's tools changed (a `tools/list_changed`, or a restart that brought another list). */
  onToolsChanged?: (tools: McpToolInfo[]) => void;
  onStateChange?: (status: ServerStatus) => void;
  /** Something a person should see on stderr that does not stop the server (a garbage line on stdout). */
  onWarning?: (message: string) => void;
}

/** Spawn plus `initialize` plus the first `tools/list` takes about 0.4 s here; a server that needs 30 s is broken. */
export const CONNECT_TIMEOUT_MS = 30_000;
/**
 * How long the `server/discover` probe waits before taking a silent server for a 2025 one (a 2025 server built on an SDK
 * answers at once with "method not found"; one that ignores the request costs this long). A 2026-07-28 server slower
 * than this to start answers the 2025 `initialize` with -32022, and is then connected as 2026-07-28 (see connect).
 */
export const PROBE_TIMEOUT_MS = 5_000;
/** Restarts allowed within RESTART_WINDOW_MS: enough for a rare crash, not a crash loop on every call. */
export const MAX_RESTARTS = 3;
export const RESTART_WINDOW_MS = 10 * 60_000;
/**
 * `tools/list_changed` notifications closer than this are one refresh: a server that adds ten tools sends ten.
 * Small, because the registry's update should follow within 100 ms (the SDK's default is 300).
 */
export const LIST_CHANGED_DEBOUNCE_MS = 10;
const DEFAULT_CLIENT_INFO: Implementation = { name: "tool-layer", version: "0.1.0" };

export class ServerConnection {
  private stateValue: ServerState = "idle";
  private client: Client | null = null;
  private transport: Transport | null = null;
  private toolList: McpToolInfo[] = [];
  /** Whether a listing ever succeeded: a restart compares against it. */
  private listed = false;
  private lastError: string | null = null;
  private restartTimes: number[] = [];
  private restartCount = 0;
  private garbageLines = 0;
  /** The revision the server spoke when last connected: a restart goes straight to it, without probing again. */
  private verdict: PriorDiscovery | undefined;
  private lastGarbage: string | null = null;
  private starting: Promise<McpToolInfo[]> | null = null;
  /** Bumped by every connect and by close: events of an older client are ignored. */
  private generation = 0;

  constructor(
    readonly config: ServerConfig,
    private readonly opts: ConnectionOptions,
  ) {}

  get name(): string {
    return this.config.name;
  }

  get state(): ServerState {
    return this.stateValue;
  }

  /** The tools of the last listing. */
  get tools(): McpToolInfo[] {
    return this.toolList;
  }

  status(): ServerStatus {
    const t = this.transport instanceof ChildProcessTransport ? this.transport : null;
    return {
      name: this.config.name,
      source: this.config.source,
      transport: this.config.transport,
      state: this.stateValue,
      pid: t && !t.exit ? t.pid : null,
      tool_count: this.toolList.length,
      last_error: this.lastError === null ? null : this.hide(this.lastError),
      stderr_tail: this.hide(t?.stderrTail() ?? ""),
      restarts: this.restartCount,
      garbage_lines: this.garbageLines,
      last_garbage: this.lastGarbage === null ? null : this.hide(this.lastGarbage),
      server_info: this.client?.getServerVersion() ?? null,
      protocol_version: this.client?.getNegotiatedProtocolVersion() ?? null,
    };
  }

  /** Starts (or connects to) the server and lists its tools; MCP_SERVER_FAILED when it cannot. */
  start(): Promise<McpToolInfo[]> {
    if (this.stateValue === "closed") return Promise.reject(this.closedError());
    if (this.stateValue === "ready") return Promise.resolve(this.toolList);
    this.starting ??= this.connect().finally(() => (this.starting = null));
    return this.starting;
  }

  /** A fresh `tools/list`. */
  async listTools(): Promise<McpToolInfo[]> {
    const client = await this.ready();
    try {
      this.toolList = (await client.listTools(undefined, { timeout: CONNECT_TIMEOUT_MS })).tools.map(toToolInfo);
    } catch (e) {
      throw this.callError(e, "tools/list", {}, CONNECT_TIMEOUT_MS);
    }
    return this.toolList;
  }

  /**
   * Calls one of the server's tools. A timeout or an abort of `signal` cancels the request (the SDK sends
   * `notifications/cancelled`). An `isError` result is TOOL_ERROR with the server's text.
   */
  async callTool(name: string, args: Record<string, unknown>, opts: CallOptions = {}): Promise<PassthroughResult> {
    const timeoutMs = opts.timeoutMs ?? this.config.timeoutMs;
    if (opts.signal?.aborted) throw cancelled(this.name, name);
    const client = await this.ready();
    if (opts.signal?.aborted) throw cancelled(this.name, name);
    let result: CallToolResult;
    try {
      result = (await client.callTool(
        { name, arguments: args },
        { signal: opts.signal, timeout: timeoutMs, ...(opts.onProgress ? { onprogress: opts.onProgress } : {}) },
      )) as CallToolResult;
    } catch (e) {
      throw this.callError(e, name, opts, timeoutMs);
    }
    const content = result.content ?? [];
    const structuredContent = result.structuredContent as Record<string, unknown> | undefined;
    const text = renderContent(content, structuredContent);
    if (result.isError) {
      // A failure's words are the daemon's to pass on, and a server may quote the token it was given (a 401): hidden.
      throw new ToolError("TOOL_ERROR", this.hide(`${name} (MCP server "${this.name}") failed: ${text || "the server gave no message"}`), {
        server: this.name,
        tool: name,
        content: this.hideIn(content),
        ...(structuredContent ? { structuredContent: this.hideIn(structuredContent) } : {}),
      });
    }
    return { text, content, ...(structuredContent ? { structuredContent } : {}) };
  }

  /** Why it is not ready, as a call to one of its tools would be answered (MCP_SERVER_FAILED with its state). */
  failure(): ToolError {
    return this.stateValue === "closed" ? this.closedError() : this.failedError(this.lastError ?? `it is ${this.stateValue}`);
  }

  /** Stops the server (its process and group, for stdio) and refuses further calls. */
  async close(): Promise<void> {
    this.generation++;
    this.stateValue = "closed";
    const client = this.client;
    const transport = this.transport;
    this.emitState();
    await client?.close().catch(() => undefined);
    // After a crash the client no longer holds the transport; closing it again is what kills what is left of the group.
    await transport?.close().catch(() => undefined);
  }

  private async ready(): Promise<Client> {
    if (this.stateValue === "ready" && this.client) return this.client;
    if (this.stateValue === "closed") throw this.closedError();
    if ((this.stateValue === "crashed" || this.stateValue === "failed") && !this.starting) this.takeRestart();
    await this.start();
    if (!this.client || this.stateValue !== "ready") throw this.failedError(this.lastError ?? "it is not connected");
    return this.client;
  }

  /** Counts a restart against the cap, or refuses it with the reason. */
  private takeRestart(): void {
    const now = Date.now();
    const window = this.opts.restartWindowMs ?? RESTART_WINDOW_MS;
    this.restartTimes = this.restartTimes.filter((t) => now - t < window);
    const max = this.opts.maxRestarts ?? MAX_RESTARTS;
    if (this.restartTimes.length >= max) {
      throw this.failedError(
        `it stopped ${max} times within ${Math.round(window / 60_000)} minutes and is not restarted again until that passes; last error: ${this.lastError}`,
      );
    }
    this.restartTimes.push(now);
    this.restartCount++;
  }

  /**
   * Starts the server and lists its tools, in whichever revision it speaks (2026-07-28 or 2025). A server that turns out
   * to speak another revision than the negotiation assumed is started once more the right way (see nextNegotiation).
   */
  private async connect(): Promise<McpToolInfo[]> {
    const gen = ++this.generation;
    const previous = this.listed ? this.toolList : null;
    const timeout = this.opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    let negotiation: Negotiation = this.verdict ? { kind: "prior", prior: this.verdict } : { kind: "probe" };
    for (let attempt = 1; ; attempt++) {
      const { client, transport } = this.build(gen, negotiation);
      this.client = client;
      this.transport = transport;
      this.stateValue = "connecting";
      this.emitState();
      try {
        await client.connect(transport, { timeout, ...(negotiation.kind === "prior" ? { prior: negotiation.prior } : {}) });
        const tools = (await client.listTools(undefined, { timeout })).tools.map(toToolInfo);
        if (gen !== this.generation) throw this.closedError();
        this.verdict = verdictOf(client);
        this.toolList = tools;
        this.listed = true;
        this.stateValue = "ready";
        this.lastError = null;
        this.emitState();
        // A restarted server may come back with other tools (an upgrade): the registry hears of it like a list_changed.
        if (previous && JSON.stringify(previous) !== JSON.stringify(tools)) this.opts.onToolsChanged?.(tools);
        return tools;
      } catch (e) {
        // Described before the close, which would make every failure look like a kill.
        const why = this.describeFailure(e);
        await client.close().catch(() => undefined);
        await transport.close().catch(() => undefined);
        if (gen !== this.generation) throw this.closedError();
        const next: Negotiation | undefined = attempt < MAX_NEGOTIATIONS ? nextNegotiation(negotiation, e) : undefined;
        if (next) {
          this.verdict = undefined;
          negotiation = next;
          continue;
        }
        this.stateValue = "failed";
        this.lastError = `it could not be started: ${why}`;
        this.emitState();
        throw this.failedError(this.lastError);
      }
    }
  }

  private build(gen: number, negotiation: Negotiation): { client: Client; transport: Transport } {
    const c = this.config;
    let transport: Transport;
    if (c.transport === "stdio") {
      transport = new ChildProcessTransport({ command: c.command, args: c.args, cwd: c.cwd, env: c.env }, this.opts.spawn, {
        onGarbage: (line) => {
          if (gen !== this.generation) return;
          this.garbageLines++;
          this.lastGarbage = line;
          this.opts.onWarning?.(this.hide(`MCP server "${c.name}" wrote a line on stdout that is not JSON-RPC (skipped): ${line}`));
        },
      });
    } else {
      const init = { requestInit: { headers: c.headers } };
      transport = c.transport === "sse" ? new SSEClientTransport(new URL(c.url), init) : new StreamableHTTPClientTransport(new URL(c.url), init);
    }
    const client = new Client(this.opts.clientInfo ?? DEFAULT_CLIENT_INFO, {
      ...(c.transport === "sse" ? {} : { versionNegotiation: this.versionNegotiation(negotiation) }),
      listChanged: {
        tools: {
          debounceMs: LIST_CHANGED_DEBOUNCE_MS,
          onChanged: (error, tools) => {
            if (gen !== this.generation || this.stateValue !== "ready") return;
            if (error || !tools) {
              this.opts.onWarning?.(this.hide(`MCP server "${c.name}" announced new tools but listing them failed: ${error?.message}`));
              return;
            }
            this.toolList = tools.map(toToolInfo);
            this.opts.onToolsChanged?.(this.toolList);
          },
        },
      },
    });
    client.onclose = () => {
      if (gen !== this.generation || this.stateValue !== "ready") return;
      this.stateValue = "crashed";
      this.lastError = this.describeExit();
      this.emitState();
      // The server's leftovers (a grandchild still in its group) go now, not at the next start.
      void transport.close().catch(() => undefined);
    };
    return { client, transport };
  }

  private versionNegotiation(n: Negotiation) {
    const connectTimeoutMs = this.opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    // A server that refused the 2025 handshake speaks 2026-07-28: its discover may take as long as its start.
    if (n.kind === "modern") return { mode: { pin: MODERN_REVISION }, probe: { timeoutMs: connectTimeoutMs } };
    // Over HTTP silence is no answer (the SDK fails the connect, it does not fall back): it gets the whole connect time.
    const probeMs = this.config.transport === "stdio" ? Math.min(this.opts.probeTimeoutMs ?? PROBE_TIMEOUT_MS, connectTimeoutMs) : connectTimeoutMs;
    return { mode: "auto" as const, probe: { timeoutMs: probeMs } };
  }

  private describeExit(): string {
    const t = this.transport;
    if (!(t instanceof ChildProcessTransport)) return "the HTTP connection closed";
    if (t.fatalReason) return `${t.fatalReason}, so the connection was closed`;
    const exit = t.exit;
    if (!exit) return "its stdout closed";
    return exit.signal ? `it was killed by ${exit.signal}` : `it exited with code ${exit.code}`;
  }

  private describeFailure(e: unknown): string {
    if (e instanceof SdkError && e.code === SdkErrorCode.RequestTimeout) {
      return `no answer to initialize within ${this.opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS} ms`;
    }
    const t = this.transport;
    // A process that never started (ENOENT) has no exit code: the spawn error says more.
    if (t instanceof ChildProcessTransport && t.exit && (t.exit.code !== null || t.exit.signal !== null)) return this.describeExit();
    return describeError(e);
  }

  private callError(e: unknown, tool: string, opts: CallOptions, timeoutMs: number): Error {
    if (opts.signal?.aborted) return cancelled(this.name, tool);
    if (e instanceof ToolError) return e;
    if (e instanceof SdkError && e.code === SdkErrorCode.RequestTimeout) {
      return new ToolError("TIMEOUT", `${tool} (MCP server "${this.name}") gave no answer within ${timeoutMs} ms; the server was told to cancel it.`, {
        server: this.name,
        tool,
        timeout_ms: timeoutMs,
      });
    }
    if (e instanceof ProtocolError) {
      return new ToolError("TOOL_ERROR", this.hide(`${tool} (MCP server "${this.name}") answered with error ${e.code}: ${e.message}`), {
        server: this.name,
        tool,
        rpc_code: e.code,
      });
    }
    if (e instanceof SdkError && e.code === SdkErrorCode.InvalidResult) {
      return new ToolError(
        "TOOL_ERROR",
        this.hide(`${tool} (MCP server "${this.name}") gave a result that does not fit MCP or its own output schema: ${e.message}`),
        {
          server: this.name,
          tool,
        },
      );
    }
    // Anything else is the connection: a process that died, a closed pipe, a refused or broken HTTP request, a lost
    // HTTP session. The connection is dropped, so the next call starts afresh.
    const why = this.stateValue === "crashed" && this.lastError ? this.lastError : describeError(e);
    this.markBroken(why);
    return this.failedError(`${why} during the call to ${tool}; it is restarted on the next call`);
  }

  private markBroken(why: string): void {
    if (this.stateValue !== "ready") return;
    this.stateValue = "crashed";
    this.lastError = why;
    this.emitState();
    const transport = this.transport;
    void this.client?.close().catch(() => undefined);
    void transport?.close().catch(() => undefined);
  }

  private failedError(why: string): ToolError {
    const s = this.status();
    const cause = stderrCause(s.stderr_tail);
    return new ToolError(
      "MCP_SERVER_FAILED",
      `MCP server "${this.name}" failed: ${this.hide(why)}.${cause ? ` Its stderr says: ${JSON.stringify(cause)} (stderr_tail has the rest).` : ""}`,
      {
        server: this.name,
        state: s.state,
        stderr_tail: s.stderr_tail,
      },
    );
  }

  private closedError(): ToolError {
    return new ToolError("MCP_SERVER_FAILED", `MCP server "${this.name}" was stopped (its configuration changed or the daemon is shutting down).`, {
      server: this.name,
      state: "closed",
    });
  }

  /** Text the daemon composes from what the server or the system said, its `${VAR}` values put back as references. */
  private hide(text: string): string {
    return redact(text, this.config.expanded);
  }

  /** The same through a server's content (its strings, at any depth). */
  private hideIn<T>(value: T): T {
    if (typeof value === "string") return this.hide(value) as T;
    if (Array.isArray(value)) return value.map((v) => this.hideIn(v)) as T;
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.hideIn(v)])) as T;
    return value;
  }

  private emitState(): void {
    this.opts.onStateChange?.(this.status());
  }
}

/**
 * How a connect finds the server's revision: `probe` asks `server/discover` and falls back to the 2025 `initialize`;
 * `prior` uses what the last connect found; `modern` speaks only 2026-07-28 (a server that refused `initialize`).
 */
type Negotiation = { kind: "probe" } | { kind: "prior"; prior: PriorDiscovery } | { kind: "modern" };

/** Starts of one connect, negotiations included: a probe, then at most two corrections. */
const MAX_NEGOTIATIONS = 3;
const MODERN_REVISION = "2026-07-28";

/** After a failed connect, the negotiation that fits what the server showed of itself; undefined when none would help. */
function nextNegotiation(n: Negotiation, e: unknown): Negotiation | undefined {
  const refusedInitialize = e instanceof ProtocolError && e.code === ProtocolErrorCode.UnsupportedProtocolVersion;
  const eraFailed = e instanceof SdkError && e.code === SdkErrorCode.EraNegotiationFailed;
  if (n.kind === "prior") return refusedInitialize || eraFailed ? { kind: "probe" } : undefined; // it was upgraded since
  if (n.kind !== "probe") return undefined;
  // Slower to start than the probe waited: it then refused the 2025 `initialize`.
  if (refusedInitialize) return { kind: "modern" };
  // A 2025 server that exits on a request before `initialize` (the probe): started again, straight to `initialize`.
  if (eraFailed && /connection closed/.test(e.message)) return { kind: "prior", prior: { kind: "legacy" } };
  return undefined;
}

function verdictOf(client: Client): PriorDiscovery | undefined {
  const discover = client.getDiscoverResult();
  if (client.getProtocolEra() === "modern") return discover ? { kind: "modern", discover } : undefined;
  return { kind: "legacy" };
}

function cancelled(server: string, tool: string): ToolError {
  return new ToolError("CANCELLED", `${tool} (MCP server "${server}") was cancelled; the server was told to stop it.`);
}

function toToolInfo(t: Tool): McpToolInfo {
  return {
    name: t.name,
    ...(t.title ? { title: t.title } : {}),
    description: t.description ?? "",
    inputSchema: t.inputSchema,
    ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
    ...(t.annotations ? { annotations: t.annotations } : {}),
    readOnly: t.annotations?.readOnlyHint === true,
  };
}

function describeError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  // fetch puts the reason (ECONNREFUSED, ECONNRESET) in the cause, which the SDK's probe wraps once more.
  type Cause = { cause?: Cause; code?: unknown; message?: string };
  let cause = (e as Cause).cause;
  while (cause?.cause && typeof cause.code !== "string") cause = cause.cause;
  const detail = typeof cause?.code === "string" ? cause.code : cause?.message;
  return detail && !e.message.includes(detail) ? `${e.message} (${detail})` : e.message;
}
