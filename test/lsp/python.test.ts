/** pyright-langserver on a temp project: one shared server for the file, pull diagnostics. */
import { chmodSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initHash } from "../../src/core/hash.js";
import { LspClient } from "../../src/lsp/client.js";
import { applyTextEdits } from "../../src/lsp/convert.js";
import { pythonSpec } from "../../src/lsp/servers.js";
import { isAlive, processTree } from "../../src/platform/process-tree.js";
import { tmpWorkspace, writeFile } from "../helpers/tmp.js";
import { docOf, edit, pythonProject, SLOW_TEST, WAIT_MS } from "./projects.js";

const project = pythonProject();
const dir = project.dir;
let client: LspClient;

beforeAll(async () => {
  await initHash();
  // Three open documents at most, so the test of the bound stays small.
  client = new LspClient(pythonSpec(), { root: dir, maxOpenDocuments: 3 });
  await client.start();
});

afterAll(async () => {
  await client.stop();
  project.cleanup();
});

describe("pyright-langserver", SLOW_TEST, () => {
  it("answers hover, definition and references right after start, references across files it has not listed yet", async () => {
    const main = docOf(dir, "main.py");
    const [hover, definition, references] = await Promise.all([
      client.hover(main, { line: 2, symbol: "add" }),
      client.definition(main, { line: 2, symbol: "add" }),
      client.references(docOf(dir, "util.py"), { line: 1, symbol: "add" }),
    ]);
    expect(hover.text).toContain("def add(");
    expect(definition.places).toEqual([{ path: "util.py", line: 1, column: 5, end_line: 1, end_column: 8 }]);
    // Before pyright has listed the workspace it answers from the open files only: util.py and main.py.
    expect(references.places.map((p) => p.path)).toContain("other.py");
  });

  it("reports the type error of the current content, pulled", async () => {
    const answer = await client.diagnostics(docOf(dir, "main.py"), WAIT_MS);
    expect(answer.status === "current" && answer.diagnostics.map((d) => [d.line, d.column, d.severity, d.code, d.source])).toEqual([
      [2, 10, "error", "reportAssignmentType", "Pyright"],
    ]);
  });

  it("reports an edit that fixes the error as fixed, never with the old error", async () => {
    const original = docOf(dir, "main.py");
    const fixed = edit(client, dir, "main.py", original.text.replace("x: str", "x: int"));
    expect(await client.diagnostics(fixed, WAIT_MS)).toEqual({ status: "current", hash: fixed.hash, diagnostics: [] });
    const broken = edit(client, dir, "main.py", original.text);
    const again = await client.diagnostics(broken, WAIT_MS);
    expect(again.status === "current" && again.diagnostics.map((d) => d.code)).toEqual(["reportAssignmentType"]);
  });

  it("does not answer a second edit, made while the first is checked, with the first's diagnostics", async () => {
    const original = docOf(dir, "main.py");
    const first = edit(client, dir, "main.py", original.text.replace("x: str", "x: bytes"));
    const checking = client.diagnostics(first, WAIT_MS);
    const second = edit(client, dir, "main.py", original.text.replace("x: str = add(1, 2)", 'x: int = add(1, "2")'));
    const answer = await client.diagnostics(second, WAIT_MS);
    expect(await checking).toMatchObject({ status: "unknown", hash: first.hash });
    expect(answer.status === "current" && answer.diagnostics.map((d) => d.code)).toEqual(["reportArgumentType"]);
    edit(client, dir, "main.py", original.text);
  });

  it("sees a change of a file it does not have open (watched files from the bus)", async () => {
    edit(client, dir, "helper.py", "def name() -> int:\n    return 1\n");
    const uses = edit(client, dir, "uses.py", "from helper import name\n\nv: int = name()\n");
    expect(await client.diagnostics(uses, WAIT_MS)).toEqual({ status: "current", hash: uses.hash, diagnostics: [] });
    expect(client.openFiles()).not.toContain("helper.py");
    edit(client, dir, "helper.py", 'def name() -> str:\n    return "1"\n');
    const answer = await client.diagnostics(uses, WAIT_MS);
    expect(answer.status === "current" && answer.diagnostics.map((d) => d.code)).toEqual(["reportAssignmentType"]);
    edit(client, dir, "uses.py", null);
    edit(client, dir, "helper.py", null);
  });

  it("converts positions on a line with astral characters both ways", async () => {
    const wide = docOf(dir, "wide.py");
    const lineText = wide.text.split("\n")[1];
    expect((await client.hover(wide, { line: 2, symbol: "add" })).text).toContain("def add(");
    const column = [...lineText.slice(0, lineText.indexOf("naïve"))].length + 1;
    expect((await client.hover(wide, { line: 2, column })).text).toContain("naïve: int");
    const typed = edit(client, dir, "wide.py", wide.text.replace("naïve =", "naïve: str ="));
    const answer = await client.diagnostics(typed, WAIT_MS);
    const at = column + "naïve: str = ".length;
    expect(answer.status === "current" && answer.diagnostics.map((d) => [d.line, d.column])).toEqual([[2, at]]);
    edit(client, dir, "wide.py", wide.text);
  });

  it("finds every reference of add", async () => {
    const { places } = await client.references(docOf(dir, "util.py"), { line: 1, symbol: "add" });
    expect(places.map((p) => `${p.path}:${p.line}:${p.column}`).sort()).toEqual(
      [
        "main.py:1:18",
        "main.py:2:10",
        "other.py:1:18",
        "other.py:3:9",
        "other.py:3:13",
        "util.py:1:5",
        "wide.py:1:18",
        "wide.py:2:22", // 22 code points in; 24 would be UTF-16 units
      ].sort(),
    );
  });

  it("says it has no implementations rather than answering an empty list", async () => {
    await expect(client.implementation(docOf(dir, "util.py"), { line: 1, symbol: "add" })).rejects.toMatchObject({
      code: "LSP_UNAVAILABLE",
      message: expect.stringMatching(/does not answer textDocument\/implementation/),
    });
  });

  describe("rename", () => {
    const everywhere = {
      "main.py": "from util import plus\nx: str = plus(1, 2)\nprint(x)\n",
      "other.py": "from util import plus\n\ntotal = plus(plus(1, 2), 3)\n",
      "util.py": "def plus(a: int, b: int) -> int:\n    return a + b\n",
      "wide.py": 'from util import plus\nface = "😀😀"; naïve = plus(len(face), 2)\n',
    };
    const renamed = async (file: string, line: number, symbol: string) => {
      const result = await client.rename(docOf(dir, file), { line, symbol }, "plus");
      const texts: Record<string, string> = {};
      for (const f of result.files) {
        const doc = docOf(dir, f.path);
        expect(f.hash, f.path).toBe(doc.hash);
        texts[f.path] = applyTextEdits(doc.text, f.edits);
      }
      return { texts, count: result.count };
    };

    it("at the definition edits the declaration and every use", async () => {
      expect(await renamed("util.py", 1, "add")).toEqual({ texts: everywhere, count: 8 });
    });

    it("at an import site edits the declaration and every use", async () => {
      expect(await renamed("other.py", 1, "add")).toEqual({ texts: everywhere, count: 8 });
    });
  });

  it("keeps at most three documents open, closing the least recently used", async () => {
    for (const f of ["main.py", "other.py", "wide.py", "util.py"]) await client.documentSymbols(docOf(dir, f));
    expect(client.openFiles()).toEqual(["other.py", "wide.py", "util.py"]);
    // A closed document opens again on demand and is checked as usual.
    const answer = await client.diagnostics(docOf(dir, "main.py"), WAIT_MS);
    expect(answer.status === "current" && answer.diagnostics.length).toBe(1);
  });

  it("restarts a killed server on the next call and answers again, its documents reopened", async () => {
    const before = client.pid!;
    process.kill(before, "SIGKILL");
    await new Promise<void>((resolve) => {
      const check = () => (client.state.kind === "crashed" ? resolve() : setImmediate(check));
      check();
    });
    expect(client.state).toMatchObject({ kind: "crashed", restarts: 0 });
    const answer = await client.diagnostics(docOf(dir, "main.py"), WAIT_MS);
    expect(answer.status === "current" && answer.diagnostics.length).toBe(1);
    expect(client.pid).not.toBe(before);
    expect(client.state).toEqual({ kind: "ready" });
    expect(isAlive(before)).toBe(false);
  });

  it("leaves no process behind after stop", async () => {
    const tree = processTree(client.pid!);
    await client.stop();
    expect(tree.filter(isAlive)).toEqual([]);
  });
});

