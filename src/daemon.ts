import type { Readable, Writable } from "node:stream";
import { Dispatcher } from "./dispatch/dispatcher.js";
import { Registry, readManifest } from "./dispatch/registry.js";
import { ENV_WEB, type Services, running } from "./dispatch/services.js";
import { defaultStateDir } from "./mcp/approvals.js";
import { prepareStateDir } from "./paths.js";
import { type CodegraphMode, McpPassthrough } from "./mcp/passthrough.js";
import type { LspSandboxMode } from "./lsp/sandbox.js";
import type { ConfirmMode } from "./protocol/mcp/confirm.js";
import { LspService } from "./lsp/service.js";
import { EventBus } from "./platform/bus.js";
import { Supervisor } from "./platform/supervisor.js";
import { holdYoungGeneration, releaseYoungGeneration } from "./platform/young-generation.js";
import { Terminal, type TerminalOptions } from "./terminal/terminal.js";
import { JsonlTransport } from "./protocol/jsonl/transport.js";
import { debugSleepTool } from "./tools/debug-sleep.js";
import { TOOLS } from "./tools/index.js";
import { PassthroughTools } from "./tools/mcp-passthrough.js";
import { type WatcherEngine, Workspace } from "./workspace.js";

/** How long in-flight calls may run after stdin closes or SIGTERM before they are aborted. */
export const SHUTDOWN_GRACE_MS = 5_000;

export interface DaemonOptions {
  root: string;
  version: string;
  toolsFile?: string;
  watcher?: WatcherEngine;
  maxFileBytes?: number;
  /** `--mcp-config FILE`: MCP servers the caller trusts. */
  mcpConfig?: string;
  codegraph?: CodegraphMode;
  /** Where approvals and other daemon state live (default $XDG_STATE_HOME/tool-layer). */
  stateDir?: string;
  /** Serve the registry over MCP (SPEC 13) instead of JSON lines. */
  mcp?: boolean;
  /** `--mcp-confirm`: which MCP calls a person confirms first (default destructive). */
  mcpConfirm?: ConfirmMode;
  /** The terminal's flags (SPEC 11): --terminal-network, --terminal-home, --terminal-env, --terminal-sandbox. */
  terminal?: Omit<TerminalOptions, "stateDir">;
  /** `--lsp-sandbox`: whether the language servers run inside bubblewrap (default auto: where it works). */
  lspSandbox?: LspSandboxMode;
  /** `--lsp-warm`: start the language servers of the root's project files once ready (default true). */
  lspWarm?: boolean;
}

const stderrLog = (message: string) => process.stderr.write(`tool-layer: ${message}\n`);

/**
 * The composition root: builds the services once (process supervisor, event bus, workspace, terminal, language servers,
 * MCP passthrough, registry, dispatcher), connects a transport, and takes them down in order. Everything the daemon
 * starts dies with it. Two daemons in one process share nothing.
 */
export class Daemon {
  readonly processes: Supervisor;
  readonly bus: EventBus;
  readonly registry: Registry;
  readonly ws: Workspace;
  readonly services: Services;
  readonly dispatcher: Dispatcher;
  private readonly stateDir: string;
  private readonly lsp: LspService;
  private readonly mcp: McpPassthrough;

  constructor(
    private readonly options: DaemonOptions,
    log: (message: string) => void = stderrLog,
  ) {
    this.processes = new Supervisor(undefined, log);
    this.bus = new EventBus(log);
    // These throw with a sentence for stderr: a bad root, state folder or --tools file stops the daemon before it says ready.
    const tools = process.env.TOOL_LAYER_DEBUG_TOOLS === "1" ? [...TOOLS, debugSleepTool] : TOOLS;
    const ws = (this.ws = new Workspace({ root: options.root, watcher: options.watcher, maxFileBytes: options.maxFileBytes }, this.processes, this.bus, log));
    this.stateDir = prepareStateDir(options.stateDir ?? defaultStateDir(), ws.root);
    const manifest = options.toolsFile ? readManifest(options.toolsFile, TOOLS, log) : undefined;
    this.registry = new Registry(tools, manifest, this.bus, log);
    // Built before a call can come, stopped at shutdown (newest first): none starts a child before start().
    const terminal = new Terminal(ws, { ...options.terminal, stateDir: this.stateDir });
    ws.onDispose(() => terminal.dispose());
    // The language servers: none runs until a call needs one; all are stopped before the supervisor's final sweep.
    this.lsp = new LspService(ws, { sandbox: options.lspSandbox, hide: [this.stateDir] });
    this.mcp = new McpPassthrough(ws, () => this.registry.changed(), {
      configFile: options.mcpConfig,
      stateDir: this.stateDir,
      codegraph: options.codegraph ?? "auto",
    });
    this.services = {
      workspace: ws,
      paths: ws.paths,
      files: ws.files,
      git: ws.git,
      terminal,
      lsp: running(this.lsp, (l) => l.info()),
      mcp: running(this.mcp),
      web: ENV_WEB,
      processes: this.processes,
      bus: this.bus,
      log,
    };
    this.dispatcher = new Dispatcher(this.registry, this.services);
  }

