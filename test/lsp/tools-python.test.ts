/** The lsp_* tools on pyright-langserver, through the real daemon: one daemon for the file. */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash, tagOf } from "../../src/core/hash.js";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { codesOf, diagnostics, diagnosticsEvent, diagnosticsEvents, disk, external, externalAtomic, mark, serverOf } from "./daemon-lsp.js";
import { pythonProject, SLOW_TEST } from "./projects.js";

const project = pythonProject();
const dir = project.dir;
let d: DaemonClient;
daemonForSuite(project, (c) => (d = c));
beforeAll(initHash);

const MAIN = "from util import add\nx: str = add(1, 2)\nprint(x)\n";

describe("lsp tools on python", SLOW_TEST, () => {
  it("answers hover and definition on a cold server", async () => {
    const [hover, definition] = await Promise.all([
      d.ok("lsp_hover", { path: "main.py", line: 2, symbol: "add" }),
      d.ok("lsp_definition", { path: "main.py", line: 2, symbol: "add" }),
    ]);
    expect(hover.hover).toContain("def add(");
    expect(definition.places).toEqual([{ path: "util.py", line: 1, tag: tagOf("def add(a: int, b: int) -> int:"), column: 5, end_line: 1, end_column: 8 }]);
  });

  it("reports the type error of the current content, then an external fix as fixed, never the old error", async () => {
    const answer = await diagnostics(d, "main.py");
    expect(answer.diagnostics.map((x: any) => [x.line, x.tag, x.column, x.severity, x.code, x.source])).toEqual([
      [2, tagOf("x: str = add(1, 2)"), 10, "error", "reportAssignmentType", "Pyright"],
    ]);
    const fixed = external(dir, "main.py", MAIN.replace("x: str", "x: int"));
    expect(await diagnostics(d, "main.py")).toMatchObject({ status: "current", hash: fixed, diagnostics: [] });
    const broken = external(dir, "main.py", MAIN);
    expect(codesOf(await diagnostics(d, "main.py"), broken)).toEqual(["reportAssignmentType"]);
  });

  it("does not answer a second edit, made while the first is checked, with the first's diagnostics", async () => {
    const firstText = MAIN.replace("x: str", "x: bytes");
    const secondText = MAIN.replace("x: str = add(1, 2)", 'x: int = add(1, "2")');
    const codes: Record<string, string[]> = {
      [fileHash(Buffer.from(firstText))]: ["reportAssignmentType"],
      [fileHash(Buffer.from(secondText))]: ["reportArgumentType"],
    };
    external(dir, "main.py", firstText);
    const checking = diagnostics(d, "main.py");
    const second = external(dir, "main.py", secondText);
    const answer = await diagnostics(d, "main.py");
    expect(codesOf(answer, second)).toEqual(["reportArgumentType"]);
    const first = await checking;
    // Named by version, so a failure says which one was answered (seen once under load: a version neither edit made).
    const named = (hash: string) => (hash === fileHash(Buffer.from(MAIN)) ? "the version before both edits" : hash);
    if (first.status === "current") expect([named(first.hash), first.diagnostics.map((x: any) => x.code)]).toEqual([named(first.hash), codes[first.hash]]);
    for (const e of diagnosticsEvents(d, "main.py")) if (codes[e.hash!]) expect(e.diagnostics.map((x) => x.code)).toEqual(codes[e.hash!]);
    external(dir, "main.py", MAIN);
  });

  it("pushes lsp.diagnostics after an edit, and none for an edit that leaves the list as it was", async () => {
    // Lists no earlier test had, so each must be pushed whatever was pushed before.
    const listed = MAIN.replace("x: str", "x: list[str]");
    let since = mark(d);
    const first = externalAtomic(dir, "main.py", listed);
    const event = await diagnosticsEvent(d, "main.py", first, since);
    expect(event.diagnostics.map((x: any) => x.message)).toEqual([expect.stringContaining('declared type "list[str]"')]);
    // A comment after the error: the same list (line, tag, column, message), so nothing is pushed for it.
    const same = externalAtomic(dir, "main.py", `${listed}# a comment\n`);
    expect(codesOf(await diagnostics(d, "main.py"), same)).toEqual(["reportAssignmentType"]);
    since = mark(d);
    const later = externalAtomic(dir, "main.py", MAIN.replace("x: str", "x: dict[str, int]"));
    expect((await diagnosticsEvent(d, "main.py", later, since)).diagnostics.map((x: any) => x.message)).toEqual([expect.stringContaining('"dict[str, int]"')]);
    expect(diagnosticsEvents(d, "main.py").filter((e) => e.hash === same)).toEqual([]);
    external(dir, "main.py", MAIN);
  });

  it("says pyright has no implementations", async () => {
    const r = await d.call("lsp_implementation", { path: "util.py", line: 1, symbol: "add" });
    expect(r.result).toMatchObject({ code: "LSP_UNAVAILABLE", message: expect.stringMatching(/lsp_references/) });
  });

  it("renames across files at the definition and at an import site, all files written", async () => {
    const names = ["main.py", "other.py", "util.py", "wide.py"];
    const before = Object.fromEntries(names.map((f) => [f, disk(dir, f)]));
    const preview = await d.ok("lsp_rename", { path: "util.py", line: 1, symbol: "add", new_name: "plus" }, { approved: false });
    expect(preview).toMatchObject({ count: 8, dry_run: true });
    expect(preview.files.map((f: any) => f.path)).toEqual(names);
    await d.ok("lsp_rename", { path: "util.py", line: 1, symbol: "add", new_name: "plus", preview_id: preview.preview_id });
    expect(disk(dir, "util.py")).toBe("def plus(a: int, b: int) -> int:\n    return a + b\n");
    expect(disk(dir, "other.py")).toBe("from util import plus\n\ntotal = plus(plus(1, 2), 3)\n");
    const back = await d.ok("lsp_rename", { path: "other.py", line: 1, symbol: "plus", new_name: "add" }, { approved: false });
    expect(back.count).toBe(8);
    await d.ok("lsp_rename", { path: "other.py", line: 1, symbol: "plus", new_name: "add", preview_id: back.preview_id });
    expect(Object.fromEntries(names.map((f) => [f, disk(dir, f)]))).toEqual(before);
  });

  it("keeps a file's BOM through a rename", async () => {
    const text = "def solo() -> int:\n    return 1\n\n\nprint(solo())\n";
    writeFileSync(path.join(dir, "bom.py"), `\ufeff${text}`);
    const done = await d.ok("lsp_rename", { path: "bom.py", line: 1, symbol: "solo", new_name: "alone" });
    const renamed = `\ufeff${text.replaceAll("solo", "alone")}`;
    expect(done).toMatchObject({ count: 2, files: [{ path: "bom.py", hash: fileHash(Buffer.from(renamed)) }] });
    expect(readFileSync(path.join(dir, "bom.py"), "utf8")).toBe(renamed);
    rmSync(path.join(dir, "bom.py"));
  });

  it("restarts a crashed server on the next call, which answers", async () => {
    const before = await serverOf(d, "python");
    process.kill(before.pid!, "SIGKILL");
    // A request the dying server took is asked again of the restarted one (a diagnostics call would answer unknown).
    expect((await d.ok("lsp_hover", { path: "main.py", line: 2, symbol: "add" })).hover).toContain("def add(");
    expect(codesOf(await diagnostics(d, "main.py"), fileHash(Buffer.from(MAIN)))).toEqual(["reportAssignmentType"]);
    expect(await serverOf(d, "python")).toMatchObject({ state: "ready", restarts: 1 });
  });
});
