import { readFile } from "node:fs/promises";
import path from "node:path";
import { isNodeError } from "../errors.js";
import { type McpConfig, WORKSPACE_CONFIG_FILE, mergeMcpConfigs, parseMcpConfig } from "./config.js";

/** The IO around config.ts: read the workspace's `.mcp.json` and a `--mcp-config` file, parse, merge. */

type Env = Readonly<Record<string, string | undefined>>;

/** The root's `.mcp.json`; none is an empty configuration, not a problem. */
export async function loadWorkspaceConfig(root: string, env: Env = process.env): Promise<McpConfig> {
  const file = path.join(root, WORKSPACE_CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if (isNodeError(e, "ENOENT")) return { servers: [], problems: [] };
    return { servers: [], problems: [{ server: null, file, message: `${file} cannot be read (${(e as Error).message}).` }] };
  }
  return parseMcpConfig(text, { source: "workspace", file, root, env });
}

/**
 * A `--mcp-config FILE`: trusted, since the daemon's caller named it. A missing or unreadable file is a file-level
 * problem (`server: null`): the caller decides whether that stops the daemon, as an unreadable `--tools` file does.
 */
export async function loadFlagConfig(file: string, root: string, env: Env = process.env): Promise<McpConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    return { servers: [], problems: [{ server: null, file, message: `--mcp-config ${file} cannot be read (${(e as Error).message}).` }] };
  }
  return parseMcpConfig(text, { source: "mcp-config", file, root, env });
}

/** Both, merged: a server named in both is the `--mcp-config` one. */
export async function loadMcpConfig(root: string, flagFile: string | undefined, env: Env = process.env): Promise<McpConfig> {
  const workspace = await loadWorkspaceConfig(root, env);
  return flagFile === undefined ? workspace : mergeMcpConfigs(workspace, await loadFlagConfig(flagFile, root, env));
}
