import { z } from "zod";
import { defineTool, hintsOf, unknownToolError } from "../dispatch/tool.js";

export const infoTool = defineTool({
  id: "info",
  description:
    "Describes one tool: its full description, its parameters as JSON Schema, whether it changes anything (and the finer hints read_only, destructive, idempotent, open_world), and its current state (what it needs and whether it has it now).",
  params: { tool_id: z.string().describe("The tool to describe, as `list` names it.") },
  mutating: false,
  async run({ tool_id }, { daemon, services }) {
    const tool = daemon.enabledTool(tool_id);
    if (!tool)
      throw unknownToolError(
        tool_id,
        daemon.enabledTools().map((t) => t.id),
        "Call list for the enabled ones.",
      );
    const description = daemon.describe(tool);
    const state = tool.state ? await tool.state(services) : { available: true };
    const input_schema = daemon.schemaOf(tool);
    const hints = hintsOf(tool);
    const text = [
      `${tool.id}${tool.mutating ? " (mutating: dry run unless approved; pass preview_id to bind an approval to a preview)" : ""}`,
      description,
      `params: ${JSON.stringify(input_schema.properties ?? {})}`,
      `hints: ${
        Object.entries(hints)
          .filter(([, v]) => v)
          .map(([k]) => k)
          .join(", ") || "none"
      }`,
      `state: ${JSON.stringify(state)}`,
    ].join("\n");
    return { tool_id: tool.id, description, input_schema, mutating: tool.mutating, ...hints, provider: tool.provider ?? "builtin", state, text };
  },
});
