/** typescript-language-server with our own typescript, on a temp project: one shared server for the file. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initHash } from "../../src/core/hash.js";
import { LspClient } from "../../src/lsp/client.js";
import { applyTextEdits } from "../../src/lsp/convert.js";
import { typescriptSpec } from "../../src/lsp/servers.js";
import { isAlive, processTree } from "../../src/platform/process-tree.js";
import { docOf, edit, ranMarkers, typescriptProject, SLOW_TEST, WAIT_MS } from "./projects.js";

const project = typescriptProject();
const dir = project.dir;
let client: LspClient;

beforeAll(async () => {
  await initHash();
  client = new LspClient(typescriptSpec(), { root: dir });
  await client.start();
});

afterAll(async () => {
  await client.stop();
  project.cleanup();
});

describe("typescript-language-server", SLOW_TEST, () => {
  it("answers hover and definition right after start, before the project has loaded (no syntax server)", async () => {
    const main = docOf(dir, "src/main.ts");
    const [hover, definition, references] = await Promise.all([
      client.hover(main, { line: 2, symbol: "sum" }),
      client.definition(main, { line: 2, symbol: "sum" }),
      client.references(main, { line: 1, symbol: "add" }),
    ]);
    // The syntax server answers "import sum", the import line, and 3 references of 10.
    expect(hover.text).toContain("sum(a: number, b: number): number");
    expect(hover.hash).toBe(main.hash);
    expect(definition.places).toEqual([{ path: "src/math.ts", line: 1, column: 17, end_line: 1, end_column: 20 }]);
    expect(references.places).toHaveLength(10);
  });

  it("reports the type error of the current content", async () => {
    const answer = await client.diagnostics(docOf(dir, "src/main.ts"), WAIT_MS);
    expect(answer).toMatchObject({ status: "current", hash: docOf(dir, "src/main.ts").hash });
    expect(answer.status === "current" && answer.diagnostics).toEqual([
      {
        line: 2,
        column: 7,
        end_line: 2,
        end_column: 8,
        severity: "error",
        code: 2322,
        source: "typescript",
        message: "Type 'number' is not assignable to type 'string'.",
      },
    ]);
  });

  it("runs the project's own typescript, never the workspace's, and loads no tsconfig plugin", () => {
    expect(client.typescript).toEqual({ version: "5.9.3", source: "user-setting" });
    expect(ranMarkers(dir)).toEqual([]);
  });

  it("reports an edit that fixes the error as fixed, never with the old error", async () => {
    const original = docOf(dir, "src/main.ts");
    const fixed = edit(client, dir, "src/main.ts", original.text.replace("const x: string", "const x: number"));
    expect(await client.diagnostics(fixed, WAIT_MS)).toEqual({ status: "current", hash: fixed.hash, diagnostics: [] });
    const broken = edit(client, dir, "src/main.ts", original.text);
    const again = await client.diagnostics(broken, WAIT_MS);
    expect(again.status === "current" && again.diagnostics.map((d) => d.code)).toEqual([2322]);
  });

  it("does not answer a second edit, made while the first is checked, with the first's diagnostics", async () => {
    const original = docOf(dir, "src/main.ts");
    const first = edit(client, dir, "src/main.ts", original.text.replace("const x: string", "const x: boolean"));
    const checking = client.diagnostics(first, WAIT_MS);
    const second = edit(client, dir, "src/main.ts", original.text.replace("const x: string = sum(1, 2)", 'const x: number = sum(1, "2")'));
    const answer = await client.diagnostics(second, WAIT_MS);
    expect(await checking).toMatchObject({ status: "unknown", hash: first.hash });
    expect(answer.status).toBe("current");
    expect(answer.hash).toBe(second.hash);
    expect(answer.status === "current" && answer.diagnostics.map((d) => d.message)).toEqual([
      "Argument of type 'string' is not assignable to parameter of type 'number'.",
    ]);
    edit(client, dir, "src/main.ts", original.text);
  });

  it("converts positions on a line with astral characters both ways", async () => {
    const wide = docOf(dir, "src/wide.ts");
    const hover = await client.hover(wide, { line: 2, symbol: "add" });
    expect(hover.text).toContain("add(a: number, b: number): number");
    const lineText = wide.text.split("\n")[1];
    const column = [...lineText.slice(0, lineText.indexOf("naïve"))].length + 1;
    expect((await client.hover(wide, { line: 2, column })).text).toContain("naïve: number");
    const typed = edit(client, dir, "src/wide.ts", wide.text.replace("naïve =", "naïve: string ="));
    const answer = await client.diagnostics(typed, WAIT_MS);
    expect(answer.status === "current" && answer.diagnostics.map((d) => [d.line, d.column, d.end_column])).toEqual([[2, column, column + 5]]);
    edit(client, dir, "src/wide.ts", wide.text);
  });

  it("finds every reference of add, through the alias too", async () => {
    const { places } = await client.references(docOf(dir, "src/math.ts"), { line: 1, symbol: "add" });
    const seen = places.map((p) => `${p.path}:${p.line}:${p.column}`).sort();
    expect(seen).toEqual(
      [
        "src/main.ts:1:10",
        "src/main.ts:1:17",
        "src/main.ts:2:19",
        "src/main.ts:3:16",
        "src/math.ts:1:17",
        "src/other.ts:1:10",
        "src/other.ts:2:22",
        "src/other.ts:2:26",
        "src/wide.ts:1:10",
        "src/wide.ts:2:41", // 41 code points in; 44 would be UTF-16 units
      ].sort(),
    );
  });

  it("finds the implementations of an interface and of its method", async () => {
    const shape = docOf(dir, "src/shape.ts");
    expect((await client.implementation(shape, { line: 1, symbol: "Shape" })).places).toEqual([
      { path: "src/shape.ts", line: 4, column: 14, end_line: 4, end_column: 20 },
    ]);
    expect((await client.implementation(shape, { line: 2, symbol: "area" })).places).toEqual([
      { path: "src/shape.ts", line: 5, column: 3, end_line: 5, end_column: 7 },
    ]);
  });

  describe("rename", () => {
    const renamed = async (file: string, line: number, symbol: string, newName: string) => {
      const result = await client.rename(docOf(dir, file), { line, symbol }, newName);
      const texts: Record<string, string> = {};
      for (const f of result.files) {
        const doc = docOf(dir, f.path);
        expect(f.hash, f.path).toBe(doc.hash); // every file's edits are about a hash we know
        texts[f.path] = applyTextEdits(doc.text, f.edits);
      }
      return { texts, count: result.count };
    };
    const everywhere = {
      "src/main.ts": 'import { plus as sum } from "./math.js";\nconst x: string = sum(1, 2);\nconsole.log(x, sum(3, 4));\n',
      "src/math.ts": "export function plus(a: number, b: number): number {\n  return a + b;\n}\n",
      "src/other.ts": 'import { plus } from "./math.js";\nexport const total = plus(plus(1, 2), 3);\n',
      "src/wide.ts": 'import { plus } from "./math.js";\nconst face = "😀😀"; export const naïve = plus(face.length, 2);\n',
    };

    it("at the definition edits the declaration and every use", async () => {
      expect(await renamed("src/math.ts", 1, "add", "plus")).toEqual({ texts: everywhere, count: 7 });
    });

    it("at an import site edits the declaration and every use, not a local alias", async () => {
      expect(await renamed("src/other.ts", 1, "add", "plus")).toEqual({ texts: everywhere, count: 7 });
    });

    it("at an alias edits the alias and its uses only", async () => {
      expect(await renamed("src/main.ts", 1, "sum", "total")).toEqual({
        texts: { "src/main.ts": 'import { add as total } from "./math.js";\nconst x: string = total(1, 2);\nconsole.log(x, total(3, 4));\n' },
        count: 3,
      });
    });

    it("is NOT_FOUND where there is nothing to rename", async () => {
      // console is the standard library's: tsserver refuses to rename it.
      await expect(client.rename(docOf(dir, "src/main.ts"), { line: 3, symbol: "console" }, "x")).rejects.toMatchObject({ code: "NOT_FOUND" });
    });
  });

  it("gives a file's outline and workspace symbols", async () => {
    const { symbols } = await client.documentSymbols(docOf(dir, "src/math.ts"));
    expect(symbols).toEqual([{ name: "add", kind: "function", depth: 0, place: { path: "src/math.ts", line: 1, column: 17, end_line: 1, end_column: 20 } }]);
    const found = await client.workspaceSymbols("total");
    expect(found.map((s) => `${s.name} ${s.kind} ${s.place.path}:${s.place.line}`)).toContain("total constant src/other.ts:2");
  });

  it("closes a deleted file", async () => {
    const extra = edit(client, dir, "src/extra.ts", "export const e = 1;\n");
    await client.hover(extra, { line: 1, symbol: "e" });
    expect(client.openFiles()).toContain("src/extra.ts");
    edit(client, dir, "src/extra.ts", null);
    expect(client.openFiles()).not.toContain("src/extra.ts");
  });

  it("leaves no process behind after stop, tsserver included", async () => {
    const tree = processTree(client.pid!);
    expect(tree.length).toBeGreaterThanOrEqual(2); // typescript-language-server and its tsserver
    await client.stop();
    expect(tree.filter(isAlive)).toEqual([]);
    expect(client.state).toEqual({ kind: "stopped" });
  });
});
