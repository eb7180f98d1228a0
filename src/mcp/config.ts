import { createHash } from "node:crypto";
import { canonicalJson } from "../core/canonical-json.js";
import path from "node:path";
import { z } from "zod";

/**
 * Reading MCP server configuration (SPEC 12): the `{"mcpServers": {...}}` shape MCP clients already use, in the root's
 * `.mcp.json` and in a `--mcp-config FILE`. Pure: the callers read the files; this turns text into entries or problems.
 */

/** A call to a passthrough tool gives up after this unless the entry sets `timeout_ms` (SPEC 12). */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
/** The name of the workspace's own file, at the root. */
export const WORKSPACE_CONFIG_FILE = ".mcp.json";

/** Where an entry came from: the workspace's file needs approval before it runs anything, the flag's does not. */
export type ServerSource = "workspace" | "mcp-config" | "builtin";

interface EntryBase {
  name: string;
  source: ServerSource;
  /** The file it was read from, for messages (null for built-ins). */
  file: string | null;
  /** Digest of the entry as written (before `${VAR}` expansion), what an approval is bound to. */
  digest: string;
  timeoutMs: number;
}

export interface StdioServerConfig extends EntryBase {
  transport: "stdio";
  command: string;
  args: string[];
  /** Variables the entry sets; the spawner adds them to its own base environment. */
  env: Record<string, string>;
  /** Absolute: a relative `cwd` is taken from the root, and no `cwd` is the root. */
  cwd: string;
}

export interface HttpServerConfig extends EntryBase {
  /** `http` is Streamable HTTP (also written `streamable-http`); `sse` is the older HTTP+SSE transport. */
  transport: "http" | "sse";
  url: string;
  headers: Record<string, string>;
}

export type ServerConfig = StdioServerConfig | HttpServerConfig;

/** One entry (or the whole file, `server: null`) that could not be used; the other entries still are. */
export interface ConfigProblem {
  server: string | null;
  file: string | null;
  message: string;
}

export interface McpConfig {
  servers: ServerConfig[];
  problems: ConfigProblem[];
}

export interface ParseOptions {
  source: ServerSource;
  /** For messages and for the entries' `file`. */
  file: string | null;
  /** The workspace root: relative `cwd` values are taken from it. */
  root: string;
  /** What `${VAR}` expands from: the daemon's environment. */
  env: Readonly<Record<string, string | undefined>>;
}

const stringMap = z.record(z.string(), z.string({ error: "must be a string (quote numbers and booleans)" }));
const timeout = z.number().int().positive().max(24 * 3600_000).optional();

const stdioEntry = z.object({
  type: z.literal("stdio").optional(),
  command: z.string().min(1, "must name the program to run"),
  args: z.array(z.string({ error: "every argument must be a string" })).optional(),
  env: stringMap.optional(),
  cwd: z.string().min(1).optional(),
  timeout_ms: timeout,
});

const httpEntry = z.object({
  type: z.enum(["http", "streamable-http", "sse"]).optional(),
  url: z.string().refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "must be an http:// or https:// URL"),
  headers: stringMap.optional(),
  timeout_ms: timeout,
});

/**
 * Parses one configuration file's text. Never throws: a file that is not JSON or has no `mcpServers` object is one
 * problem with `server: null`; a bad entry is a problem for that server alone.
 */
export function parseMcpConfig(text: string, opts: ParseOptions): McpConfig {
  const where = opts.file ?? "the MCP configuration";
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return fileProblem(opts, `${where} is not valid JSON (${(e as Error).message}); fix it or remove it.`);
  }
  if (!isPlainObject(json) || !isPlainObject(json.mcpServers)) {
    return fileProblem(opts, `${where} must be an object with an "mcpServers" object: {"mcpServers": {"name": {"command": "…", "args": […]}}}.`);
  }
  const out: McpConfig = { servers: [], problems: [] };
  for (const [name, raw] of Object.entries(json.mcpServers)) {
    try {
      out.servers.push(parseEntry(name, raw, opts));
    } catch (e) {
      out.problems.push({ server: name, file: opts.file, message: (e as Error).message });
    }
  }
  return out;
}

