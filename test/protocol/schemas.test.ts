import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { protocolSchemas, schemaText } from "../../src/protocol/schema/index.js";
import { RESULTS } from "../../src/protocol/schema/results.js";
import { BUILTINS } from "../../src/protocol/schema/tools.js";
import { TOOLS } from "../../src/tools/index.js";

const SCHEMAS = fileURLToPath(new URL("../../schemas/", import.meta.url));

function filesUnder(dir: string, rel = ""): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(dir, path.join(rel, e.name)) : [path.join(rel, e.name)],
  );
}

describe("schemas/", () => {
  it("is what npm run tools-json writes from the zod schemas (run it after changing a tool, a result or an event)", () => {
    const expected = protocolSchemas();
    expect(filesUnder(SCHEMAS).sort()).toEqual([...expected.keys()].sort());
    for (const [rel, schema] of expected) expect(readFileSync(path.join(SCHEMAS, rel), "utf8"), rel).toBe(schemaText(schema));
  });

  it("has every built-in tool, each with a result schema that names the dry run exactly when the tool is mutating", () => {
    expect(Object.keys(BUILTINS)).toEqual(TOOLS.map((t) => t.id));
    for (const tool of TOOLS) expect((BUILTINS as Record<string, unknown>)[tool.id], tool.id).toBe(tool);
    expect(Object.keys(RESULTS).sort()).toEqual(TOOLS.map((t) => t.id).sort());
    const namesDryRun = (id: string) => "dry_run" in (RESULTS as Record<string, { shape: object }>)[id].shape;
    expect(TOOLS.filter((t) => namesDryRun(t.id) !== t.mutating).map((t) => t.id)).toEqual([]);
  });
});
