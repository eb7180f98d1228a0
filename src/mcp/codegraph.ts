import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { DEFAULT_TOOL_TIMEOUT_MS, type StdioServerConfig } from "./config.js";

/**
 * CodeGraph (`@colbymchenry/codegraph` 1.6, an optional dependency) run as it is (SPEC 12): its own MCP server
 * (`serve --mcp`) as a built-in passthrough server, and its own incremental `sync` run by the daemon after files change.
 * What was found reading its package:
 *
 * - Binary. The package's bin is a Node shim that runs a per-platform package
 *   (`@colbymchenry/codegraph-linux-x64`, …: a bundled Node 24 and the app, about 285 MB) with spawnSync, and downloads
 *   that bundle from GitHub when the registry did not install it. We resolve the platform package's own launcher
 *   (`bin/codegraph`, a sh script that execs the bundled node): one process fewer between the daemon and the server,
 *   nothing downloaded, and "installed" means that launcher is there.
 * - Index. `codegraph init --yes ROOT` creates `ROOT/.codegraph/` (a `.gitignore` of `*` inside it, `codegraph.db`, and
 *   at run time its WAL, `writer.pid` and the like) and indexes. With its watcher off (`CODEGRAPH_NO_WATCH=1`) init also
 *   installs post-commit/post-merge/post-checkout hooks in `.git/hooks` that run `codegraph sync` in the background;
 *   so init runs with `CODEGRAPH_FORCE_WATCH=1` instead (init starts no watcher; the flag only says none is missing),
 *   and leaves `.git/hooks` alone. `codegraph index ROOT` rebuilds from scratch and needs an initialized root.
 * - Freshness. `codegraph sync --quiet ROOT` is its incremental sync (changed, added and removed files since the last
 *   index); it works while `serve --mcp` runs on the same root, whose next answer shows the change. About 2.5 s for a
 *   tiny repository here, most of it the bundled Node starting.
 * - Server. `serve --mcp --path ROOT` with `CODEGRAPH_NO_DAEMON=1` serves in-process (otherwise it starts a detached
 *   daemon that lives on for minutes). Its watcher is off with `CODEGRAPH_NO_WATCH=1`. The launcher passes its parent's
 *   pid (`CODEGRAPH_HOST_PPID`, the daemon) to the server's watchdog, which exits when that process is gone.
 * - Tools. By default it lists only `codegraph_explore`; `CODEGRAPH_MCP_TOOLS` names the ones to list, so all eight are
 *   named. On a repository under 500 indexed files it still lists only search, node and explore (its own "tiny repo"
 *   rule; the others answer when called). All eight are queries, annotated `readOnlyHint: true`.
 * - Telemetry and network. On by default (anonymous usage to its endpoint); `DO_NOT_TRACK=1` turns off telemetry and
 *   the update check, `CODEGRAPH_TELEMETRY=0` and `CODEGRAPH_NO_UPDATE_CHECK=1` are set as well, and
 *   `CODEGRAPH_NO_DOWNLOAD=1` forbids the shim's download should anything run it.
 * - Home. It keeps `~/.codegraph/` (telemetry config, update-check cache, the daemon registry) through `os.homedir()`,
 *   so only HOME moves it: HOME is pointed into the daemon's state folder. Git, which CodeGraph runs to list files
 *   (`ls-files --exclude-standard`), keeps the user's global configuration and excludes through GIT_CONFIG_GLOBAL and
 *   XDG_CONFIG_HOME. With the settings above nothing was written there in our runs.
 */

export const CODEGRAPH_SERVER_NAME = "codegraph";
/** Its folder in the repository: out of git, search and events. */
export const CODEGRAPH_DIR = ".codegraph";
/** Every tool it defines (1.6.1); all are read-only queries. */
export const CODEGRAPH_TOOLS = [
  "codegraph_search",
  "codegraph_callers",
  "codegraph_callees",
  "codegraph_impact",
  "codegraph_node",
  "codegraph_explore",
  "codegraph_status",
  "codegraph_files",
] as const;

