/** lsp_rename refuses a new name its file's language would not parse, before any language server is asked. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

const FILES = { "util.py": "def add(a, b):\n    return a + b\n", "util.ts": "export function add(a: number, b: number) {\n  return a + b;\n}\n" };

describe("lsp_rename checks the new name by the file's language", () => {
  const ws = tmpWorkspace({ git: true, files: FILES });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));

  for (const [file, name, why] of [
    ["util.py", "class", /"class" is a keyword of Python/],
    ["util.py", "pop$ctx", /"pop\$ctx" is not a Python identifier/],
    ["util.py", "None", /"None" is a keyword of Python/],
    ["util.ts", "class", /"class" is a reserved word of TypeScript\/JavaScript/],
    ["util.ts", "interface", /"interface" is a reserved word of TypeScript\/JavaScript \(in strict mode/],
    ["util.ts", "2fast", /"2fast" is not a TypeScript\/JavaScript identifier/],
  ] as const) {
    it(`${file}: ${name} is INVALID_PARAMS, and nothing is written`, async () => {
      const r = await d.call("lsp_rename", { path: file, line: 1, symbol: "add", new_name: name }, { approved: true });
      expect(r.result.code).toBe("INVALID_PARAMS");
      expect(r.result.message).toMatch(why);
      expect(readFileSync(path.join(ws.dir, file), "utf8")).toBe(FILES[file]);
    });
  }

  it("the schema no longer has a pattern: a name of any script gets to the language's check", async () => {
    const info = await d.ok("info", { tool_id: "lsp_rename" });
    expect(info.input_schema.properties.new_name.pattern).toBeUndefined();
  });
});
