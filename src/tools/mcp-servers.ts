import { ToolError } from "../errors.js";
import { stderrCause } from "../mcp/stderr-cause.js";
import type { Workspace } from "../workspace.js";
import { defineTool } from "../dispatch/tool.js";
import { plural } from "../core/text.js";

export function passthrough(ws: Workspace) {
  if (!ws.mcp) throw new ToolError("NOT_AVAILABLE", "MCP passthrough is not running in this daemon.");
  return ws.mcp;
}

export const mcpServersTool = defineTool({
  id: "mcp_servers",
  description: "Lists the MCP servers passed through (from .mcp.json, --mcp-config and CodeGraph): each one's state, command, tool ids, last error and stderr tail, and any problem in the configuration.",
  params: {},
  mutating: false,
  async run(_params, { ws }) {
    const { servers, problems } = passthrough(ws).status();
    const lines = servers.map((s) => {
      // The exit code alone says little; the cause is usually the last words of its stderr.
      const cause = s.last_error && typeof s.stderr_tail === "string" ? stderrCause(s.stderr_tail) : null;
      return `${s.name} (${s.source}): ${s.state}${s.blocked ? ` (${s.blocked})` : ""}, ${plural((s.tools as string[]).length, "tool")}${s.last_error ? `; last error: ${s.last_error}` : ""}${cause ? `; its stderr says: ${cause}` : ""}`;
    });
    for (const p of problems) lines.push(`problem${p.server ? ` in ${p.server}` : ""}: ${p.message}`);
    return { servers, problems, text: lines.length ? lines.join("\n") : "No MCP servers are configured (.mcp.json at the root, or --mcp-config)." };
  },
});
