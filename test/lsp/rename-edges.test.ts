/** lsp_rename on typescript-language-server, through the real daemon: who a rename's changes are, and code it cannot edit. */
import { appendFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash } from "../../src/core/hash.js";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { disk } from "./daemon-lsp.js";
import { SLOW_TEST, WAIT_MS } from "./projects.js";

const MATH = "export function add(a: number, b: number): number {\n  return a + b;\n}\n";
const MAIN = 'import { add } from "./math.js";\nexport const total = add(1, 2);\n';
const USES_FOO = 'import { foo } from "./b.js";\nexport const x = foo();\n';
const DECLARES_FOO = "export function foo(): number {\n  return 1;\n}\n";

const project = tmpWorkspace({
  files: {
    "tsconfig.json": JSON.stringify({
      compilerOptions: { strict: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", noEmit: true },
      include: ["src"],
    }),
    "src/math.ts": MATH,
    "src/main.ts": MAIN,
    "src/a.ts": USES_FOO,
  },
});
const dir = project.dir;
/** Beside the root, in /tmp like it: a sandboxed server's private /tmp hides it, so a link to it dangles in there. */
const outside = mkdtempSync(path.join(tmpdir(), "tool-layer-outside-"));
let d: DaemonClient;
daemonForSuite(project, (c) => (d = c));
beforeAll(initHash);
afterAll(() => rmSync(outside, { recursive: true, force: true }));

const hashOf = (text: string) => fileHash(Buffer.from(text));

interface Change {
  path: string;
  hash: string | null;
  origin: string;
  by: string | null;
  tool: string | null;
}
const changesOf = (line: { event?: string; data?: { changes?: Change[] } }): Change[] => (line.event === "fs.changed" && line.data?.changes) || [];

describe("lsp_rename", SLOW_TEST, () => {
  it("an outside append to a renamed file made on its answer is external, not the rename's", async () => {
    const renamed = MATH.replace("add", "plus");
    const appended = `${renamed}// appended by an editor\n`;
    const answer = await d.call("lsp_rename", { path: "src/math.ts", line: 1, symbol: "add", new_name: "plus" }).then((r) => {
      appendFileSync(path.join(dir, "src/math.ts"), "// appended by an editor\n"); // at once, within the watcher's window
      return r;
    });
    expect(answer.result).toMatchObject({ count: 3, files: [{ path: "src/main.ts" }, { path: "src/math.ts", hash: hashOf(renamed) }] });
    const isAppended = (c: Change) => c.path === "src/math.ts" && c.hash === hashOf(appended);
    const line = await d.waitFor((l) => changesOf(l).some(isAppended), WAIT_MS);
    expect(changesOf(line).find(isAppended)).toMatchObject({ origin: "external", by: null, tool: null });
    // The rename's own write of the other file is still its own.
    const main = MAIN.replaceAll("add", "plus");
    await d.waitFor(
      (l) => changesOf(l).some((c) => c.path === "src/main.ts" && c.hash === hashOf(main) && c.origin === "tool" && c.tool === "lsp_rename"),
      WAIT_MS,
    );
  });

  it("refuses a rename whose symbol is declared through a link out of the root, naming the link; nothing changes", async () => {
    writeFileSync(path.join(outside, "decl.ts"), DECLARES_FOO);
    symlinkSync(path.join(outside, "decl.ts"), path.join(dir, "src/b.ts"));
    const params = { path: "src/a.ts", line: 2, symbol: "foo", new_name: "bar" };
    for (const approved of [false, true]) {
      const r = await d.call("lsp_rename", params, { approved });
      expect(r.result, `approved ${approved}`).toMatchObject({ code: "PATH_OUTSIDE_ROOT", path: "src/b.ts" });
      expect(r.result.message).toContain("src/b.ts");
      expect(disk(dir, "src/a.ts")).toBe(USES_FOO);
      expect(disk(outside, "decl.ts")).toBe(DECLARES_FOO);
    }
  });
});
