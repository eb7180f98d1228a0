import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { languageOf, pythonSpec, serverEnv, typescriptSpec } from "../../src/lsp/servers.js";

const require = createRequire(import.meta.url);

describe("server specs", () => {
  it("maps SPEC 10's extensions to their server and languageId", () => {
    const ids = Object.fromEntries([".ts", ".tsx", ".js", ".jsx", ".mts", ".cts", ".py", ".pyi", ".PY"].map((e) => [e, languageOf(`a${e}`)]));
    expect(ids).toEqual({
      ".ts": { language: "typescript", languageId: "typescript" },
      ".tsx": { language: "typescript", languageId: "typescriptreact" },
      ".js": { language: "typescript", languageId: "javascript" },
      ".jsx": { language: "typescript", languageId: "javascriptreact" },
      ".mts": { language: "typescript", languageId: "typescript" },
      ".cts": { language: "typescript", languageId: "typescript" },
      ".py": { language: "python", languageId: "python" },
      ".pyi": { language: "python", languageId: "python" },
      ".PY": { language: "python", languageId: "python" },
    });
    expect(languageOf("README.md")).toBeUndefined();
  });

  it("runs typescript-language-server with our node and our own typescript, one server, no plugins, no type acquisition", () => {
    const spec = typescriptSpec();
    expect(spec.command).toBe(process.execPath);
    expect(spec.args[0]).toBe(path.join(path.dirname(require.resolve("typescript-language-server/package.json")), "lib", "cli.mjs"));
    expect(spec.initializationOptions).toMatchObject({
      tsserver: { path: path.join(path.dirname(require.resolve("typescript/package.json")), "lib", "tsserver.js"), useSyntaxServer: "never" },
      plugins: [],
      disableAutomaticTypingAcquisition: true,
      preferences: { providePrefixAndSuffixTextForRename: false },
    });
    expect(spec.version).toBe("typescript-language-server 5.3.0, typescript 5.9.3");
  });

  it("runs pyright-langserver with our node and names no interpreter", () => {
    const spec = pythonSpec();
    expect(spec.command).toBe(process.execPath);
    expect(spec.args).toEqual([path.join(path.dirname(require.resolve("pyright/package.json")), "langserver.index.js"), "--stdio"]);
    expect(JSON.stringify(spec.settings)).not.toMatch(/pythonPath|venvPath|defaultInterpreterPath/);
    expect(spec.version).toBe("pyright 1.1.414");
  });
});

describe("serverEnv", () => {
  const root = "/work/ws";
  const base = {
    PATH: ["/work/ws/.venv/bin", "/usr/local/bin", "bin", "", ".", "/work/ws", "/work/ws-other/bin", "/usr/bin"].join(":"),
    NODE_OPTIONS: "--require /work/ws/evil.js",
    PYTHONPATH: "/work/ws",
    VIRTUAL_ENV: "/work/ws/.venv",
    HOME: "/home/u",
  };

  it("drops PATH entries the workspace controls (inside the root, relative, empty), keeping a sibling sharing its prefix", () => {
    expect(serverEnv(pythonSpec(), base, root).PATH).toBe("/usr/local/bin:/work/ws-other/bin:/usr/bin");
  });

  it("drops what injects code or picks an interpreter, keeps the rest", () => {
    const py = serverEnv(pythonSpec(), base, root);
    expect(py).toMatchObject({ HOME: "/home/u" });
    for (const name of ["NODE_OPTIONS", "PYTHONPATH", "VIRTUAL_ENV"]) expect(py[name], name).toBeUndefined();
    const ts = serverEnv(typescriptSpec(), base, root);
    expect(ts.NODE_OPTIONS).toBeUndefined();
    expect(base.NODE_OPTIONS).toBe("--require /work/ws/evil.js"); // the base is not changed
  });
});
