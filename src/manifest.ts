import { TOOLS } from "./tools/index.js";
import { type AnyTool, inputSchema } from "./tools/tool.js";

export interface ManifestEntry {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  mutating: boolean;
}

/** tools.json: what `info` says of each built-in tool, generated from the zod schemas (SPEC 6). */
export function manifest(tools: readonly AnyTool[] = TOOLS): ManifestEntry[] {
  return tools.map((t) => ({ name: t.id, description: t.description, input_schema: inputSchema(t), mutating: t.mutating }));
}

export function manifestText(tools: readonly AnyTool[] = TOOLS): string {
  return JSON.stringify(manifest(tools), null, 2) + "\n";
}
