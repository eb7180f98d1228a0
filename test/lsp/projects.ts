import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileHash } from "../../src/core/hash.js";
import { decodeText } from "../../src/core/text.js";
import type { DocRef, LspClient } from "../../src/lsp/client.js";
import { tmpWorkspace } from "../helpers/tmp.js";

/**
 * A diagnostics wait for tests: a cold project on a loaded 2-core machine (a CPU hog beside this suite) took over 10 s to
 * check, and a test is about which answer comes, never how soon.
 */
export const WAIT_MS = 60_000;
/** Per test, for the same reason: starting and checking a cold project twice under load. */
export const SLOW_TEST = { timeout: 180_000 };

/** A small TypeScript project with one type error (main.ts line 2), and traps: a workspace typescript and a tsconfig plugin. */
export function typescriptProject() {
  return tmpWorkspace({
    files: {
      "tsconfig.json": JSON.stringify({
        compilerOptions: { strict: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", noEmit: true, plugins: [{ name: "evil-plugin" }] },
        include: ["src"],
      }),
      "src/math.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
      "src/main.ts": 'import { add as sum } from "./math.js";\nconst x: string = sum(1, 2);\nconsole.log(x, sum(3, 4));\n',
      "src/other.ts": 'import { add } from "./math.js";\nexport const total = add(add(1, 2), 3);\n',
      "src/wide.ts": 'import { add } from "./math.js";\nconst face = "😀😀"; export const naïve = add(face.length, 2);\n',
      "src/shape.ts": "export interface Shape {\n  area(): number;\n}\nexport class Square implements Shape {\n  area(): number {\n    return 4;\n  }\n}\n",
      // Code the workspace controls, which no language server may run: it leaves a marker if it ever does.
      "node_modules/typescript/package.json": JSON.stringify({ name: "typescript", version: "5.9.9", main: "lib/typescript.js" }),
      "node_modules/typescript/lib/tsserver.js": marker("workspace-tsserver"),
      "node_modules/typescript/lib/typescript.js": marker("workspace-typescript"),
      "node_modules/evil-plugin/package.json": JSON.stringify({ name: "evil-plugin", version: "1.0.0", main: "index.js" }),
      "node_modules/evil-plugin/index.js": marker("workspace-plugin"),
    },
  });
}

/** A small Python project with one type error (main.py line 2). */
export function pythonProject() {
  return tmpWorkspace({
    files: {
      "util.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
      "main.py": "from util import add\nx: str = add(1, 2)\nprint(x)\n",
      "other.py": "from util import add\n\ntotal = add(add(1, 2), 3)\n",
      "wide.py": 'from util import add\nface = "😀😀"; naïve = add(len(face), 2)\n',
    },
  });
}

export function marker(name: string): string {
  return `require("fs").writeFileSync(require("path").join(__dirname, ${JSON.stringify(`RAN-${name}`)}), "ran");\n`;
}

export function docOf(dir: string, rel: string): DocRef {
  const bytes = readFileSync(path.join(dir, rel));
  return { path: rel, text: decodeText(bytes, rel).text, hash: fileHash(bytes) };
}

/** An edit as the daemon sees one: the file changes on disk and the bus hands the new content to the client. */
export function edit(client: LspClient, dir: string, rel: string, text: string | null): DocRef {
  if (text === null) {
    rmSync(path.join(dir, rel));
    client.sync(rel, null, null, "deleted");
    return { path: rel, text: "", hash: "" };
  }
  const created = !existsSync(path.join(dir, rel));
  writeFileSync(path.join(dir, rel), text);
  const doc = docOf(dir, rel);
  client.sync(rel, doc.text, doc.hash, created ? "created" : "modified");
  return doc;
}

/** Markers left by workspace code that ran (see marker). */
export function ranMarkers(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => path.basename(f).startsWith("RAN-"));
}
