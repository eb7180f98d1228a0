import { defineTool, firstSentence } from "../dispatch/tool.js";

export const listTool = defineTool({
  id: "list",
  description: "Lists every enabled tool with the first sentence of its description. Use info for a tool's parameters and state.",
  params: {},
  mutating: false,
  async run(_params, { daemon }) {
    const tools = daemon.enabledTools().map((t) => ({ tool_id: t.id, description: firstSentence(daemon.describe(t)) }));
    return { tools, text: tools.map((t) => `${t.tool_id}: ${t.description}`).join("\n") };
  },
});
