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
  /** The entry as written, for everything a model reads (describeEntry): `${VAR}` stays a reference, never its value. */
  written: WrittenEntry;
  /** The values `${VAR}` took from the environment, with their references: redact() puts the references back. */
  expanded: Expansion[];
}

/** The fields of an entry that describeEntry shows, unexpanded. */
export type WrittenEntry =
  | { command: string; args: string[]; env: Record<string, string>; cwd: string | null }
  | { url: string; headers: Record<string, string> };

export interface Expansion {
  /** `${NAME}`, as the entry wrote it (a default is left out: the value came from the environment). */
  ref: string;
  value: string;
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
const timeout = z
  .number()
  .int()
  .positive()
  .max(24 * 3600_000)
  .optional();

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
  const expanded: Expansion[] = [];
  const base = { name, source: opts.source, file: opts.file, digest: entryDigest(raw), expanded };
  const expand = (value: string, field: string) => expandVars(value, opts.env, `${where}, ${field}`, expanded);
  const expandMap = (m: Record<string, string> | undefined, field: string) =>
    Object.fromEntries(Object.entries(m ?? {}).map(([k, v]) => [k, expand(v, `${field}.${k}`)]));

  if (isHttp) {
    // The URL is checked after expansion: `${BASE_URL}/mcp` is only a URL once expanded.
    const pre = httpEntry.extend({ url: z.string().min(1, "must be a URL") }).safeParse(raw);
    if (!pre.success) throw new Error(describe(where, pre.error));
    const url = expand(pre.data.url, "url");
    const checked = httpEntry.shape.url.safeParse(url);
    // As written: the expanded URL may carry a key (`?key=${API_KEY}`).
    if (!checked.success) throw new Error(`${where}: url ${JSON.stringify(pre.data.url)} must be an http:// or https:// URL once expanded.`);
    return {
      ...base,
      transport: pre.data.type === "sse" ? "sse" : "http",
      url,
      headers: expandMap(pre.data.headers, "headers"),
      timeoutMs: pre.data.timeout_ms ?? DEFAULT_TOOL_TIMEOUT_MS,
      written: { url: pre.data.url, headers: pre.data.headers ?? {} },
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
    written: { command: e.command, args: e.args ?? [], env: e.env ?? {}, cwd: e.cwd ?? null },
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
 * A variable that is unset (or empty, for the `:-` form) and has no default is an error naming it. Each value taken
 * from `env` is added to `found` with its reference (a default is the file's own text, no secret).
 */
export function expandVars(value: string, env: Readonly<Record<string, string | undefined>>, where = "value", found: Expansion[] = []): string {
  return value.replace(VAR, (_m, name: string, fallback: string | undefined) => {
    const v = env[name];
    if (fallback !== undefined && (v === undefined || v === "")) return fallback;
    if (v === undefined) throw new Error(`${where}: \${${name}} is not set; set ${name} in the daemon's environment or write \${${name}:-default}.`);
    found.push({ ref: `\${${name}}`, value: v });
    return v;
  });
}

/**
 * Shorter values are left in text: they are flags, ports and names (`1`, `true`, `8080`), not secrets, and replacing
 * them would garble every message that happens to contain them.
 */
export const REDACT_MIN_CHARS = 6;

/**
 * `text` with every value `${VAR}` took from the environment put back as its reference: what the daemon composes from a
 * server's stderr, errors and spawn failures is read by a model, and a server may well print the token it was given.
 */
export function redact(text: string, expanded: readonly Expansion[]): string {
  const secrets = expanded.filter((e) => e.value.length >= REDACT_MIN_CHARS).sort((a, b) => b.value.length - a.value.length);
  return secrets.reduce((t, e) => t.replaceAll(e.value, e.ref), text);
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

/** A word a shell would take as it is: safe characters and `${VAR}` references (which it expands, as the daemon does). */
const PLAIN_WORD = /^(?:[\w@%+=:,./-]|\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[\w@%+=:,./-]*)?\})+$/;

/**
 * What a preview and mcp_servers show of an entry, as written (references, never values): the command line with the
 * variables it sets (`API_KEY=${API_KEY} npx server`) and its cwd, or the URL with its headers. Everything that decides
 * what runs or where a request goes is there, for the person approving it.
 */
export function describeEntry(s: ServerConfig): string {
  const w = s.written;
  if ("url" in w) return [`${s.transport} ${w.url}`, ...Object.entries(w.headers).map(([k, v]) => `(header ${k}: ${v})`)].join(" ");
  const word = (a: string) => (PLAIN_WORD.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  const env = Object.entries(w.env).map(([k, v]) => `${k}=${word(v)}`);
  return [...(w.cwd === null ? [] : [`(in ${word(w.cwd)})`]), ...env, ...[w.command, ...w.args].map(word)].join(" ");
}

function fileProblem(opts: ParseOptions, message: string): McpConfig {
  return { servers: [], problems: [{ server: null, file: opts.file, message }] };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
