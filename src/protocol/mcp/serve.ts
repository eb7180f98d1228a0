import type { Readable, Writable } from "node:stream";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { Dispatcher } from "../../dispatch/dispatcher.js";
import type { Registry } from "../../dispatch/registry.js";
import type { EventBus } from "../../platform/bus.js";
import type { Workspace } from "../../workspace.js";
import { ConfirmGate, type ConfirmMode } from "./confirm.js";
import { ListenedFiles } from "./listens.js";
import { McpAdapter, type PassthroughStatus } from "./server.js";
import { McpStdioTransport } from "./stdio-transport.js";

export interface McpServeOptions {
  version: string;
  confirm: ConfirmMode;
  /** The passthrough servers, for tools/list's note on those still starting. */
  passthrough?: PassthroughStatus;
  /** The connection ended (stdin or stdout closed). */
  onEnd: () => void;
}

/**
 * MCP on stdio, both revisions (SPEC 13, docs/mcp-server.md): the SDK's stdio entry reads the client's first message
 * and pins the connection to an adapter of its era, 2025 (`initialize`) or 2026-07-28 (stateless requests, listens
 * served by the entry itself). Resolves nothing; `close()` ends the listens with their results and closes the wire.
 */
export function serveMcp(
  dispatcher: Dispatcher,
  registry: Registry,
  ws: Workspace,
  bus: EventBus,
  input: Readable,
  output: Writable,
  options: McpServeOptions,
): { close(): Promise<void> } {
  const listens = new ListenedFiles();
  const transport = new McpStdioTransport(input, output, { onEnd: options.onEnd, peek: (m) => listens.see(m) });
  const gate = new ConfirmGate(options.confirm);
  return serveStdio(
    ({ era }) =>
      new McpAdapter(dispatcher, registry, ws, bus, { era, version: options.version, passthrough: options.passthrough, transport, gate, listens }).server,
    {
      transport,
      onerror: (e) => ws.log(`MCP: ${e.message}`),
    },
  );
}
