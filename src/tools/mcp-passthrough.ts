import { z } from "zod";
import type { AnyTool, ToolContext, ToolProvider } from "../dispatch/tool.js";
import type { McpPassthrough, ServedTool } from "../mcp/passthrough.js";
import { portableSchema } from "../mcp/portable-schema.js";

/** Above the connection's own timeout, so the call answers the connection's TIMEOUT (and cancels on the server) first. */
const DISPATCH_MARGIN_MS = 5_000;

/**
 * The passthrough servers' tools as the registry's provider (SPEC 12): one definition per served tool, kept while the
 * tool is unchanged (same connection, same description), so `tools.changed` names only real changes.
 */
export class PassthroughTools implements ToolProvider {
  readonly name = "mcp";
  private made = new Map<string, { served: ServedTool; def: AnyTool }>();

  constructor(private readonly mcp: McpPassthrough) {}

  tools(): readonly AnyTool[] {
    const made = new Map<string, { served: ServedTool; def: AnyTool }>();
    for (const served of this.mcp.tools()) {
      const before = this.made.get(served.id);
      const same = before && before.served.connection === served.connection && before.served.infoJson === served.infoJson;
      made.set(served.id, same ? before : { served, def: this.toolDef(served) });
    }
    this.made = made;
    return [...made.values()].map((m) => m.def);
  }

  /** A call to a tool of a server still starting waits for it (McpPassthrough.awaitTool). */
  awaitTool(id: string, signal: AbortSignal): Promise<void> | undefined {
    return this.mcp.awaitTool(id, signal);
  }

  notYet(): string | undefined {
    return this.mcp.notYet();
  }

  private toolDef(served: ServedTool): AnyTool {
    const { info: t, config, connection } = served;
    // Hosts check schemas with their own regex engines: ECMAScript-only patterns are left to the server.
    const schema = portableSchema(t.inputSchema as Record<string, unknown>);
    return {
      id: served.id,
      provider: config.name,
      description: `${config.name}: ${t.description || t.title || t.name}`,
      params: paramsOf(schema),
      jsonSchema: schema,
      mutating: !t.readOnly,
      hints: {
        read_only: t.readOnly,
        destructive: t.annotations?.destructiveHint,
        idempotent: t.annotations?.idempotentHint,
        open_world: t.annotations?.openWorldHint,
      },
      timeoutMs: config.timeoutMs + DISPATCH_MARGIN_MS,
      state: () => ({ server: connection.status(), tool: t.name }),
      run: async (params: Record<string, unknown>, ctx: ToolContext) => {
        if (ctx.dryRun) {
          return {
            server: config.name,
            tool: t.name,
            arguments: params,
            text: `would call ${t.name} on MCP server ${config.name} with ${JSON.stringify(params)}`,
          };
        }
        return this.mcp.call(served, params, ctx.signal);
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
