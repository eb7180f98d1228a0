/** The lsp_* tools on typescript-language-server, through the real daemon: one daemon for the file. */
import { readlinkSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash, tagOf } from "../../src/core/hash.js";
import { isAlive, processTree } from "../../src/platform/process-tree.js";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { until } from "../helpers/process.js";
import { codesOf, diagnostics, diagnosticsEvent, diagnosticsEvents, disk, external, externalAtomic, mark, lspInfo, serverOf } from "./daemon-lsp.js";
import { ranMarkers, typescriptProject, SLOW_TEST, WAIT_MS } from "./projects.js";

const project = typescriptProject();
const dir = project.dir;
let d: DaemonClient;
daemonForSuite(project, (c) => (d = c));
beforeAll(initHash);

const MAIN = 'import { add as sum } from "./math.js";\nconst x: string = sum(1, 2);\nconsole.log(x, sum(3, 4));\n';
const TYPE_ERROR = "Type 'number' is not assignable to type 'string'.";

describe("lsp tools on typescript", SLOW_TEST, () => {
  it("answers hover and definition right away, before the project has loaded, about the file's hash", async () => {
    const [hover, definition] = await Promise.all([
      d.ok("lsp_hover", { path: "src/main.ts", line: 2, symbol: "sum" }),
      d.ok("lsp_definition", { path: "src/main.ts", line: 2, symbol: "sum" }),
    ]);
    expect(hover).toMatchObject({ path: "src/main.ts", hash: fileHash(Buffer.from(MAIN)), line: 2 });
    expect(hover.hover).toContain("sum(a: number, b: number): number");
    expect(hover.text.split("\n")[0]).toBe(`hover src/main.ts:2 "sum" · hash ${hover.hash}`);
    const declaration = "export function add(a: number, b: number): number {";
    expect(definition.places).toEqual([{ path: "src/math.ts", line: 1, tag: tagOf(declaration), column: 17, end_line: 1, end_column: 20 }]);
    expect(definition.text.split("\n")[1]).toBe(`src/math.ts:1|${tagOf(declaration)} ${declaration}`);
  });

  it("reports the type error of the current content, each place rendered with its tag", async () => {
    const answer = await diagnostics(d, "src/main.ts");
    const line = "const x: string = sum(1, 2);";
    expect(answer).toMatchObject({ path: "src/main.ts", hash: fileHash(Buffer.from(MAIN)), status: "current" });
    expect(answer.diagnostics).toEqual([
      { line: 2, tag: tagOf(line), column: 7, end_line: 2, end_column: 8, severity: "error", code: 2322, source: "typescript", message: TYPE_ERROR },
    ]);
    expect(answer.text.split("\n").slice(1)).toEqual([`src/main.ts:2|${tagOf(line)} ${line}`, `  col 7 error typescript 2322: ${TYPE_ERROR}`]);
  });

  it("points by N:TAG, checking the tag, and refuses a symbol not on the line, a bad position or a file no server handles", async () => {
    const line = "const x: string = sum(1, 2);";
    const byTag = await d.ok("lsp_hover", { path: "src/main.ts", line: `2:${tagOf(line)}`, symbol: "x" });
    expect(byTag.hover).toContain("const x: string");
    const wrongTag = await d.call("lsp_hover", { path: "src/main.ts", line: "3:" + tagOf(line), symbol: "x" });
    expect(wrongTag.result).toMatchObject({ code: "TAG_MISMATCH", now_at: [`2:${tagOf(line)}`] });
    expect((await d.call("lsp_definition", { path: "src/main.ts", line: 2, symbol: "nothing" })).result.code).toBe("NOT_FOUND");
    expect((await d.call("lsp_hover", { path: "src/main.ts", line: 2, symbol: "x", column: 7 })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("lsp_hover", { path: "src/main.ts", line: 2 })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("lsp_hover", { path: "src/main.ts", line: 99, column: 1 })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("lsp_hover", { path: "tsconfig.json", line: 1, column: 1 })).result.code).toBe("LSP_UNAVAILABLE");
    expect((await d.call("lsp_hover", { path: "src/none.ts", line: 1, column: 1 })).result.code).toBe("NOT_FOUND");
    expect((await d.call("lsp_hover", { path: "../outside.ts", line: 1, column: 1 })).result.code).toBe("PATH_OUTSIDE_ROOT");
  });

  it("reports an external edit that fixes the error as fixed, never with the old error, at once", async () => {
    const fixed = external(dir, "src/main.ts", MAIN.replace("const x: string", "const x: number"));
    // No wait for the watcher: the call reads the disk and syncs the server first.
    expect(await diagnostics(d, "src/main.ts")).toMatchObject({ status: "current", hash: fixed, diagnostics: [] });
    const broken = external(dir, "src/main.ts", MAIN);
    expect(codesOf(await diagnostics(d, "src/main.ts"), broken)).toEqual([2322]);
  });

  it("does not answer a second edit, made while the first is checked, with the first's diagnostics", async () => {
    const firstText = MAIN.replace("const x: string", "const x: boolean");
    const secondText = MAIN.replace("const x: string = sum(1, 2)", 'const x: number = sum(1, "2")');
    const expected: Record<string, string[]> = {
      [fileHash(Buffer.from(firstText))]: ["Type 'number' is not assignable to type 'boolean'."],
      [fileHash(Buffer.from(secondText))]: ["Argument of type 'string' is not assignable to parameter of type 'number'."],
    };
    external(dir, "src/main.ts", firstText);
    const checking = diagnostics(d, "src/main.ts");
    const second = external(dir, "src/main.ts", secondText);
    const answer = await diagnostics(d, "src/main.ts");
    const first = await checking;
    expect(answer).toMatchObject({ status: "current", hash: second });
    for (const a of [first, answer]) if (a.status === "current") expect(a.diagnostics.map((x: any) => x.message)).toEqual(expected[a.hash]);
    // Every pushed list, too, is the one of the content it names.
    for (const e of diagnosticsEvents(d, "src/main.ts")) if (expected[e.hash!]) expect(e.diagnostics.map((x) => x.message)).toEqual(expected[e.hash!]);
    external(dir, "src/main.ts", MAIN);
  });

  it("pushes lsp.diagnostics after an edit of an open file, and none after an edit that leaves the list as it was", async () => {
    // Lists no earlier test had, so each must be pushed whatever was pushed before.
    const dated = MAIN.replace("const x: string", "const x: Date");
    let since = mark(d);
    const first = externalAtomic(dir, "src/main.ts", dated);
    // Nobody asks: the bus brings the change, and the daemon checks the open file itself.
    const event = await diagnosticsEvent(d, "src/main.ts", first, since);
    expect(event.diagnostics.map((x: any) => x.message)).toEqual(["Type 'number' is not assignable to type 'Date'."]);
    const same = externalAtomic(dir, "src/main.ts", `${dated}// a comment after the error: the list stays as it was\n`);
    expect(codesOf(await diagnostics(d, "src/main.ts"), same)).toEqual([2322]);
    // A later change that does change the list: its event comes after any the unchanged one could have sent.
    since = mark(d);
    const later = externalAtomic(dir, "src/main.ts", MAIN.replace("const x: string", "const x: RegExp"));
    expect((await diagnosticsEvent(d, "src/main.ts", later, since)).diagnostics.map((x: any) => x.message)).toEqual([
      "Type 'number' is not assignable to type 'RegExp'.",
    ]);
    expect(diagnosticsEvents(d, "src/main.ts").filter((e) => e.hash === same)).toEqual([]);
    external(dir, "src/main.ts", MAIN);
  });

  it("finds references across files and implementations, each line once in text", async () => {
    const refs = await d.ok("lsp_references", { path: "src/math.ts", line: 1, symbol: "add" });
    expect(refs.places.map((p: any) => `${p.path}:${p.line}:${p.column}`).sort()).toEqual(
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
        "src/wide.ts:2:41",
      ].sort(),
    );
    const lines = refs.text.split("\n").slice(1);
    expect(lines).toHaveLength(8); // 10 places on 8 lines
    expect(lines).toContain(`src/other.ts:2|${tagOf("export const total = add(add(1, 2), 3);")} export const total = add(add(1, 2), 3);`);
    const impl = await d.ok("lsp_implementation", { path: "src/shape.ts", line: 1, symbol: "Shape" });
    expect(impl.places).toEqual([
      { path: "src/shape.ts", line: 4, tag: tagOf("export class Square implements Shape {"), column: 14, end_line: 4, end_column: 20 },
    ]);
  });

  it("gives a file's outline and the project's symbols matching a query", async () => {
    const outline = await d.ok("lsp_symbols", { path: "src/shape.ts" });
    expect(outline.symbols.map((s: any) => `${"  ".repeat(s.depth)}${s.kind} ${s.name} ${s.line}`)).toEqual([
      "interface Shape 1",
      "  method area 2",
      "class Square 4",
      "  method area 5",
    ]);
    const found = await d.ok("lsp_symbols", { query: "total" });
    expect(found.symbols).toContainEqual(expect.objectContaining({ name: "total", kind: "constant", path: "src/other.ts", line: 2 }));
    expect((await d.call("lsp_symbols", {})).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("lsp_symbols", { path: "src/shape.ts", query: "x" })).result.code).toBe("INVALID_PARAMS");
  });

  describe("lsp_rename", () => {
    const ORIGINAL = {
      "src/main.ts": MAIN,
      "src/math.ts": disk(dir, "src/math.ts"),
      "src/other.ts": disk(dir, "src/other.ts"),
      "src/wide.ts": disk(dir, "src/wide.ts"),
    };
    const RENAMED = {
      "src/main.ts": 'import { plus as sum } from "./math.js";\nconst x: string = sum(1, 2);\nconsole.log(x, sum(3, 4));\n',
      "src/math.ts": "export function plus(a: number, b: number): number {\n  return a + b;\n}\n",
      "src/other.ts": 'import { plus } from "./math.js";\nexport const total = plus(plus(1, 2), 3);\n',
      "src/wide.ts": 'import { plus } from "./math.js";\nconst face = "😀😀"; export const naïve = plus(face.length, 2);\n',
    };
    const files = () => Object.fromEntries(Object.keys(ORIGINAL).map((f) => [f, disk(dir, f)]));
    const toolChange = (rel: string, text: string) =>
      d.waitFor(
        (l) =>
          l.event === "fs.changed" &&
          l.data.changes.some(
            (c: any) => c.path === rel && c.hash === fileHash(Buffer.from(text)) && c.origin === "tool" && c.tool === "lsp_rename" && c.by === "s1",
          ),
        WAIT_MS,
      );

    it("at the definition: a preview of every file, then all of them written, attributed", async () => {
      const preview = await d.ok("lsp_rename", { path: "src/math.ts", line: 1, symbol: "add", new_name: "plus" }, { approved: false });
      expect(preview).toMatchObject({ dry_run: true, count: 7, preview_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
      const edits: Record<string, number> = { "src/main.ts": 1, "src/math.ts": 1, "src/other.ts": 3, "src/wide.ts": 2 };
      expect(preview.files.map((f: any) => [f.path, f.previous_hash, f.hash, f.edits])).toEqual(
        Object.keys(ORIGINAL).map((p) => [
          p,
          fileHash(Buffer.from(ORIGINAL[p as keyof typeof ORIGINAL])),
          fileHash(Buffer.from(RENAMED[p as keyof typeof RENAMED])),
          edits[p],
        ]),
      );
      expect(preview.files[1].diff).toContain("-export function add(a: number, b: number): number {\n+export function plus(a: number, b: number): number {");
      expect(files()).toEqual(ORIGINAL);
      // The same call on the same state: the same preview, so an approval can be bound to it.
      expect((await d.ok("lsp_rename", { path: "src/math.ts", line: 1, symbol: "add", new_name: "plus" }, { approved: false })).preview_id).toBe(
        preview.preview_id,
      );

      const done = await d.ok("lsp_rename", { path: "src/math.ts", line: 1, symbol: "add", new_name: "plus", preview_id: preview.preview_id });
      expect(done.count).toBe(7);
      expect(files()).toEqual(RENAMED);
      expect(done.files.map((f: any) => f.hash)).toEqual(Object.values(RENAMED).map((t) => fileHash(Buffer.from(t))));
      await Promise.all(Object.entries(RENAMED).map(([p, t]) => toolChange(p, t)));
    });

    it("at an import site: the declaration and every use, not a local alias", async () => {
      const preview = await d.ok("lsp_rename", { path: "src/other.ts", line: 1, symbol: "plus", new_name: "add" }, { approved: false });
      expect(preview.count).toBe(7);
      await d.ok("lsp_rename", { path: "src/other.ts", line: 1, symbol: "plus", new_name: "add", preview_id: preview.preview_id });
      expect(files()).toEqual(ORIGINAL);
    });

    it("writes nothing when one of its files changed after the preview: HASH_MISMATCH, or PREVIEW_STALE with preview_id", async () => {
      const params = { path: "src/math.ts", line: 1, symbol: "add", new_name: "plus" };
      const preview = await d.ok("lsp_rename", params, { approved: false });
      const touched = `${ORIGINAL["src/other.ts"]}// touched by someone else\n`;
      external(dir, "src/other.ts", touched);
      const mismatch = await d.call("lsp_rename", params);
      expect(mismatch.result).toMatchObject({ code: "HASH_MISMATCH", current_hash: fileHash(Buffer.from(touched)) });
      expect(files()).toEqual({ ...ORIGINAL, "src/other.ts": touched });

      const again = await d.ok("lsp_rename", params, { approved: false });
      external(dir, "src/wide.ts", `${ORIGINAL["src/wide.ts"]}// touched\n`);
      const stale = await d.call("lsp_rename", { ...params, preview_id: again.preview_id });
      expect(stale.result).toMatchObject({ code: "PREVIEW_STALE", preview_id: expect.not.stringMatching(again.preview_id) });
      expect(files()).toEqual({ ...ORIGINAL, "src/other.ts": touched, "src/wide.ts": `${ORIGINAL["src/wide.ts"]}// touched\n` });
      expect(preview.preview_id).not.toBe(again.preview_id);
      external(dir, "src/other.ts", ORIGINAL["src/other.ts"]);
      external(dir, "src/wide.ts", ORIGINAL["src/wide.ts"]);
    });

    it("refuses a new name that is no identifier, and a place with nothing to rename", async () => {
      expect((await d.call("lsp_rename", { path: "src/math.ts", line: 1, symbol: "add", new_name: "a b" }, { approved: false })).result.code).toBe(
        "INVALID_PARAMS",
      );
      expect((await d.call("lsp_rename", { path: "src/main.ts", line: 3, symbol: "console", new_name: "c" }, { approved: false })).result.code).toBe(
        "NOT_FOUND",
      );
    });
  });

  it("answers lsp_diagnostics without path for every open file", async () => {
    const all = await d.ok("lsp_diagnostics", { wait_ms: WAIT_MS });
    const main = all.files.find((f: any) => f.path === "src/main.ts");
    expect(main).toMatchObject({ status: "current", hash: fileHash(Buffer.from(MAIN)), diagnostics: [expect.objectContaining({ code: 2322 })] });
    expect(all.files.map((f: any) => f.path)).toEqual(expect.arrayContaining(["src/main.ts", "src/math.ts", "src/other.ts"]));
    expect(all.files.every((f: any) => f.status === "current")).toBe(true);
  });

  it("runs no code of the workspace, and inside the sandbox (own PID and network namespaces) where it works", async () => {
    expect(ranMarkers(dir)).toEqual([]);
    const info = await lspInfo(d);
    const ts = info.servers.find((s) => s.language === "typescript")!;
    expect(ts).toMatchObject({ state: "ready", version: expect.stringContaining("typescript 5.9.3"), memory_bytes: expect.any(Number) });
    expect(ts.open).toContain("src/main.ts");
    if (info.sandbox.startsWith("on")) {
      const tree = processTree(ts.pid!);
      const server = tree[tree.length - 1]; // tsserver, the deepest
      for (const ns of ["pid", "net", "mnt"]) expect(readlinkSync(`/proc/${server}/ns/${ns}`)).not.toBe(readlinkSync(`/proc/self/ns/${ns}`));
    } else {
      expect(info.sandbox).toMatch(/^off: /);
    }
  });

  it("restarts a crashed server on the next call, which answers", async () => {
    const before = await serverOf(d, "typescript");
    const tree = processTree(before.pid!);
    process.kill(before.pid!, "SIGKILL");
    // Sandboxed, the pid is bwrap's: the server inside dies a moment later and could still answer a call sent at once.
    await until(() => tree.every((p) => !isAlive(p)), "the killed server's processes to end", 10_000);
    const hover = await d.ok("lsp_hover", { path: "src/main.ts", line: 2, symbol: "sum" });
    expect(hover.hover).toContain("sum(a: number, b: number): number");
    const after = await serverOf(d, "typescript");
    expect(after).toMatchObject({ state: "ready", restarts: 1 });
    expect(after.pid).not.toBe(before.pid);
    expect(codesOf(await diagnostics(d, "src/main.ts"), fileHash(Buffer.from(MAIN)))).toEqual([2322]);
  });

  it("leaves no server process running once the daemon has exited", async () => {
    const { pid } = await serverOf(d, "typescript");
    const tree = processTree(pid!);
    expect(tree.length).toBeGreaterThanOrEqual(2);
    await d.close();
    await until(() => tree.every((p) => !isAlive(p)), "every language server process to end", 2_000);
  });
});
