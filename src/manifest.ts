import { Registry } from "./dispatch/registry.js";
import { TOOLS } from "./tools/index.js";
import { type AnyTool, type ToolHints, hintsOf } from "./tools/tool.js";

export interface ManifestEntry extends ToolHints {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  mutating: boolean;
}

/** tools.json: what `info` says of each built-in tool, generated from the zod schemas (SPEC 6). */
export function manifest(tools: readonly AnyTool[] = TOOLS): ManifestEntry[] {
  const registry = new Registry(tools, undefined);
  return registry.tools().map((t) => ({ name: t.id, description: t.description, input_schema: registry.schemaOf(t), mutating: t.mutating, ...hintsOf(t) }));
}

export function manifestText(tools: readonly AnyTool[] = TOOLS): string {
  return JSON.stringify(manifest(tools), null, 2) + "\n";
}
