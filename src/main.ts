#!/usr/bin/env node
import { accessSync, constants, existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { parseArgs } from "node:util";
import type { Daemon, DaemonOptions } from "./daemon.js";
import { holdYoungGeneration } from "./platform/young-generation.js";

holdYoungGeneration(); // before the daemon's modules load (below): see young-generation.ts

/** Every flag, with what `--help` says of it. */
const FLAGS = {
  root: { type: "string", value: "DIR", help: "the workspace (default: the current directory)" },
  tools: { type: "string", value: "FILE", help: "a tools manifest: which built-ins are enabled, and their descriptions" },
  watcher: { type: "string", value: "parcel|chokidar", help: "the file watcher engine (default: parcel)" },
  "max-file-bytes": { type: "string", value: "N", help: "files above N bytes are TOO_LARGE for the file tools (default: 10 MiB)" },
  "mcp-config": { type: "string", value: "FILE", help: "MCP servers to pass through, trusted (the .mcp.json shape)" },
  codegraph: { type: "string", value: "auto|on|off", help: "CodeGraph's tools: auto (when installed and the root is indexed), on (index it first), off" },
  mcp: { type: "boolean", help: "serve the tools over MCP (stdio JSON-RPC) instead of JSON lines" },
  "mcp-confirm": {
    type: "string",
    value: "destructive|mutating|none",
    help: "MCP mode: which calls the person confirms first, asked through the client (default: destructive)",
  },
  "terminal-network": { type: "boolean", help: "terminal commands keep the network (default: none but a private loopback)" },
  "terminal-home": { type: "string", value: "DIR", help: "bind DIR as the terminal's HOME (default: an empty folder)" },
  "terminal-env": { type: "string", multiple: true, value: "NAME", help: "pass the secret variable NAME to terminal commands (repeatable)" },
  "terminal-sandbox": { type: "string", value: "on|off", help: "off: run terminal commands unsandboxed (default: on, bubblewrap)" },
  "lsp-sandbox": {
    type: "string",
    value: "auto|on|off",
    help: "language servers in bubblewrap, workspace read-only, no network: auto (where it works), on, off",
  },
  "lsp-warm": {
    type: "string",
    value: "on|off",
    help: "start the language servers of the root's project files (tsconfig.json, pyproject.toml, ...) at once (default: on)",
  },
  help: { type: "boolean", short: "h", help: "print this help and exit" },
  version: { type: "boolean", short: "v", help: "print the version and exit" },
} as const;

class UsageError extends Error {}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

function usage(): string {
  const flags = Object.entries(FLAGS).map(([name, f]) => [`${"short" in f ? `-${f.short}, ` : "    "}--${name}${"value" in f ? ` ${f.value}` : ""}`, f.help]);
  const width = Math.max(...flags.map(([flag]) => flag.length)) + 2; // the help column starts after the longest flag
  const lines = flags.map(([flag, help]) => `  ${flag.padEnd(width)}${help}`);
  return [
    "usage: tool-layer [--root DIR] [options]",
    "",
    "The tool layer daemon: reads JSON-lines tool calls on stdin, answers and pushes workspace events on stdout.",
    "",
    ...lines,
    "",
    "Docs: docs/protocol.md (the wire contract) and docs/README.md (everything else).",
  ].join("\n");
}

/** `--flag -5`: a value that starts with a dash is the flag's value, not another flag (parseArgs would refuse it). */
function joinDashValues(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = args[i].startsWith("--") ? args[i].slice(2) : undefined;
    const flag = name ? (FLAGS as Record<string, { type: string }>)[name] : undefined;
    if (flag?.type === "string" && i + 1 < args.length && /^-\d/.test(args[i + 1])) out.push(`${args[i]}=${args[++i]}`);
    else out.push(args[i]);
  }
  return out;
}

type Parsed = { kind: "help" } | { kind: "version" } | { kind: "run"; options: Omit<DaemonOptions, "version"> };

