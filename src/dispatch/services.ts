import os from "node:os";
import path from "node:path";
import { ToolError } from "../errors.js";
import type { VersionedFiles } from "../fs/versioned-write.js";
import type { GitRepo } from "../git/repo.js";
import type { LspService } from "../lsp/service.js";
import type { McpPassthrough } from "../mcp/passthrough.js";
import type { PathResolver } from "../paths.js";
import type { EventBus } from "../platform/bus.js";
import type { Supervisor } from "../platform/supervisor.js";
import { Terminal } from "../terminal/terminal.js";
import { type ExaSettings, exaSettingsFromEnv } from "../web/exa.js";
import type { Workspace } from "../workspace.js";

/**
 * A service the daemon may run or not. `use()` gives it, or throws the answer its tools give when it is off (never
 * `undefined`); `state()` is what `info` shows of it.
 */
export interface Switchable<T> {
  use(): T;
  state(): Record<string, unknown>;
}

/** The web tools' service: Exa's settings, read at each call (a key set after start, by a restarted Gateway, is seen). */
export interface WebService {
  settings(): ExaSettings;
}

/**
 * Every service a tool reaches, built once by the composition root (daemon.ts) and handed to each call as
 * `ctx.services`. Every member is present: one that is off is a Switchable that says so.
 */
export interface Services {
  /** The workspace's own state: its root, what sessions saw, the worktree lock, and the live VFS behind it. */
  readonly workspace: Workspace;
  readonly paths: PathResolver;
  /** The one versioned write (SPEC 5). */
  readonly files: VersionedFiles;
  /** The root's repository. */
  readonly git: GitRepo;
  readonly terminal: Terminal;
  readonly lsp: Switchable<LspService>;
  readonly mcp: Switchable<McpPassthrough>;
  readonly web: WebService;
  readonly processes: Supervisor;
  readonly bus: EventBus;
  readonly log: (message: string) => void;
}

export function running<T>(service: T, state: (service: T) => Record<string, unknown> = () => ({ available: true })): Switchable<T> {
  return { use: () => service, state: () => state(service) };
}

export function off<T>(error: () => ToolError, state: Record<string, unknown>): Switchable<T> {
  return {
    use: () => {
      throw error();
    },
    state: () => state,
  };
}

/** What the lsp_* tools answer where the daemon runs no language servers. */
export const LSP_OFF: Switchable<LspService> = off(() => new ToolError("LSP_UNAVAILABLE", "The language servers are not running in this daemon."), {
  available: false,
  reason: "the language servers are not running in this daemon",
});

/** What the mcp_* tools answer where the daemon runs no passthrough. */
export const MCP_OFF: Switchable<McpPassthrough> = off(() => new ToolError("NOT_AVAILABLE", "MCP passthrough is not running in this daemon."), {
  available: false,
  reason: "MCP passthrough is not running in this daemon",
});

export const ENV_WEB: WebService = { settings: () => exaSettingsFromEnv() };

/**
 * The services of one workspace for a caller without a daemon (a test, a script): what `parts` leaves out is off (lsp,
 * mcp) or its default (a terminal with the default options, stopped with the workspace; Exa's settings from the env).
 */
export function workspaceServices(
  ws: Workspace,
  parts: { terminal?: Terminal; lsp?: Switchable<LspService>; mcp?: Switchable<McpPassthrough>; web?: WebService } = {},
): Services {
  return {
    workspace: ws,
    paths: ws.paths,
    files: ws.files,
    git: ws.git,
    terminal: parts.terminal ?? defaultTerminal(ws),
    lsp: parts.lsp ?? LSP_OFF,
    mcp: parts.mcp ?? MCP_OFF,
    web: parts.web ?? ENV_WEB,
    processes: ws.processes,
    bus: ws.bus,
    log: ws.log,
  };
}

function defaultTerminal(ws: Workspace): Terminal {
  const terminal = new Terminal(ws, { stateDir: path.join(os.tmpdir(), "tool-layer-state") });
  ws.onDispose(() => terminal.dispose());
  return terminal;
}