describe("pyright and the workspace's interpreter", SLOW_TEST, () => {
  it("never runs a python3 the workspace put on PATH (a user's elsewhere on PATH it may run)", async () => {
    await initHash();
    const ws = pythonProject();
    const user = tmpWorkspace();
    const fake = (where: string) => `#!/bin/sh\necho "$0" >> ${JSON.stringify(path.join(where, "ran.txt"))}\nexit 1\n`;
    writeFile(ws.dir, "bin/python3", fake(ws.dir));
    writeFile(user.dir, "bin/python3", fake(user.dir));
    chmodSync(path.join(ws.dir, "bin/python3"), 0o755);
    chmodSync(path.join(user.dir, "bin/python3"), 0o755);
    const env = { ...process.env, PATH: [path.join(ws.dir, "bin"), path.join(user.dir, "bin"), process.env.PATH].join(path.delimiter), VIRTUAL_ENV: ws.dir };
    const c = new LspClient(pythonSpec(), { root: ws.dir, env });
    try {
      const answer = await c.diagnostics(docOf(ws.dir, "main.py"), WAIT_MS);
      expect(answer).toMatchObject({ status: "current" });
      // The control: pyright does run python3 from PATH, so the workspace's would have run had it stayed on PATH.
      expect(readFileSync(path.join(user.dir, "ran.txt"), "utf8")).toContain(path.join(user.dir, "bin/python3"));
      expect(() => readFileSync(path.join(ws.dir, "ran.txt"))).toThrow(/ENOENT/);
    } finally {
      await c.stop();
      ws.cleanup();
      user.cleanup();
    }
  });
});
