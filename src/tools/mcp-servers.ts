import { stderrCause } from "../mcp/stderr-cause.js";
import type { Services } from "../dispatch/services.js";
import { defineTool } from "../dispatch/tool.js";
import { plural } from "../core/text.js";

/** The daemon's MCP passthrough, or NOT_AVAILABLE where it runs none. */
export function passthrough(services: Services) {
  return services.mcp.use();
}

export const mcpServersTool = defineTool({
  id: "mcp_servers",
  description:
    "Lists the MCP servers passed through (from .mcp.json, --mcp-config and CodeGraph): each one's state, command, tool ids, last error and stderr tail, and any problem in the configuration.",
  params: {},
  mutating: false,
  async run(_params, { services }) {
    const { servers, problems } = passthrough(services).status();
    const lines = servers.map((s) => {
      // The exit code alone says little; the cause is usually the last words of its stderr.
      const cause = s.last_error && typeof s.stderr_tail === "string" ? stderrCause(s.stderr_tail) : null;
      return `${s.name} (${s.source}): ${s.state}${s.blocked ? ` (${s.blocked})` : ""}, ${plural((s.tools as string[]).length, "tool")}${s.last_error ? `; last error: ${s.last_error}` : ""}${cause ? `; its stderr says: ${cause}` : ""}`;
    });
    for (const p of problems) lines.push(`problem${p.server ? ` in ${p.server}` : ""}: ${p.message}`);
    return { servers, problems, text: lines.length ? lines.join("\n") : "No MCP servers are configured (.mcp.json at the root, or --mcp-config)." };
  },
});
