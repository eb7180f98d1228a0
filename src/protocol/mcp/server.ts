import { randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type CallToolResult, ProtocolError, Server, type Transport } from "@modelcontextprotocol/server";
import { FILE_READ_MAX_LINES } from "../../core/limits.js";
import { RenderedWindow } from "../../core/line-tags.js";
import type { Dispatcher, Outcome } from "../../dispatch/dispatcher.js";
import type { Registry } from "../../dispatch/registry.js";
import type { EventBus, EventName } from "../../platform/bus.js";
import { type AnyTool, hintsOf } from "../../dispatch/tool.js";
import type { Workspace } from "../../workspace.js";
import { McpStdioTransport } from "./stdio-transport.js";

/** MCP has its own listing and cancellation, and one connection is one session (SPEC 13). */
export const NOT_SERVED = new Set(["list", "info", "cancel", "session_end"]);
/** The param every mutating tool gets in MCP mode: an MCP client approves calls itself, so a call runs unless it asks for a preview. */
export const DRY_RUN_PARAM = "dry_run";
/** Lines of a file resources/read returns (SPEC 13: 2,000), file_read's largest window. */
const RESOURCE_LINES = FILE_READ_MAX_LINES;
/** Events that reach an MCP client as logging notifications; fs.changed and tools.changed have notifications of their own. */
const LOGGED_EVENTS = new Set<string>(["git.changed", "vfs.state", "lsp.diagnostics", "terminal.output", "terminal.exited"]);
/** JSON-RPC code for a resource that does not exist (the MCP spec's). */
const RESOURCE_NOT_FOUND = -32002;
const INVALID_PARAMS = -32602;

type ToolResult = CallToolResult;

/**
 * MCP server mode (SPEC 13): the same registry and dispatcher behind the official SDK's Server. An adapter and nothing
 * else: every tools/call goes through Dispatcher.call, as a JSON-lines call does.
 */
export class McpAdapter {
  readonly server: Server;
  /** One connection, one session: views and staleness are this client's. */
  private readonly session = `mcp-${randomUUID().slice(0, 8)}`;
  private nextCall = 0;
  /** Subscribed files: root-relative real path -> the URI the client subscribed with. */
  private readonly subscribed = new Map<string, string>();
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly registry: Registry,
    private readonly ws: Workspace,
    bus: EventBus,
    version: string,
  ) {
    this.server = new Server(
      { name: "tool-layer", version },
      { capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, logging: {} } },
    );
    this.server.setRequestHandler("tools/list", async () => ({ tools: this.served().map((t) => this.describe(t)) }));
    this.server.setRequestHandler("tools/call", async (request, ctx) => this.callTool(request.params.name, request.params.arguments ?? {}, ctx.mcpReq.signal));
    this.server.setRequestHandler("resources/list", async () => ({ resources: [] }));
    this.server.setRequestHandler("resources/templates/list", async () => ({
      resourceTemplates: [{ uriTemplate: `${pathToFileURL(this.ws.root).href}/{+path}`, name: "workspace-file", description: "A file of the workspace, as hash-tagged lines with its hash", mimeType: "text/plain" }],
    }));
    this.server.setRequestHandler("resources/read", async (request) => this.read(request.params.uri));
    this.server.setRequestHandler("resources/subscribe", async (request) => {
      this.subscribed.set(await this.relOf(request.params.uri), request.params.uri);
      return {};
    });
    this.server.setRequestHandler("resources/unsubscribe", async (request) => {
      this.subscribed.delete(await this.relOf(request.params.uri));
      return {};
    });
    this.unsubscribe.push(
      bus.on("tools.changed", () => void this.server.sendToolListChanged().catch(() => undefined)),
      bus.on("fs.changed", ({ changes }) => {
        for (const c of changes) {
          const uri = this.subscribed.get(c.path);
          if (uri) void this.server.sendResourceUpdated({ uri }).catch(() => undefined);
        }
      }),
      bus.onAny((event: EventName, data) => {
        if (LOGGED_EVENTS.has(event)) void this.server.sendLoggingMessage({ level: "info", logger: "tool-layer", data: { event, data } }).catch(() => undefined);
      }),
    );
  }

  private transport?: McpStdioTransport;

  connect(transport: Transport): Promise<void> {
    if (transport instanceof McpStdioTransport) this.transport = transport;
    return this.server.connect(transport);
  }

  async close(): Promise<void> {
    for (const u of this.unsubscribe.splice(0)) u();
    await this.server.close().catch(() => undefined);
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

  private async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    const tool = this.registry.tool(name);
    if (!tool || NOT_SERVED.has(name)) return failed({ code: "NOT_AVAILABLE", message: `There is no tool "${name}"; tools/list has the ones served.` });
    const params = { ...args };
    let approved = true;
    if (this.takesDryRun(tool) && DRY_RUN_PARAM in params) {
      if (typeof params[DRY_RUN_PARAM] !== "boolean") return failed({ code: "INVALID_PARAMS", message: `Invalid params: ${DRY_RUN_PARAM}: must be a boolean.` });
      approved = params[DRY_RUN_PARAM] !== true;
      delete params[DRY_RUN_PARAM];
    }
    const callId = `mcp-${++this.nextCall}`;
    const onAbort = () => this.dispatcher.cancel(callId);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      return toMcp(await this.dispatcher.call({ tool_id: name, session_id: this.session, call_id: callId, approved, params }), this.transport);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** The tagged rendering of a file's first lines, with its header line (hash included). */
  private async read(uri: string) {
    const outcome = await this.dispatcher.call({ tool_id: "file_read", session_id: this.session, call_id: `mcp-${++this.nextCall}`, approved: true, params: { path: this.pathOf(uri), limit: RESOURCE_LINES } });
    if (!outcome.success) {
      const code = outcome.result.code === "NOT_FOUND" ? RESOURCE_NOT_FOUND : INVALID_PARAMS;
      throw new ProtocolError(code, `${outcome.result.code}: ${outcome.result.message}`, { uri });
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

/** An outcome as an MCP tool result: text for the model, the structured result beside it; a failure is isError. */
function toMcp(outcome: Outcome, transport: McpStdioTransport | undefined): ToolResult {
  if (!outcome.success) return failed(outcome.result);
  const { text, content, structuredContent, ...rest } = outcome.result;
  // A passthrough tool's result is already MCP content: given back as the server gave it.
  if (Array.isArray(content)) return { content: content as CallToolResult["content"], ...(structuredContent ? { structuredContent: structuredContent as Record<string, unknown> } : {}) };
  // A file window's text is encoded by the transport straight from the file's bytes (see McpStdioTransport.deferText).
  const shown = text instanceof RenderedWindow && transport ? transport.deferText(text) : text === undefined ? JSON.stringify(rest) : String(text);
  return { content: [{ type: "text", text: shown }], structuredContent: rest };
}

function failed(result: { code: string; message: string; [k: string]: unknown }): ToolResult {
  return { isError: true, content: [{ type: "text", text: `${result.code}: ${result.message}` }], structuredContent: result };
}