function parseEntry(name: string, raw: unknown, opts: ParseOptions): ServerConfig {
  const where = `MCP server "${name}"${opts.file ? ` in ${opts.file}` : ""}`;
  if (name.trim() === "") throw new Error(`An MCP server${opts.file ? ` in ${opts.file}` : ""} has an empty name; give it a name.`);
  if (!isPlainObject(raw)) throw new Error(`${where} must be an object with "command" (a program) or "url" (an HTTP server).`);
  const isHttp = "url" in raw || (typeof raw.type === "string" && raw.type !== "stdio");
  if (!isHttp && !("command" in raw)) throw new Error(`${where} needs "command" (a program to run) or "url" (an HTTP server).`);
  const base = { name, source: opts.source, file: opts.file, digest: entryDigest(raw) };
  const expand = (value: string, field: string) => expandVars(value, opts.env, `${where}, ${field}`);
  const expandMap = (m: Record<string, string> | undefined, field: string) =>
    Object.fromEntries(Object.entries(m ?? {}).map(([k, v]) => [k, expand(v, `${field}.${k}`)]));

  if (isHttp) {
    // The URL is checked after expansion: `${BASE_URL}/mcp` is only a URL once expanded.
    const pre = httpEntry.extend({ url: z.string().min(1, "must be a URL") }).safeParse(raw);
    if (!pre.success) throw new Error(describe(where, pre.error));
    const url = expand(pre.data.url, "url");
    const checked = httpEntry.shape.url.safeParse(url);
    if (!checked.success) throw new Error(`${where}: url ${JSON.stringify(url)} must be an http:// or https:// URL.`);
    return {
      ...base,
      transport: pre.data.type === "sse" ? "sse" : "http",
      url,
      headers: expandMap(pre.data.headers, "headers"),
      timeoutMs: pre.data.timeout_ms ?? DEFAULT_TOOL_TIMEOUT_MS,
    };
  }
  const parsed = stdioEntry.safeParse(raw);
  if (!parsed.success) throw new Error(describe(where, parsed.error));
  const e = parsed.data;
  return {
    ...base,
    transport: "stdio",
    command: expand(e.command, "command"),
    args: (e.args ?? []).map((a, i) => expand(a, `args[${i}]`)),
    env: expandMap(e.env, "env"),
    cwd: path.resolve(opts.root, e.cwd === undefined ? "." : expand(e.cwd, "cwd")),
    timeoutMs: e.timeout_ms ?? DEFAULT_TOOL_TIMEOUT_MS,
  };
}

function describe(where: string, error: z.ZodError): string {
  const parts = error.issues.map((i) => {
    const field = i.path.map(String).join(".") || "entry";
    if (i.code === "invalid_value" && i.path[0] === "type") return `type must be "stdio", "http", "streamable-http" or "sse"`;
    return `${field} ${i.message.replace(/^Invalid input: /, "")}`;
  });
  return `${where}: ${parts.join("; ")}.`;
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-((?:[^}\\]|\\.)*))?\}/g;

/**
 * `${VAR}` and `${VAR:-default}` from `env`, as MCP clients expand them; `$VAR` without braces stays as written.
 * A variable that is unset (or empty, for the `:-` form) and has no default is an error naming it.
 */
export function expandVars(value: string, env: Readonly<Record<string, string | undefined>>, where = "value"): string {
  return value.replace(VAR, (_m, name: string, fallback: string | undefined) => {
    const v = env[name];
    if (fallback !== undefined) return v === undefined || v === "" ? fallback : v;
    if (v === undefined) throw new Error(`${where}: \${${name}} is not set; set ${name} in the daemon's environment or write \${${name}:-default}.`);
    return v;
  });
}

/**
 * Servers from both files; a server named in both is the `--mcp-config` one (SPEC 12), and the workspace's entry and
 * its problems are dropped, so a bad workspace entry cannot shadow a good flag entry.
 */
export function mergeMcpConfigs(workspace: McpConfig, flag: McpConfig): McpConfig {
  const flagNames = new Set([...flag.servers.map((s) => s.name), ...flag.problems.flatMap((p) => (p.server === null ? [] : [p.server]))]);
  return {
    servers: [...flag.servers, ...workspace.servers.filter((s) => !flagNames.has(s.name))],
    problems: [...flag.problems, ...workspace.problems.filter((p) => p.server === null || !flagNames.has(p.server))],
  };
}

/** The digest an approval records: SHA-256 of the entry's canonical JSON, as written (no expansion, so no secrets). */
export function entryDigest(raw: unknown): string {
  return createHash("sha256").update(canonicalJson(raw)).digest("hex");
}

/** The command line a preview shows for an entry, or its URL. */
export function describeEntry(s: ServerConfig): string {
  if (s.transport !== "stdio") return `${s.transport} ${s.url}`;
  return [s.command, ...s.args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}

function fileProblem(opts: ParseOptions, message: string): McpConfig {
  return { servers: [], problems: [{ server: null, file: opts.file, message }] };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
