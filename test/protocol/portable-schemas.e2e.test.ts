import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manifest } from "../../src/manifest.js";
import { MAIN } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

const TOOLS_JSON = fileURLToPath(new URL("../../tools.json", import.meta.url));
const REVISION_SERVER = fileURLToPath(new URL("../fixtures/mcp-revision-server.mjs", import.meta.url));

/**
 * Python's own judges of a schema: jsonschema's Draft 2020-12 metaschema check (its `regex` format is `re.compile`),
 * and `re.compile` of every `pattern` and `patternProperties` key. Prints the problems as a JSON array.
 */
const PYTHON_CHECK = `
import json, re, sys
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

def patterns(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            if key == "patternProperties" and isinstance(value, dict):
                yield from value
            yield from patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from patterns(value)

problems = []
for name, schema in json.load(sys.stdin).items():
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as e:
        problems.append(f"{name}: jsonschema: {e.message}")
    for p in patterns(schema):
        try:
            re.compile(p)
        except re.error as e:
            problems.append(f"{name}: re: {p}: {e}")
print(json.dumps(problems))
`;

function pythonProblems(schemas: Record<string, unknown>): string[] {
  return JSON.parse(execFileSync("python3", ["-c", PYTHON_CHECK], { input: JSON.stringify(schemas), encoding: "utf8" })) as string[];
}

/** The same walk in ECMAScript: every pattern compiles as a JSON Schema regex does (ECMA-262, unicode mode). */
function ecmaProblems(schemas: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const walk = (name: string, node: unknown): void => {
    if (Array.isArray(node)) {
      for (const v of node) walk(name, v);
      return;
    }
    if (!node || typeof node !== "object") return;
    for (const [key, value] of Object.entries(node)) {
      const found =
        key === "pattern" && typeof value === "string" ? [value] : key === "patternProperties" && value && typeof value === "object" ? Object.keys(value) : [];
      for (const p of found) {
        try {
          new RegExp(p, "u");
        } catch (e) {
          problems.push(`${name}: ${p}: ${(e as Error).message}`);
        }
      }
      walk(name, value);
    }
  };
  for (const [name, schema] of Object.entries(schemas)) walk(name, schema);
  return problems;
}

function expectPortable(schemas: Record<string, unknown>): void {
  expect(Object.keys(schemas).length).toBeGreaterThan(0);
  expect(pythonProblems(schemas)).toEqual([]);
  expect(ecmaProblems(schemas)).toEqual([]);
}

describe("every input schema a host receives compiles in ECMAScript and in Python (re, jsonschema 2020-12)", () => {
  it("the registry's input schemas", () => {
    expectPortable(Object.fromEntries(manifest().map((e) => [e.name, e.input_schema])));
  });

  it("tools.json", () => {
    const entries = JSON.parse(readFileSync(TOOLS_JSON, "utf8")) as { name: string; input_schema: unknown }[];
    expectPortable(Object.fromEntries(entries.map((e) => [e.name, e.input_schema])));
  });

  describe("the MCP tools/list of a daemon, passthrough tools included", () => {
    const ws = tmpWorkspace();
    const state = tmpWorkspace();
    let client: Client;
    beforeAll(async () => {
      const config = path.join(state.dir, "servers.json");
      writeFileSync(config, JSON.stringify({ mcpServers: { rev: { command: process.execPath, args: [REVISION_SERVER, "2025-11-25"] } } }));
      client = new Client({ name: "test-client", version: "1.0.0" });
      let changed = () => {};
      client.setNotificationHandler("notifications/tools/list_changed", () => changed());
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [MAIN, "--mcp", "--root", ws.dir, "--mcp-config", config],
          stderr: "pipe",
          env: { ...process.env, XDG_STATE_HOME: state.dir } as Record<string, string>,
        }),
      );
      // The passthrough server's tools arrive after the daemon is up: wait until they are listed.
      for (;;) {
        const next = new Promise<void>((resolve) => (changed = resolve));
        if ((await client.listTools()).tools.some((t) => t.name === "rev_greet")) break;
        await next;
      }
    });
    afterAll(async () => {
      await client.close();
      ws.cleanup();
      state.cleanup();
    });

    it("compiles", async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["lsp_rename", "rev_echo", "rev_greet"]));
      expectPortable(Object.fromEntries(tools.map((t) => [t.name, t.inputSchema])));
    });

    it("a passthrough tool whose pattern was left out is still checked by its server, and a good name passes", async () => {
      const good = await client.callTool({ name: "rev_greet", arguments: { name: "héllo" } });
      expect(good.isError).toBeFalsy();
      expect((good.content as { text: string }[])[0].text).toBe("hello héllo");
      const bad = await client.callTool({ name: "rev_greet", arguments: { name: "no digits 1" } });
      expect(bad.isError).toBe(true);
    });
  });
});
