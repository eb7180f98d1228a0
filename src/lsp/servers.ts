/**
 * What each language server is and how it starts, so that a read-only LSP call runs no code the workspace controls
 * (SPEC 10). Both servers are the project's own dependencies, run with the daemon's own node.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

export type Language = "typescript" | "python";
export const LANGUAGES: readonly Language[] = ["typescript", "python"];

/** SPEC 10's extensions, with the languageId the server expects in didOpen. */
const EXTENSIONS: Record<string, { language: Language; languageId: string }> = {
  ".ts": { language: "typescript", languageId: "typescript" },
  ".mts": { language: "typescript", languageId: "typescript" },
  ".cts": { language: "typescript", languageId: "typescript" },
  ".tsx": { language: "typescript", languageId: "typescriptreact" },
  ".js": { language: "typescript", languageId: "javascript" },
  ".mjs": { language: "typescript", languageId: "javascript" },
  ".cjs": { language: "typescript", languageId: "javascript" },
  ".jsx": { language: "typescript", languageId: "javascriptreact" },
  ".py": { language: "python", languageId: "python" },
  ".pyi": { language: "python", languageId: "python" },
};

export function languageOf(file: string): { language: Language; languageId: string } | undefined {
  return EXTENSIONS[path.extname(file).toLowerCase()];
}

/**
 * How to know the diagnostics of an exact version:
 * - `tsserver`: ask tsserver itself through typescript-language-server's `typescript.tsserverRequest` command
 *   (`syntacticDiagnosticsSync`, `semanticDiagnosticsSync`, `suggestionDiagnosticsSync`). tsls's own push can never be
 *   final: it carries no version, is published per phase (syntax, semantic, suggestion) 50 ms debounced, and a phase that
 *   stays empty publishes nothing, so a clean file edited into another clean file publishes nothing at all.
 * - `pull`: LSP 3.17 `textDocument/diagnostic` (pyright, which stops pushing once the client can pull).
 * - `push`: `textDocument/publishDiagnostics` carrying the document's version; one without a version is never final.
 */
export type DiagnosticsSource = "tsserver" | "pull" | "push";

export interface ServerSpec {
  language: Language;
  /** For `info` and failure messages. */
  name: string;
  /** The packages' own versions; a server that sends `serverInfo` in its initialize answer adds its own. */
  version: string;
  command: string;
  args: string[];
  /** Options the server reads from `initialize`. */
  initializationOptions: unknown;
  /** `workspace/configuration` answers, by section ("python", "python.analysis", …); an unknown section answers null. */
  settings: Record<string, unknown>;
  diagnostics: DiagnosticsSource;
  /**
   * A log line saying the server has listed the workspace's files: until then its cross-file answers (references,
   * rename, implementations, workspace symbols) cover only the open files and their imports, so those wait for it.
   * None: the server lists them before its first answer (tsserver loads the tsconfig project on the first open).
   */
  indexedLog?: RegExp;
  /** Files of other languages whose changes the server hears of (its configuration); tsserver watches its own. */
  configFiles: readonly string[];
  /** Variables removed from the environment the daemon gives the server (see serverEnv). */
  dropEnv: readonly string[];
}

/** Spec-wide: node reads these before any of our code runs (`--require` a workspace file). */
const NODE_ENV_VARS = ["NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE"];
/** Python ones name an interpreter, a startup file or import paths: pyright runs `python3` to learn its search paths. */
const PYTHON_ENV_VARS = [
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONSTARTUP",
  "PYTHONUSERBASE",
  "PYTHONEXECUTABLE",
  "PYTHONSAFEPATH",
  "PYTHONPLATLIBDIR",
  "PYTHONINSPECT",
  "VIRTUAL_ENV",
  "CONDA_PREFIX",
  "CONDA_DEFAULT_ENV",
  "CONDA_PYTHON_EXE",
];

