import { readFileSync } from "node:fs";
import { z } from "zod";
import { type AnyTool, TOOL_ID_PATTERN } from "./tools/tool.js";

/** Built-ins a `--tools` file cannot disable: without them a client cannot learn or steer anything. */
export const ALWAYS_ENABLED = new Set(["list", "info", "cancel"]);

const manifestEntry = z.looseObject({ name: z.string().regex(TOOL_ID_PATTERN), description: z.string().optional() });

/** The tools in force: all built-ins, or those a `--tools` manifest keeps, with its descriptions. */
export class Registry {
  private readonly enabled = new Map<string, AnyTool>();
  private readonly descriptions = new Map<string, string>();

  constructor(readonly all: readonly AnyTool[], manifest?: { name: string; description?: string }[]) {
    const kept = manifest ? new Map(manifest.map((e) => [e.name, e])) : undefined;
    for (const tool of all) {
      const entry = kept?.get(tool.id);
      if (kept && !entry && !ALWAYS_ENABLED.has(tool.id)) continue;
      this.enabled.set(tool.id, tool);
      if (entry?.description) this.descriptions.set(tool.id, entry.description);
    }
  }

  tool(id: string): AnyTool | undefined {
    return this.enabled.get(id);
  }

  tools(): AnyTool[] {
    return [...this.enabled.values()];
  }

  describe(tool: AnyTool): string {
    return this.descriptions.get(tool.id) ?? tool.description;
  }
}

/** Reads a `--tools` file; throws with a sentence for stderr when it cannot be used. */
export function readManifest(file: string, known: readonly AnyTool[]): { name: string; description?: string }[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new Error(`cannot read --tools ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const parsed = z.array(manifestEntry).safeParse(raw);
  if (!parsed.success) throw new Error(`--tools ${file} is not an array of {name, description}: ${parsed.error.issues[0]?.message}`);
  const ids = new Set(known.map((t) => t.id));
  const unknown = parsed.data.filter((e) => !ids.has(e.name)).map((e) => e.name);
  if (unknown.length) throw new Error(`--tools ${file} names tools this daemon does not have: ${unknown.join(", ")}`);
  return parsed.data;
}
