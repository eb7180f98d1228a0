import { readFileSync } from "node:fs";
import { z } from "zod";
import type { EventBus } from "../platform/bus.js";
import { type AnyTool, TOOL_ID_PATTERN, type ToolProvider, inputSchema } from "./tool.js";

export type { ToolProvider };
export { DID_YOU_MEAN_MAX, nearestToolIds, unknownToolError } from "./tool.js";

/** Built-ins a `--tools` file cannot disable: without them a client cannot learn or steer anything. */
export const ALWAYS_ENABLED = new Set(["list", "info", "cancel", "session_end"]);

/** The param the dispatcher adds to every mutating tool (SPEC 2), unless the tool's own schema has one. */
export const PREVIEW_PARAM = "preview_id";

const manifestEntry = z.looseObject({
  name: z.string().regex(TOOL_ID_PATTERN),
  description: z.string().optional(),
  enabled: z.boolean().optional(),
});
export type ManifestEntry = z.output<typeof manifestEntry>;

/** A tool as the registry holds it: its definition, the schema calls are checked against, and what `info` adds. */
export interface RegisteredTool {
  tool: AnyTool;
  /** The tool's params, plus `preview_id` for a mutating tool whose own schema has none. */
  params: z.ZodType;
  /** False when the tool's own schema already uses `preview_id` (SPEC 2: it keeps its own). */
  previewParam: boolean;
  /** The JSON Schema of `params`, made once (zod's conversion costs more than a file read). */
  schema?: Record<string, unknown>;
}

/**
 * The tools in force: the built-ins a `--tools` manifest keeps (with its descriptions), plus every provider's tools
 * unless the manifest disables them. Every change of the set is pushed on the bus as `tools.changed`.
 */
export class Registry {
  private readonly providers = new Map<string, ToolProvider>();
  private current = new Map<string, RegisteredTool>();
  private readonly entries: Map<string, ManifestEntry> | undefined;

  constructor(
    private readonly builtins: readonly AnyTool[],
    manifest: ManifestEntry[] | undefined,
    private readonly bus?: EventBus,
    private readonly log: (message: string) => void = () => undefined,
  ) {
    this.entries = manifest ? new Map(manifest.map((e) => [e.name, e])) : undefined;
    this.current = this.compute();
  }

  tool(id: string): AnyTool | undefined {
    return this.current.get(id)?.tool;
  }

  registered(id: string): RegisteredTool | undefined {
    return this.current.get(id);
  }

  tools(): AnyTool[] {
    return [...this.current.values()].map((r) => r.tool);
  }

  describe(tool: AnyTool): string {
    return this.entries?.get(tool.id)?.description ?? tool.description;
  }

  schemaOf(tool: AnyTool): Record<string, unknown> {
    const registered = this.current.get(tool.id);
    if (registered?.tool !== tool) return inputSchema(tool);
    return (registered.schema ??= inputSchema(tool, registered.params));
  }

  /** The first provider's wait for a tool it may list soon (ToolProvider.awaitTool). */
  awaitTool(id: string, signal: AbortSignal): Promise<void> | undefined {
    for (const provider of this.providers.values()) {
      const wait = provider.awaitTool?.(id, signal);
      if (wait) return wait;
    }
    return undefined;
  }

  /** What the providers still starting say about an id none of them has yet. */
  notYet(): string | undefined {
    return (
      [...this.providers.values()]
        .map((p) => p.notYet?.())
        .filter(Boolean)
        .join(" ") || undefined
    );
  }

  /** Adds or replaces a provider; call changed() when its tools change. */
  addProvider(provider: ToolProvider): void {
    this.providers.set(provider.name, provider);
    this.changed();
  }

  removeProvider(name: string): void {
    if (this.providers.delete(name)) this.changed();
  }

  /** Recomputes the set after a provider's tools changed, and pushes what differs. */
  changed(): void {
    const before = this.current;
    const after = this.compute();
    this.current = after;
    const added = [...after.keys()].filter((id) => !before.has(id));
    const removed = [...before.keys()].filter((id) => !after.has(id));
    const changed = [...after.keys()].filter((id) => before.has(id) && before.get(id)!.tool !== after.get(id)!.tool);
    if (added.length || removed.length || changed.length) this.bus?.emit("tools.changed", { added, removed, changed });
  }

  private compute(): Map<string, RegisteredTool> {
    const out = new Map<string, RegisteredTool>();
    // A tool still in force keeps its registration: its extended params and its JSON Schema are not made again.
    const register = (tool: AnyTool) => {
      const kept = this.current.get(tool.id);
      return kept?.tool === tool ? kept : registration(tool);
    };
    for (const tool of this.builtins) {
      if (this.entries && !this.entries.has(tool.id) && !ALWAYS_ENABLED.has(tool.id)) continue;
      if (this.entries?.get(tool.id)?.enabled === false && !ALWAYS_ENABLED.has(tool.id)) continue;
      out.set(tool.id, register(tool));
    }
    for (const provider of this.providers.values()) {
      for (const tool of provider.tools()) {
        if (this.entries?.get(tool.id)?.enabled === false) continue;
        if (out.has(tool.id)) {
          this.log(`tool ${tool.id} of ${provider.name} clashes with one already registered; it is left out`);
          continue;
        }
        out.set(tool.id, register(tool));
      }
    }
    return out;
  }
}

function registration(tool: AnyTool): RegisteredTool {
  if (!tool.mutating) return { tool, params: tool.params, previewParam: false };
  const shape = tool.params instanceof z.ZodObject ? (tool.params.shape as Record<string, unknown>) : undefined;
  const own = tool.jsonSchema ? Object.hasOwn((tool.jsonSchema.properties as object | undefined) ?? {}, PREVIEW_PARAM) : shape ? PREVIEW_PARAM in shape : false;
  if (own || !(tool.params instanceof z.ZodObject)) return { tool, params: tool.params, previewParam: false };
  const params = tool.params.extend({
    [PREVIEW_PARAM]: z
      .string()
      .regex(/^[0-9a-f]{16}$/, "must be a preview_id from this tool's dry run")
      .optional()
      .describe("The preview_id of the dry run a person approved: the call runs only if it would still do exactly that, else PREVIEW_STALE."),
  });
  return { tool, params, previewParam: true };
}

/** Reads a `--tools` file; throws with a sentence for stderr when it cannot be used. */
export function readManifest(file: string, known: readonly AnyTool[], log: (message: string) => void): ManifestEntry[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new Error(`cannot read --tools ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const parsed = z.array(manifestEntry).safeParse(raw);
  if (!parsed.success) throw new Error(`--tools ${file} is not an array of {name, description?, enabled?}: ${parsed.error.issues[0]?.message}`);
  const ids = new Set(known.map((t) => t.id));
  // Passthrough tools arrive later (SPEC 6): an entry no built-in has may be one of theirs, so it is a warning only.
  const unknown = parsed.data.filter((e) => !ids.has(e.name)).map((e) => e.name);
  if (unknown.length) log(`--tools ${file} names tools no built-in has (kept for passthrough servers): ${unknown.join(", ")}`);
  return parsed.data;
}
