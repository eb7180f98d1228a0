import { z } from "zod";
import { describeEntry } from "../mcp/config.js";
import { ToolError } from "../errors.js";
import { passthrough } from "./mcp-servers.js";
import { defineTool } from "../dispatch/tool.js";

export const mcpApproveTool = defineTool({
  id: "mcp_approve",
  description:
    "Approves the MCP servers named in the workspace's .mcp.json, so they start: a configuration file in the workspace is not trusted by itself. Preview: each server's command line. A later change to an entry withdraws its approval.",
  params: {
    server: z.string().min(1).optional().describe("Approve only this server (default: every one waiting for approval)."),
  },
  mutating: true,
  hints: { destructive: false, idempotent: true },
  async run({ server }, ctx) {
    const mcp = passthrough(ctx.services);
    const pending = mcp.pendingApprovals(server);
    if (!pending.length) throw new ToolError("NO_CHANGE", server ? `${server} is already approved.` : "No server of .mcp.json waits for approval.");
    const servers = pending.map((c) => ({ server: c.name, command: describeEntry(c), digest: c.digest }));
    const list = servers.map((s) => `  ${s.server}: ${s.command}`).join("\n");
    if (ctx.dryRun) return { servers, text: `would approve and start:\n${list}` };
    await ctx.commit(() => mcp.approve(pending));
    return { servers, text: `approved and starting (their tools arrive with tools.changed):\n${list}` };
  },
});

export const mcpRevokeTool = defineTool({
  id: "mcp_revoke",
  description: "Withdraws the approval of a server of the workspace's .mcp.json: it is stopped and its tools leave the registry.",
  params: { server: z.string().min(1).describe("The server, as mcp_servers names it.") },
  mutating: true,
  hints: { destructive: false, idempotent: true },
  async run({ server }, ctx) {
    const mcp = passthrough(ctx.services);
    const known = mcp.status().servers.find((s) => s.name === server);
    if (!known) throw new ToolError("NOT_FOUND", `No MCP server is named "${server}"; mcp_servers lists them.`);
    if (known.source !== "workspace") throw new ToolError("INVALID_PARAMS", `server: "${server}" is not from .mcp.json; it needs no approval to withdraw.`);
    if (ctx.dryRun) return { server, text: `would withdraw the approval of ${server} and stop it` };
    const withdrawn = await ctx.commit(() => mcp.revoke(server));
    return { server, withdrawn, text: withdrawn ? `withdrew the approval of ${server}; it is stopped` : `${server} was not approved` };
  },
});