export interface CodegraphInstall {
  /** The platform package's launcher, run directly. */
  bin: string;
  version: string;
}

export interface ProcessSpec {
  argv: string[];
  /** Put over the spawner's base environment, as a server entry's `env` is. */
  env: Record<string, string>;
  cwd: string;
}

const requireHere = createRequire(import.meta.url);

/** The installed CodeGraph, or null (left out with `--omit=optional`, or no bundle for this platform). */
export function codegraphInstalled(): CodegraphInstall | null {
  try {
    const main = requireHere.resolve("@colbymchenry/codegraph/package.json");
    const fromMain = createRequire(main);
    const platformPkg = fromMain.resolve(`@colbymchenry/codegraph-${process.platform}-${process.arch}/package.json`);
    const bin = path.join(path.dirname(platformPkg), "bin", "codegraph");
    accessSync(bin, constants.X_OK);
    const version = (JSON.parse(readFileSync(platformPkg, "utf8")) as { version: string }).version;
    return { bin, version };
  } catch {
    return null;
  }
}

/** Whether the root has an index (`init` ran). */
export function codegraphIndexed(root: string): boolean {
  return existsSync(path.join(root, CODEGRAPH_DIR, "codegraph.db"));
}

/** The variables every CodeGraph process gets from the daemon (see the notes at the top). */
export function codegraphEnv(stateDir: string, env: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  const realHome = env.HOME || os.homedir();
  return {
    HOME: path.join(stateDir, "codegraph-home"),
    GIT_CONFIG_GLOBAL: env.GIT_CONFIG_GLOBAL || path.join(realHome, ".gitconfig"),
    XDG_CONFIG_HOME: env.XDG_CONFIG_HOME || path.join(realHome, ".config"),
    DO_NOT_TRACK: "1",
    CODEGRAPH_TELEMETRY: "0",
    CODEGRAPH_NO_UPDATE_CHECK: "1",
    CODEGRAPH_NO_DOWNLOAD: "1",
    CODEGRAPH_NO_DAEMON: "1",
    CODEGRAPH_NO_WATCH: "1",
    CODEGRAPH_MCP_TOOLS: CODEGRAPH_TOOLS.map((t) => t.replace(/^codegraph_/, "")).join(","),
    NO_COLOR: "1",
  };
}

/** The built-in server entry for `root`, like one `.mcp.json` gives; null when CodeGraph is not installed. */
export function codegraphServerEntry(root: string, stateDir: string, env = process.env): StdioServerConfig | null {
  const cg = codegraphInstalled();
  if (!cg) return null;
  const args = ["serve", "--mcp", "--path", root];
  return {
    name: CODEGRAPH_SERVER_NAME,
    source: "builtin",
    file: null,
    digest: `builtin:codegraph@${cg.version}`,
    timeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
    transport: "stdio",
    command: cg.bin,
    args,
    env: codegraphEnv(stateDir, env),
    cwd: root,
    // Shown as its command line: its variables are the daemon's own settings (codegraphEnv), no secret and no choice.
    written: { command: cg.bin, args, env: {}, cwd: null },
    expanded: [],
  };
}

/** First index of a root: `init --yes`, without the git hooks (see the notes at the top). */
export function initCommand(root: string, stateDir: string, env = process.env): ProcessSpec | null {
  const cg = codegraphInstalled();
  if (!cg) return null;
  const { CODEGRAPH_NO_WATCH: _off, ...rest } = codegraphEnv(stateDir, env);
  return { argv: [cg.bin, "init", "--yes", root], env: { ...rest, CODEGRAPH_FORCE_WATCH: "1" }, cwd: root };
}

/** CodeGraph's own incremental sync of an indexed root, for the daemon to run (debounced) after files change. */
export function syncCommand(root: string, stateDir: string, env = process.env): ProcessSpec | null {
  const cg = codegraphInstalled();
  if (!cg) return null;
  return { argv: [cg.bin, "sync", "--quiet", root], env: codegraphEnv(stateDir, env), cwd: root };
}