function parse(argv: string[]): Parsed {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({ args: joinDashValues(argv), options: FLAGS, strict: true, allowPositionals: false }));
  } catch (e) {
    const err = e as { code?: string; message: string };
    const bad = /'([^']+)'/.exec(err.message)?.[1];
    if (err.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw new UsageError(`unknown option ${bad ?? ""}`.trim());
    if (err.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") throw new UsageError(`${bad?.split(" ")[0] ?? "an option"} needs a value`);
    if (err.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") throw new UsageError(`unexpected argument ${bad ?? ""}; flags only (see --help)`.trim());
    throw new UsageError(err.message.split("\n")[0]);
  }
  if (values.help) return { kind: "help" };
  if (values.version) return { kind: "version" };
  const watcher = choice(values, "watcher", ["parcel", "chokidar"]);
  const rawMax = values["max-file-bytes"] as string | undefined;
  const maxFileBytes = rawMax === undefined ? undefined : Number(rawMax);
  if (maxFileBytes !== undefined && !(/^\d+$/.test(rawMax!) && Number.isSafeInteger(maxFileBytes) && maxFileBytes > 0)) {
    throw new UsageError(`--max-file-bytes must be a positive integer, not ${rawMax}`);
  }
  const codegraph = choice(values, "codegraph", ["auto", "on", "off"]);
  const lspSandbox = choice(values, "lsp-sandbox", ["auto", "on", "off"]);
  const mcpConfirm = choice(values, "mcp-confirm", ["destructive", "mutating", "none"]);
  const lspWarm = choice(values, "lsp-warm", ["on", "off"]) === "on";
  const mcpConfig = values["mcp-config"] as string | undefined;
  if (mcpConfig !== undefined && !isReadableFile(mcpConfig)) throw new UsageError(`--mcp-config ${mcpConfig} is not a readable file`);
  const terminal = terminalOptions(values);
  const root = (values.root as string | undefined) ?? process.cwd();
  if (!existsSync(root)) throw new UsageError(`--root ${root} does not exist`);
  if (!isDirectory(root)) throw new UsageError(`--root ${root} is not a directory`);
  return {
    kind: "run",
    options: {
      root,
      toolsFile: values.tools as string | undefined,
      watcher,
      maxFileBytes,
      mcpConfig,
      codegraph,
      mcp: values.mcp === true,
      mcpConfirm,
      terminal,
      lspSandbox,
      lspWarm,
    },
  };
}

function terminalOptions(values: Record<string, unknown>): DaemonOptions["terminal"] {
  const sandbox = choice(values, "terminal-sandbox", ["on", "off"]);
  const home = values["terminal-home"] as string | undefined;
  if (home !== undefined && !isDirectory(home)) throw new UsageError(`--terminal-home ${home} is not a directory`);
  const passEnv = (values["terminal-env"] as string[] | undefined) ?? [];
  for (const name of passEnv) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`--terminal-env ${name} is not a variable name`);
  return { sandbox, network: values["terminal-network"] === true, home: home === undefined ? undefined : realpathSync(home), passEnv };
}

/** A flag that takes one of a few words; the first is its default. */
function choice<const W extends string>(values: Record<string, unknown>, flag: keyof typeof FLAGS, words: readonly [W, ...W[]]): W {
  const value = (values[flag] as string | undefined) ?? words[0];
  if (!(words as readonly string[]).includes(value)) {
    const list = words.length === 2 ? words.join(" or ") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
    throw new UsageError(`--${flag} must be ${list}, not ${value}`);
  }
  return value as W;
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function isReadableFile(file: string): boolean {
  try {
    return statSync(file).isFile() && (accessSync(file, constants.R_OK), true);
  } catch {
    return false;
  }
}

let daemon: Daemon;
try {
  const parsed = parse(process.argv.slice(2));
  if (parsed.kind === "help") {
    process.stdout.write(`${usage()}\n`);
    process.exit(0);
  }
  if (parsed.kind === "version") {
    process.stdout.write(`${version()}\n`);
    process.exit(0);
  }
  const { Daemon } = await import("./daemon.js");
  daemon = new Daemon({ ...parsed.options, version: version() });
} catch (e) {
  // One line naming what is wrong (SPEC 1); --help has the rest.
  process.stderr.write(`tool-layer: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(2);
}
daemon.run(process.stdin, process.stdout).then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`tool-layer: fatal: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  },
);
