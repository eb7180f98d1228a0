/**
 * The architecture as rules over src/'s imports (docs/architecture.md): no import cycle (static, dynamic and type-only
 * imports all count), no import up the layer order, `child_process` in the supervisor only, and no module-level mutable
 * state. Imports are read with the TypeScript compiler's parser, not with regular expressions.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(import.meta.dirname, "../src");

/**
 * The layers, top to bottom: an import goes down the list or stays inside its own entry. A file belongs to the first
 * entry whose prefix it starts with, so a file named here (dispatch/tool.ts) wins over its folder (dispatch/).
 */
const LAYERS: readonly (readonly string[])[] = [
  // the Gateway's side: tool-layer/client spawns the daemon and knows it by its protocol's types only
  ["client/"],
  // entry: the composition root, the CLI, the tools.json generator's module
  ["main.ts", "daemon.ts", "manifest.ts"],
  ["protocol/"],
  ["dispatch/dispatcher.ts", "dispatch/registry.ts", "dispatch/preview.ts", "dispatch/error-text.ts", "dispatch/call-abort.ts"],
  ["tools/"],
  // the tool contract: what a tool is and what it is handed (ToolDef, ToolContext, Services)
  ["dispatch/tool.ts", "dispatch/services.ts"],
  // domains, top to bottom: each reaches the ones below it through the narrow port it declares
  ["workspace.ts"],
  ["web/"],
  ["mcp/"],
  ["lsp/"],
  ["terminal/"],
  ["search/"],
  ["git/"],
  ["vfs/"],
  ["fs/"],
  ["platform/", "paths.ts"],
  ["core/", "errors.ts"],
];

/** The one module that may import node:child_process: every child the daemon starts goes through the supervisor. */
const CHILD_PROCESS_OWNER = "platform/supervisor.ts";
/** The client runs in the Gateway, not in the daemon: the child it starts is the daemon itself. */
const DAEMON_SPAWNER = "client/index.ts";

/**
 * Module-level values that are mutated but are not state: each names why. Keep this short; a cache or a registry of
 * per-root things belongs on the service that owns it.
 */
const MUTABLE_ALLOWED: Record<string, string> = {
  "main.ts: top-level let/var daemon": "the process's one daemon, for its signal and exit handlers",
};

interface Module {
  file: string;
  source: ts.SourceFile;
  /** Relative imports resolved to src/-relative .ts paths, with the kind of each. */
  imports: { to: string; kind: "static" | "type" | "dynamic" | "re-export" }[];
  /** Bare module specifiers (node:…, packages). */
  external: string[];
}

function listSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
    .map((e) => path.relative(SRC, path.join(e.parentPath, e.name)))
    .sort();
}

function readModule(file: string): Module {
  const source = ts.createSourceFile(file, readFileSync(path.join(SRC, file), "utf8"), ts.ScriptTarget.Latest, true);
  const imports: Module["imports"] = [];
  const external: string[] = [];
  const add = (spec: string, kind: Module["imports"][number]["kind"]) => {
    if (!spec.startsWith(".")) return void external.push(spec);
    imports.push({ to: path.normalize(path.join(path.dirname(file), spec)).replace(/\.js$/, ".ts"), kind });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.importClause?.isTypeOnly ? "type" : "static");
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, "re-export");
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) add(arg.text, "dynamic");
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, "type"); // `import("./x.js").T` in a type position
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { file, source, imports, external };
}

function layerOf(file: string): number {
  const i = LAYERS.findIndex((entries) => entries.some((prefix) => file === prefix || (prefix.endsWith("/") && file.startsWith(prefix))));
  // A file whose layer is named nowhere fails the layer test, not this lookup.
  return i;
}

/** Strongly connected components of more than one module (or a module importing itself): Tarjan's algorithm. */
function cycles(modules: Map<string, Module>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const { to: w } of modules.get(v)!.imports) {
      if (!modules.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || modules.get(v)!.imports.some((i) => i.to === v)) found.push(component.sort());
  };
  for (const v of modules.keys()) if (!index.has(v)) connect(v);
  return found;
}