const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`));
}

function packageVersion(dir: string): string {
  return (JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string }).version;
}

/**
 * typescript-language-server from our node_modules, with tsserver from our own `typescript`: without `tsserver.path`
 * tsls prefers the workspace's `node_modules/typescript`, workspace code. `useSyntaxServer: "never"` keeps one full
 * server: the syntax server that answers while the project loads gives wrong hovers, definitions and reference counts.
 * `plugins: []` passes no `--globalPlugins`, and tsls never passes `--allowLocalPluginLoads`, so a tsconfig's `plugins`
 * can only name packages in our own node_modules (tsserver resolves them from its own install, never the workspace).
 * Automatic type acquisition would run npm: off.
 */
export function typescriptSpec(): ServerSpec {
  const tsls = packageDir("typescript-language-server");
  const ts = packageDir("typescript");
  return {
    language: "typescript",
    name: "typescript-language-server",
    version: `typescript-language-server ${packageVersion(tsls)}, typescript ${packageVersion(ts)}`,
    command: process.execPath,
    // --log-level 2: warnings and errors only; tsls logs every request at the default level.
    args: [path.join(tsls, "lib", "cli.mjs"), "--stdio", "--log-level", "2"],
    initializationOptions: {
      tsserver: { path: path.join(ts, "lib", "tsserver.js"), useSyntaxServer: "never", logVerbosity: "off" },
      plugins: [],
      disableAutomaticTypingAcquisition: true,
      // Else a rename at `import { add }` is local: tsls answers `add as plus` and leaves the declaration alone.
      preferences: { providePrefixAndSuffixTextForRename: false, includeCompletionsForModuleExports: false },
      hostInfo: "tool-layer",
    },
    settings: {},
    diagnostics: "tsserver",
    configFiles: [],
    dropEnv: NODE_ENV_VARS,
  };
}

/**
 * pyright-langserver from our node_modules. Nothing names an interpreter (no `python.pythonPath`, no `venvPath`): pyright
 * then runs `python3` (or `python`) from PATH, once with `-I` for the version and twice without it, in the workspace
 * root, for the search paths. serverEnv drops PATH entries inside the workspace and the variables that pick an
 * interpreter or inject code, so that is the user's interpreter, never one the workspace put there. A pyrightconfig's
 * `venvPath`/`venv` are only read as folders (site-packages and its .pth files as text), never run.
 */
export function pythonSpec(): ServerSpec {
  const dir = packageDir("pyright");
  // Information, not less: the only sign that pyright has listed the workspace is its "Found N source files" log line.
  const analysis = { logLevel: "Information", diagnosticMode: "openFilesOnly", autoSearchPaths: true, useLibraryCodeForTypes: true };
  return {
    language: "python",
    name: "pyright-langserver",
    version: `pyright ${packageVersion(dir)}`,
    command: process.execPath,
    args: [path.join(dir, "langserver.index.js"), "--stdio"],
    initializationOptions: {},
    settings: { python: { analysis }, "python.analysis": analysis, pyright: {} },
    diagnostics: "pull",
    // pyright 1.1.414's sourceEnumerator.ts, after the first listing (250 ms after the last open or change).
    indexedLog: /^(Found \d+ source files?|No source files found\.)$/,
    configFiles: ["pyrightconfig.json", "pyproject.toml"],
    dropEnv: [...NODE_ENV_VARS, ...PYTHON_ENV_VARS],
  };
}

/** The spec of a language, or why it cannot start (its package is not installed). */
export function serverSpec(language: Language): ServerSpec | { missing: string } {
  try {
    return language === "typescript" ? typescriptSpec() : pythonSpec();
  } catch (e) {
    return { missing: (e as Error).message.split("\n")[0] };
  }
}

/** A PATH entry the workspace controls: relative (resolved against the server's cwd, the root) or inside the root. */
function isWorkspacePath(entry: string, root: string): boolean {
  if (entry === "" || !path.isAbsolute(entry)) return true;
  const rel = path.relative(root, path.resolve(entry));
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** The environment a server runs with: the daemon's (or the supervisor's) base, less what would let the workspace run code. */
export function serverEnv(spec: ServerSpec, base: NodeJS.ProcessEnv, root: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const name of spec.dropEnv) delete env[name];
  const rootReal = path.resolve(root);
  env.PATH = (base.PATH ?? "")
    .split(path.delimiter)
    .filter((entry) => !isWorkspacePath(entry, rootReal))
    .join(path.delimiter);
  return env;
}
