import { z } from "zod";
import { describe, expect, it } from "vitest";
import { Registry } from "../../src/dispatch/registry.js";
import { EventBus } from "../../src/platform/bus.js";
import { type AnyTool, defineTool, hintsOf } from "../../src/dispatch/tool.js";

const builtin = defineTool({ id: "alpha", description: "A.", params: {}, mutating: false, run: async () => ({}) });
const writer = defineTool({ id: "writer", description: "W.", params: { x: z.string().describe("x") }, mutating: true, run: async () => ({}) });

/** A passthrough tool as an MCP server gives it: a JSON Schema, mutating unless annotated read-only. */
function served(id: string, schema: Record<string, unknown>, mutating = true): AnyTool {
  return { id, description: `srv: ${id}`, params: z.fromJSONSchema(schema), jsonSchema: schema, mutating, provider: "srv", run: async (p) => ({ got: p }) };
}

function setup(manifest?: { name: string; enabled?: boolean; description?: string }[]) {
  const bus = new EventBus();
  const changes: unknown[] = [];
  bus.on("tools.changed", (c) => changes.push(c));
  const logs: string[] = [];
  const registry = new Registry([builtin, writer], manifest, bus, (m) => logs.push(m));
  let tools: AnyTool[] = [];
  const provider = { name: "srv", tools: () => tools };
  return { registry, changes, logs, provider, setTools: (t: AnyTool[]) => (tools = t) };
}

describe("the dynamic registry", () => {
  it("adds, changes and removes a provider's tools, pushing each change once", () => {
    const { registry, changes, provider, setTools } = setup();
    const echo = served("srv_echo", { type: "object", properties: { text: { type: "string" } } }, false);
    setTools([echo]);
    registry.addProvider(provider);
    expect(registry.tools().map((t) => t.id)).toEqual(["alpha", "writer", "srv_echo"]);
    const echo2 = { ...echo, description: "srv: echo, louder" };
    const add = served("srv_add", { type: "object", properties: { a: { type: "number" } }, required: ["a"] });
    setTools([echo2, add]);
    registry.changed();
    registry.changed(); // nothing new: no event
    setTools([add]);
    registry.changed();
    registry.removeProvider("srv");
    expect(changes).toEqual([
      { added: ["srv_echo"], removed: [], changed: [] },
      { added: ["srv_add"], removed: [], changed: ["srv_echo"] },
      { added: [], removed: ["srv_echo"], changed: [] },
      { added: [], removed: ["srv_add"], changed: [] },
    ]);
  });

  it("keeps a tool's registration (and its JSON Schema) while the tool stays, across other tools' changes", () => {
    const { registry, provider, setTools } = setup();
    const schema = registry.schemaOf(writer);
    const echo = served("srv_echo", { type: "object" }, false);
    setTools([echo]);
    registry.addProvider(provider);
    expect(registry.schemaOf(writer)).toBe(schema);
    const registered = registry.registered("srv_echo");
    setTools([echo, served("srv_add", { type: "object" })]);
    registry.changed();
    expect(registry.registered("srv_echo")).toBe(registered);
  });

  it("checks a JSON Schema tool's params, and shows its schema as the server gave it", () => {
    const { registry, provider, setTools } = setup();
    const schema = { type: "object", properties: { a: { type: "integer", minimum: 1 } }, required: ["a"] };
    setTools([served("srv_add", schema)]);
    registry.addProvider(provider);
    const r = registry.registered("srv_add")!;
    expect(r.params.safeParse({ a: 2 }).success).toBe(true);
    expect(r.params.safeParse({ a: 0 }).success).toBe(false);
    expect(r.params.safeParse({}).success).toBe(false);
    expect(registry.schemaOf(r.tool)).toEqual(schema);
  });

  it("adds preview_id to mutating tools, unless their own schema has one", () => {
    const { registry, provider, setTools } = setup();
    setTools([served("srv_own", { type: "object", properties: { preview_id: { type: "string" } } })]);
    registry.addProvider(provider);
    expect(registry.registered("writer")).toMatchObject({ previewParam: true });
    expect((registry.schemaOf(writer).properties as Record<string, unknown>).preview_id).toMatchObject({ type: "string", pattern: "^[0-9a-f]{16}$" });
    expect(registry.registered("alpha")).toMatchObject({ previewParam: false });
    expect(registry.registered("srv_own")).toMatchObject({ previewParam: false });
  });

  it("a --tools manifest keeps the built-ins it names, disables passthrough ids it turns off, and redescribes", () => {
    const { registry, provider, setTools, logs } = setup([
      { name: "alpha", description: "Custom." },
      { name: "srv_off", enabled: false },
    ]);
    setTools([served("srv_on", { type: "object" }), served("srv_off", { type: "object" })]);
    registry.addProvider(provider);
    expect(registry.tools().map((t) => t.id)).toEqual(["alpha", "srv_on"]);
    expect(registry.describe(builtin)).toBe("Custom.");
    expect(logs).toEqual([]);
  });

  it("leaves out a provider's tool whose id a built-in already has, and says so", () => {
    const { registry, provider, setTools, logs } = setup();
    setTools([served("alpha", { type: "object" })]);
    registry.addProvider(provider);
    expect(registry.tool("alpha")).toBe(builtin);
    expect(logs.join()).toMatch(/alpha of srv clashes/);
  });

  it("derives the hints a tool does not set from mutating", () => {
    expect(hintsOf(builtin)).toEqual({ read_only: true, destructive: false, idempotent: true, open_world: false });
    expect(hintsOf(writer)).toEqual({ read_only: false, destructive: true, idempotent: false, open_world: false });
    expect(hintsOf({ ...writer, hints: { destructive: false, open_world: true } })).toMatchObject({ destructive: false, open_world: true });
  });
});
