import { randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  CLIENT_CAPABILITIES_META_KEY,
  type CallToolResult,
  type ClientCapabilities,
  type HandlerResultTypeMap,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  type RequestMethod,
  type RequestTypeMap,
  ResourceNotFoundError,
  Server,
  type ServerContext,
  type ServerOptions,
  UnsupportedProtocolVersionError,
} from "@modelcontextprotocol/server";
import { FILE_READ_MAX_LINES } from "../../core/limits.js";
import { toolErrorOf } from "../../errors.js";
import { RenderedWindow } from "../../core/line-tags.js";
import type { Dispatcher, Outcome } from "../../dispatch/dispatcher.js";
import { errorText } from "../../dispatch/error-text.js";
import type { Registry } from "../../dispatch/registry.js";
import type { EventBus, EventName } from "../../platform/bus.js";
import { type AnyTool, hintsOf } from "../../dispatch/tool.js";
import type { Workspace } from "../../workspace.js";
import type { ConfirmGate } from "./confirm.js";
import type { ListenedFiles } from "./listens.js";
import type { DirectCall, McpStdioTransport } from "./stdio-transport.js";

/** MCP has its own listing and cancellation, and one connection is one session (SPEC 13). */
export const NOT_SERVED = new Set(["list", "info", "cancel", "session_end"]);
/** The param every mutating tool gets in MCP mode: an MCP client approves calls itself, so a call runs unless it asks for a preview. */
export const DRY_RUN_PARAM = "dry_run";
/** Lines of a file resources/read returns (SPEC 13: 2,000), file_read's largest window. */
const RESOURCE_LINES = FILE_READ_MAX_LINES;
/** Events that reach an MCP client as logging notifications; fs.changed and tools.changed have notifications of their own. */
const LOGGED_EVENTS = new Set<string>(["git.changed", "vfs.state", "lsp.diagnostics", "terminal.output", "terminal.exited"]);
/** How much of such an event a 2026-07-28 connection's stderr line shows: a job's output can be long. */
const LOGGED_CHARS = 500;
const INVALID_PARAMS = -32602;
/** The stateless revision served beside the 2025 ones (which `initialize` negotiates as before). */
export const MODERN_REVISION = "2026-07-28";
/** Where tools/list's `_meta` names the passthrough servers still starting, whose tools are not listed yet. */
export const PENDING_META = "tool-layer/pendingServers";
/**
 * 2026-07-28's cache hints: nothing is fresh for long (files and tools change under the client; list_changed and
 * resources/updated say when), and only the discovery result is the same for everyone.
 */
const CACHE_HINTS: ServerOptions["cacheHints"] = {
  "server/discover": { ttlMs: 0, cacheScope: "public" },
  "tools/list": { ttlMs: 0, cacheScope: "private" },
  "resources/list": { ttlMs: 0, cacheScope: "private" },
  "resources/templates/list": { ttlMs: 0, cacheScope: "private" },
  "resources/read": { ttlMs: 0, cacheScope: "private" },
};

/** The envelope keys read here (the SDK types a request's lifted envelope as `{}`). */
interface Envelope {
  [PROTOCOL_VERSION_META_KEY]?: string;
  [CLIENT_CAPABILITIES_META_KEY]?: ClientCapabilities;
}
const envelopeOf = (ctx: ServerContext) => (ctx.mcpReq.envelope ?? {}) as Envelope;

/** Which revision a connection speaks: `legacy` the 2025 ones (initialize), `modern` 2026-07-28 (stateless). */
export type Era = "legacy" | "modern";

/** What the adapter reads of the passthrough (McpPassthrough): which servers there are and in what state. */
export interface PassthroughStatus {
  status(): { servers: Record<string, unknown>[] };
}

export interface McpAdapterOptions {
  era: Era;
  version: string;
  passthrough?: PassthroughStatus;
  /** The wire, for the file-window fast path of its answers. */
  transport: McpStdioTransport;
  gate: ConfirmGate;
  listens: ListenedFiles;
}

type ToolResult = CallToolResult;

/**
 * MCP server mode (SPEC 13): the same registry and dispatcher behind the official SDK's Server, one instance per
 * connection and revision (serve.ts). An adapter and nothing else: every tools/call goes through Dispatcher.call, as a
 * JSON-lines call does.
 */