  /** Resolves once input has ended (or SIGTERM came, or stdout closed), calls in flight are done and every child is gone. */
  async run(input: Readable, output: Writable): Promise<void> {
    this.processes.startWatchdog();
    const end = untilStopped();
    if (this.options.mcp) return this.runMcp(input, output, end);
    const transport = new JsonlTransport(input, output, this.dispatcher, this.bus, {
      readyData: () => ({ version: this.options.version, root: this.ws.root, tools: this.registry.tools().length }),
      onEnd: end.stop,
    });
    await this.start();
    transport.start();
    this.warmLanguageServers();

    await end.stopped;
    transport.stopReading();
    await this.stop();
    await transport.close();
  }

  /** The same services behind the MCP server adapter (SPEC 13): one connection on stdio, one session. */
  private async runMcp(input: Readable, output: Writable, end: Stopper): Promise<void> {
    const { serveMcp } = await import("./protocol/mcp/serve.js");
    await this.start();
    // Served once ready: what the client sent meanwhile waits in stdin's buffer, as JSON-lines requests wait in a queue.
    const mcp = serveMcp(this.dispatcher, this.registry, this.ws, this.bus, input, output, {
      version: this.options.version,
      confirm: this.options.mcpConfirm ?? "destructive",
      passthrough: this.mcp,
      onEnd: end.stop,
    });
    this.warmLanguageServers();

    await end.stopped;
    await this.stop();
    await mcp.close();
  }

  /** Calls in flight finish (bounded), then the services stop, then every child is gone. */
  async stop(): Promise<void> {
    await this.dispatcher.drain(SHUTDOWN_GRACE_MS);
    await this.ws.dispose();
    await this.processes.stop();
  }

  /**
   * The workspace (watcher, index), then what builds on it; resolves once the daemon can answer. `run` calls it; a test
   * that connects transports of its own (test/helpers/in-process.ts) calls it and `stop` itself.
   */
  async start(): Promise<void> {
    holdYoungGeneration(); // main.ts holds it from its first line; held here too for a daemon started in a test
    try {
      this.services.terminal.start(); // the sandbox probe runs while the watcher starts
      await this.ws.init();
      this.ws.git.start();
      // Stopped before the VFS and the terminal (disposers run newest first).
      this.ws.onDispose(() => this.lsp.stop());
      this.ws.onDispose(() => this.mcp.stop());
      // The user's MCP servers and CodeGraph: their tools join the registry as the servers come up (SPEC 12).
      this.registry.addProvider(new PassthroughTools(this.mcp));
      await this.mcp.start();
    } finally {
      releaseYoungGeneration();
    }
  }

  /** After ready (its lsp.state events follow the ready line): see lsp/warm.ts. */
  private warmLanguageServers(): void {
    if (this.options.lspWarm === false) return;
    this.lsp
      .warm(() => this.ws.fileIndex?.paths() ?? [])
      .catch((e: unknown) => this.ws.log(`the language servers' warm start failed: ${e instanceof Error ? e.message : String(e)}`));
  }
}

interface Stopper {
  /** Settles on stop(), SIGTERM or SIGINT; the signal handlers are gone by then. */
  stopped: Promise<void>;
  stop: () => void;
}

function untilStopped(): Stopper {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve)).then(() => {
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
  });
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  return { stopped, stop };
}