const MUTATORS = new Set(["set", "add", "push", "delete", "clear", "splice", "pop", "shift", "unshift", "sort", "reverse", "fill"]);
const MUTABLE_INITS = /^(new (Map|Set|WeakMap|WeakSet|Array)\b|\[|\{)/;

/**
 * Module-level mutable state, by a heuristic: a top-level `let`/`var`, or a top-level `const` made as a collection or a
 * literal (`new Map`, `[]`, `{}`) that the module mutates (a mutating method called on it, or a property assigned).
 */
function mutableState(m: Module): string[] {
  return mutableStateUnfiltered(m).filter((f) => !Object.hasOwn(MUTABLE_ALLOWED, f));
}

function mutableStateUnfiltered(m: Module): string[] {
  const found: string[] = [];
  const candidates = new Set<string>();
  for (const statement of m.source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const flags = statement.declarationList.flags;
    for (const d of statement.declarationList.declarations) {
      if (!ts.isIdentifier(d.name)) continue;
      if (!(flags & (ts.NodeFlags.Const | ts.NodeFlags.Using))) found.push(`${m.file}: top-level let/var ${d.name.text}`);
      else if (d.initializer && MUTABLE_INITS.test(d.initializer.getText(m.source))) candidates.add(d.name.text);
    }
  }
  const mutated = new Set<string>();
  const visit = (node: ts.Node) => {
    // x.set(…), x.push(…)
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && ts.isIdentifier(node.expression.expression)) {
      const target = node.expression.expression.text;
      if (candidates.has(target) && MUTATORS.has(node.expression.name.text)) mutated.add(target);
    }
    // x.y = …, x[k] = …, x.y++
    if (ts.isBinaryExpression(node) && node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && node.operatorToken.kind <= ts.SyntaxKind.LastAssignment) {
      const left = node.left;
      if (
        (ts.isPropertyAccessExpression(left) || ts.isElementAccessExpression(left)) &&
        ts.isIdentifier(left.expression) &&
        candidates.has(left.expression.text)
      )
        mutated.add(left.expression.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(m.source);
  for (const name of mutated) found.push(`${m.file}: top-level ${name} is mutated`);
  return found;
}

const modules = new Map(listSources(SRC).map((f) => [f, readModule(f)]));

describe("the architecture of src/ (docs/architecture.md)", () => {
  it("has every module in a layer", () => {
    expect([...modules.keys()].filter((f) => layerOf(f) < 0)).toEqual([]);
  });

  it("has no import cycle, static, dynamic or type-only", () => {
    expect(cycles(modules).map((c) => c.join(" -> "))).toEqual([]);
  });

  it("imports only down the layer order, or inside its own layer", () => {
    const upward: string[] = [];
    for (const m of modules.values()) {
      for (const i of m.imports) {
        if (!modules.has(i.to)) continue;
        if (layerOf(i.to) < layerOf(m.file)) upward.push(`${m.file} -> ${i.to} (${i.kind})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it(`imports node:child_process in ${CHILD_PROCESS_OWNER} only`, () => {
    const users = [...modules.values()].filter((m) => m.external.some((s) => s === "node:child_process" || s === "child_process")).map((m) => m.file);
    expect(users.filter((f) => f !== CHILD_PROCESS_OWNER && f !== DAEMON_SPAWNER)).toEqual([]);
  });

  it("keeps no mutable state at module level", () => {
    expect([...modules.values()].flatMap(mutableState)).toEqual([]);
  });

  it("allows only module state that is still there", () => {
    const all = new Set([...modules.values()].flatMap((m) => mutableStateUnfiltered(m)));
    expect(Object.keys(MUTABLE_ALLOWED).filter((k) => !all.has(k))).toEqual([]);
  });

  it("reads every kind of import (the checker checks itself)", () => {
    const kinds = new Set([...modules.values()].flatMap((m) => m.imports.map((i) => i.kind)));
    expect([...kinds].sort()).toEqual(["dynamic", "re-export", "static", "type"]);
  });
});