export class McpAdapter {
  readonly server: Server;
  /** One connection, one session: views and staleness are this client's. */
  private readonly session = `mcp-${randomUUID().slice(0, 8)}`;
  private nextCall = 0;
  /** 2025: subscribed files, root-relative real path -> the URI the client subscribed with. */
  private readonly subscribed = new Map<string, string>();
  /** 2026-07-28: a listened URI -> its root-relative real path (undefined: not a file of the workspace). */
  private readonly listenedRel = new Map<string, Promise<string | undefined>>();
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly registry: Registry,
    private readonly ws: Workspace,
    bus: EventBus,
    private readonly options: McpAdapterOptions,
  ) {
    this.server = new Server(
      { name: "tool-layer", version: options.version },
      {
        // Logging is a 2025 notion (2026-07-28 servers log to stderr).
        capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, ...(this.options.era === "legacy" ? { logging: {} } : {}) },
        cacheHints: CACHE_HINTS,
        requestState: { verify: this.options.gate.verify },
      },
    );
    this.handle("tools/list", async () => this.listTools());
    this.handle("tools/call", async (request, ctx) => this.callTool(request.params.name, request.params.arguments ?? {}, ctx));
    this.handle("resources/list", async () => ({ resources: [] }));
    this.handle("resources/templates/list", async () => ({
      resourceTemplates: [
        {
          uriTemplate: `${pathToFileURL(this.ws.root).href}/{+path}`,
          name: "workspace-file",
          description: "A file of the workspace, as hash-tagged lines with its hash",
          mimeType: "text/plain",
        },
      ],
    }));
    this.handle("resources/read", async (request) => this.read(request.params.uri));
    // 2025 only: the SDK answers them -32601 on a 2026-07-28 connection, where subscriptions/listen replaces them.
    this.handle("resources/subscribe", async (request) => {
      this.subscribed.set(await this.relOf(request.params.uri), request.params.uri);
      return {};
    });
    this.handle("resources/unsubscribe", async (request) => {
      this.subscribed.delete(await this.relOf(request.params.uri));
      return {};
    });
    this.unsubscribe.push(
      // On 2026-07-28 the SDK's stdio entry hands these to the listens that asked for them, and drops the rest.
      bus.on("tools.changed", () => void this.server.sendToolListChanged().catch(() => undefined)),
      bus.on("fs.changed", ({ changes }) => void this.filesChanged(new Set(changes.map((c) => c.path)))),
      bus.onAny((event: EventName, data) => {
        if (!LOGGED_EVENTS.has(event)) return;
        if (this.options.era === "modern") this.ws.log(`${event} ${cut(JSON.stringify(data), LOGGED_CHARS)}`);
        else void this.server.sendLoggingMessage({ level: "info", logger: "tool-layer", data: { event, data } }).catch(() => undefined);
      }),
    );
    // serveStdio may build an instance it then discards (a server/discover probe followed by initialize).
    this.server.onclose = () => this.dispose();
    if (this.options.era === "legacy") this.server.oninitialized = () => this.options.transport.answerCallsWith((params) => this.directCall(params));
  }

  /**
   * A request handler, behind the revision check the SDK makes only on a connection's first message: a later
   * 2026-07-28 request naming a revision not served is refused as well (MCP: UnsupportedProtocolVersionError).
   */
  private handle<M extends RequestMethod>(method: M, handler: (request: RequestTypeMap[M], ctx: ServerContext) => Promise<HandlerResultTypeMap[M]>): void {
    this.server.setRequestHandler(method, (request: RequestTypeMap[M], ctx: ServerContext) => {
      const requested = envelopeOf(ctx)[PROTOCOL_VERSION_META_KEY];
      if (this.options.era === "modern" && requested !== undefined && requested !== MODERN_REVISION) {
        throw new UnsupportedProtocolVersionError({ supported: [MODERN_REVISION], requested });
      }
      return handler(request, ctx);
    });
  }

  async close(): Promise<void> {
    this.dispose();
    await this.server.close().catch(() => undefined);
  }

  private dispose(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }

  /** The files a client follows that changed: resources/updated with the URI it used, once per URI. */
  private async filesChanged(changed: Set<string>): Promise<void> {
    const uris = this.options.era === "legacy" ? [...changed].flatMap((rel) => this.subscribed.get(rel) ?? []) : await this.listenedIn(changed);
    for (const uri of uris) void this.server.sendResourceUpdated({ uri }).catch(() => undefined);
  }

  private async listenedIn(changed: Set<string>): Promise<string[]> {
    const uris = [...this.options.listens.uris()];
    const rels = await Promise.all(
      uris.map((uri) => {
        let rel = this.listenedRel.get(uri);
        if (!rel) this.listenedRel.set(uri, (rel = this.relOf(uri).catch(() => undefined)));
        return rel;
      }),
    );
    return uris.filter((_, i) => rels[i] !== undefined && changed.has(rels[i]));
  }

  /** Every served tool; while passthrough servers are still starting, `_meta` says which, and that a list_changed follows. */
  private listTools(): HandlerResultTypeMap["tools/list"] {
    const tools = this.served().map((t) => this.describe(t));
    const pending = this.pendingServers();
    return pending.length ? { tools, _meta: { [PENDING_META]: { servers: pending, message: stillStarting(pending) } } } : { tools };
  }

  /** Passthrough servers that may run and are not up yet (failed ones are not waited for). */
  private pendingServers(): string[] {
    const servers = this.options.passthrough?.status().servers ?? [];
    return servers.filter((s) => !s.blocked && (s.state === "idle" || s.state === "connecting")).map((s) => String(s.name));
  }

  private served(): AnyTool[] {
    return this.registry.tools().filter((t) => !NOT_SERVED.has(t.id));
  }

  /** Whether the dispatcher's dry_run param applies: a mutating tool whose own schema has no `dry_run` (SPEC 2). */
  private takesDryRun(tool: AnyTool): boolean {
    const props = (this.registry.schemaOf(tool).properties ?? {}) as Record<string, unknown>;
    return tool.mutating && !Object.hasOwn(props, DRY_RUN_PARAM);
  }

  private describe(tool: AnyTool) {
    const schema = { type: "object", ...this.registry.schemaOf(tool) } as Record<string, unknown>;
    if (this.takesDryRun(tool)) {
      schema.properties = {
        ...((schema.properties as object | undefined) ?? {}),
        [DRY_RUN_PARAM]: { type: "boolean", description: "true: check everything and return a preview (with preview_id) instead of changing anything." },
      };
    }
    const h = hintsOf(tool);
    return {
      name: tool.id,
      description: this.registry.describe(tool),
      inputSchema: schema as { type: "object"; [key: string]: unknown },
      annotations: { readOnlyHint: h.read_only, destructiveHint: h.destructive, idempotentHint: h.idempotent, openWorldHint: h.open_world },
    };
  }

  /** A tool of a passthrough server still connecting: waits for it as the dispatcher does (bounded, cancellable). */
  private async listedSoon(name: string, ctx: ServerContext): Promise<AnyTool | { code: string; message: string } | undefined> {
    const listed = this.registry.awaitTool(name, ctx.mcpReq.signal);
    if (!listed) return undefined;
    try {
      await listed;
    } catch (e) {
      const err = toolErrorOf(e);
      if (!err) throw e;
      return { code: err.code, message: err.message, ...err.details };
    }
    return this.registry.tool(name);
  }

  private async callTool(name: string, args: Record<string, unknown>, ctx: ServerContext): Promise<HandlerResultTypeMap["tools/call"]> {
    const tool = this.registry.tool(name) ?? (NOT_SERVED.has(name) ? undefined : await this.listedSoon(name, ctx));
    if (tool && "code" in tool) return failed(tool);
    if (!tool || NOT_SERVED.has(name)) {
      // MCP's answer to an unknown tool: a protocol error, not a tool result.
      const pending = this.pendingServers();
      throw new ProtocolError(INVALID_PARAMS, `Unknown tool: ${name}${pending.length ? `. ${stillStarting(pending)}` : ""}`);
    }
    const params = { ...args };
    let approved = true;
    if (this.takesDryRun(tool) && DRY_RUN_PARAM in params) {
      if (typeof params[DRY_RUN_PARAM] !== "boolean")
        return failed({ code: "INVALID_PARAMS", message: `Invalid params: ${DRY_RUN_PARAM}: must be a boolean.` });
      approved = params[DRY_RUN_PARAM] !== true;
      delete params[DRY_RUN_PARAM];
    }
    if (approved) {
      const client = this.options.era === "modern" ? envelopeOf(ctx)[CLIENT_CAPABILITIES_META_KEY] : this.server.getClientCapabilities();
      const withheld = await this.options.gate.check(tool, args, ctx, client);
      if (withheld) return "ask" in withheld ? withheld.ask : failed(withheld.refused);
    }
    const callId = `mcp-${++this.nextCall}`;
    const signal = ctx.mcpReq.signal;
    const onAbort = () => this.dispatcher.cancel(callId);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      return toMcp(await this.dispatcher.call({ tool_id: name, session_id: this.session, call_id: callId, approved, params }), this.options.transport);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /**
   * A tools/call answered without the SDK's per-request work (McpStdioTransport.answerCallsWith), when nothing that
   * work does can change the answer: params of exactly `name` and `arguments` (an object, or none), no `_meta` (no
   * progress token, no task, no envelope), naming a built-in tool no confirmation or preview applies to. Such a request
   * passes the SDK's checks, and toMcp's result passes its validation unchanged; the answer is built in the order its
   * validation would write it. Anything else goes to the SDK (callTool).
   */
  directCall(params: unknown): DirectCall | undefined {
    if (!isPlainObject(params)) return undefined;
    for (const key in params) if (key !== "name" && key !== "arguments") return undefined;
    const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
    if (typeof name !== "string" || (args !== undefined && !isPlainObject(args))) return undefined;
    const tool = this.registry.tool(name);
    if (!tool || tool.mutating || NOT_SERVED.has(name) || (tool.provider ?? "builtin") !== "builtin" || this.options.gate.applies(tool)) return undefined;
    const callId = `mcp-${++this.nextCall}`;
    const call = { tool_id: name, session_id: this.session, call_id: callId, approved: true, params: { ...(args as object) } };
    return {
      answer: this.dispatcher.call(call).then((outcome) => validated(toMcp(outcome, this.options.transport))),
      cancel: () => this.dispatcher.cancel(callId),
    };
  }

  /** The tagged rendering of a file's first lines, with its header line (hash included). */
  private async read(uri: string) {
    const outcome = await this.dispatcher.call({
      tool_id: "file_read",
      session_id: this.session,
      call_id: `mcp-${++this.nextCall}`,
      approved: true,
      params: { path: this.pathOf(uri), limit: RESOURCE_LINES },
    });
    if (!outcome.success) {
      const message = `${outcome.result.code}: ${outcome.result.message}`;
      // MCP's resource-not-found (SEP-2164): -32602 with exactly `{uri}` as data, on every revision.
      if (outcome.result.code === "NOT_FOUND") throw new ResourceNotFoundError(uri, message);
      throw new ProtocolError(INVALID_PARAMS, message, { uri, code: outcome.result.code });
    }
    return { contents: [{ uri, mimeType: "text/plain", text: String(outcome.result.text), _meta: { hash: outcome.result.hash } }] };
  }

  /** A `file://` URI under the root, as a path for the file tools (which check it is inside). */
  private pathOf(uri: string): string {
    let abs: string;
    try {
      abs = fileURLToPath(uri);
    } catch {
      throw new ProtocolError(INVALID_PARAMS, `${uri} is not a file:// URI; resources here are files of the workspace.`);
    }
    return path.isAbsolute(abs) ? abs : path.join(this.ws.root, abs);
  }

  private async relOf(uri: string): Promise<string> {
    try {
      const target = await this.ws.paths.resolve(this.pathOf(uri));
      return target.realRel;
    } catch (e) {
      if (e instanceof ProtocolError) throw e;
      throw new ProtocolError(INVALID_PARAMS, `${uri}: ${(e as Error).message}`);
    }
  }
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

function stillStarting(servers: string[]): string {
  const one = servers.length === 1;
  return `MCP server${one ? "" : "s"} ${servers.join(", ")} ${one ? "is" : "are"} still starting: ${one ? "its" : "their"} tools are not listed yet; notifications/tools/list_changed follows when they are.`;
}

/** An outcome as an MCP tool result: text for the model, the structured result beside it; a failure is isError. */
function toMcp(outcome: Outcome, transport: McpStdioTransport): ToolResult {
  if (!outcome.success) return failed(outcome.result);
  const { text, content, structuredContent, ...rest } = outcome.result;
  // A passthrough tool's result is already MCP content: given back as the server gave it.
  if (Array.isArray(content))
    return { content: content as CallToolResult["content"], ...(structuredContent ? { structuredContent: structuredContent as Record<string, unknown> } : {}) };
  // A file window's text is encoded by the transport straight from the file's bytes (see McpStdioTransport.deferText).
  const shown = text instanceof RenderedWindow ? transport.deferText(text) : text === undefined ? JSON.stringify(rest) : String(text);
  return { content: [{ type: "text", text: shown }], structuredContent: rest };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A tool result with its keys where the SDK's validation of a 2025 CallToolResult puts them (shape order). */
function validated(result: ToolResult): ToolResult {
  const { _meta, content, structuredContent, isError, ...rest } = result;
  return {
    ...(_meta !== undefined && { _meta }),
    content: content.map((c) =>
      c.type === "text" ? { type: c.type, text: c.text, ...(c.annotations && { annotations: c.annotations }), ...(c._meta && { _meta: c._meta }) } : c,
    ),
    ...(structuredContent !== undefined && { structuredContent }),
    ...(isError !== undefined && { isError }),
    ...rest,
  };
}

function failed(result: { code: string; message: string; [k: string]: unknown }): ToolResult {
  return { isError: true, content: [{ type: "text", text: errorText(result) }], structuredContent: result };
}
