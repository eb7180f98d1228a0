import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { checkNewName } from "../../src/lsp/identifiers.js";
import type { Language } from "../../src/lsp/servers.js";
import { check, runs } from "../property/runs.js";

/** Names at the edges: keywords of either language, soft keywords, `$`, digits, marks, ID vs XID, non-BMP letters. */
const NAMES = [
  "foo",
  "_x",
  "__init__",
  "_",
  "$x",
  "pop$ctx",
  "x1",
  "1x",
  "café",
  "naïve",
  "Ωmega",
  "𝑥",
  "ⅰ",
  "℘",
  "゛",
  "x·y",
  "١x",
  "x١",
  "x\u200dy",
  "a-b",
  "a b",
  "class",
  "def",
  "lambda",
  "nonlocal",
  "None",
  "True",
  "False",
  "match",
  "case",
  "type",
  "print",
  "await",
  "async",
  "yield",
  "let",
  "static",
  "interface",
  "implements",
  "package",
  "enum",
  "eval",
  "arguments",
  "undefined",
  "NaN",
  "of",
  "get",
  "from",
  "import",
  "export",
  "typeof",
  "is",
  "not",
  "with",
  "del",
  "pass",
  "raise",
  "global",
  "elif",
];

/** Python's own answer: `str.isidentifier()` and not `keyword.iskeyword()`. */
function pythonAccepts(names: readonly string[]): boolean[] {
  const script = "import json, keyword, sys\nprint(json.dumps([n.isidentifier() and not keyword.iskeyword(n) for n in json.load(sys.stdin)]))";
  return JSON.parse(execFileSync("python3", ["-c", script], { input: JSON.stringify(names), encoding: "utf8" })) as boolean[];
}

/**
 * V8's own answer: whether `export let NAME = 1;` parses as a module (strict mode, `await` reserved) with NAME one token
 * (the wrapper would take a name with spaces around it).
 */
function moduleAccepts(names: readonly string[]): boolean[] {
  const script = `const vm = require("node:vm");
const names = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(names.map((n) => { if (n.trim() !== n) return false; try { new vm.SourceTextModule("export let " + n + " = 1;"); return true; } catch { return false; } })));`;
  const out = execFileSync(process.execPath, ["--experimental-vm-modules", "--no-warnings", "-e", script], { input: JSON.stringify(names), encoding: "utf8" });
  return JSON.parse(out) as boolean[];
}

function accepted(language: Language, name: string): boolean {
  try {
    checkNewName(language, name);
    return true;
  } catch (e) {
    if (e instanceof ToolError && e.code === "INVALID_PARAMS") return false;
    throw e;
  }
}

describe("checkNewName: a rename's new name, by the rules of the file's language", () => {
  it("Python: accepts exactly what Python does (isidentifier, not a keyword)", () => {
    // ZWJ joined XID_Continue in Unicode 15.1 (Python 3.13): refused either way, as the Pythons before do.
    const names = NAMES.filter((n) => !n.includes("\u200d"));
    const oracle = pythonAccepts(names);
    expect(names.map((n) => [n, accepted("python", n)])).toEqual(names.map((n, i) => [n, oracle[i]]));
    expect(accepted("python", "x\u200dy")).toBe(false);
  });

  it("TypeScript/JavaScript: accepts exactly what a module accepts as a binding name (V8's parser)", () => {
    const oracle = moduleAccepts(NAMES);
    expect(NAMES.map((n) => [n, accepted("typescript", n)])).toEqual(NAMES.map((n, i) => [n, oracle[i]]));
  });

  it("says why in the message: a keyword, or not an identifier", () => {
    expect(() => checkNewName("python", "class")).toThrow(/"class" is a keyword of Python/);
    expect(() => checkNewName("python", "pop$ctx")).toThrow(/"pop\$ctx" is not a Python identifier .*no \$/);
    expect(() => checkNewName("typescript", "1x")).toThrow(/"1x" is not a TypeScript\/JavaScript identifier/);
  });

  it("agrees with Python and V8 on random names (seeded: a failure prints its seed)", async () => {
    // Pieces at the edges of both rules: ASCII, $, digits, marks, other scripts' letters and digits, ZWNJ, keywords.
    const piece = fc.constantFrom(..."aZ_$0 -·́é١Ω𝑥ⅰ゛‌".split(/(?:)/u), ...["class", "await", "let", "match", "None", "yield"]);
    const name = fc.array(piece, { minLength: 1, maxLength: 5 }).map((parts) => parts.join(""));
    await check(
      fc.property(fc.array(name, { minLength: 40, maxLength: 40 }), (names) => {
        const python = pythonAccepts(names);
        const v8 = moduleAccepts(names);
        expect(names.map((n) => [n, accepted("python", n)])).toEqual(names.map((n, i) => [n, python[i]]));
        expect(names.map((n) => [n, accepted("typescript", n)])).toEqual(names.map((n, i) => [n, v8[i]]));
      }),
      runs(5),
    );
  });
});
