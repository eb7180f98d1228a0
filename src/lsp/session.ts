/**
 * One running server process and its JSON-RPC connection: spawn, initialize, answer the server's own requests, notice its
 * death. A crash ends the session; the client starts a new one.
 */
import { pathToFileURL } from "node:url";
import {
  type Message,
  type MessageConnection,
  ErrorCodes,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from "vscode-jsonrpc/node.js";
import {
  type ClientCapabilities,
  type InitializeResult,
  type PublishDiagnosticsParams,
  type SymbolKind,
  ExitNotification,
  InitializeRequest,
  InitializedNotification,
  ShutdownRequest,
} from "vscode-languageserver-protocol";
import type { ServerSpec } from "./servers.js";
import type { SpawnServer, SpawnedServer } from "./spawn.js";

/** LSP SymbolKind 1..26: we read every kind. */
const ALL_SYMBOL_KINDS = Array.from({ length: 26 }, (_, i) => (i + 1) as SymbolKind);

/** What this client can take; a server sends only what a client advertises (pyright pulls only when pull is advertised). */
export const CLIENT_CAPABILITIES: ClientCapabilities = {
  general: { positionEncodings: ["utf-16"] },
  workspace: {
    configuration: true,
    workspaceFolders: true,
    didChangeWatchedFiles: { dynamicRegistration: true, relativePatternSupport: false },
    // No resource operations: a rename may only edit existing files.
    workspaceEdit: { documentChanges: true, resourceOperations: [], failureHandling: "abort" },
    symbol: { symbolKind: { valueSet: ALL_SYMBOL_KINDS } },
    diagnostics: { refreshSupport: true },
  },
  window: { workDoneProgress: true },
  textDocument: {
    synchronization: { dynamicRegistration: false, didSave: false, willSave: false, willSaveWaitUntil: false },
    publishDiagnostics: { versionSupport: true, codeDescriptionSupport: true, tagSupport: { valueSet: [1, 2] } },
    diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false },
    hover: { contentFormat: ["markdown", "plaintext"] },
    // declaration too: with it pyright's definition prefers the source over the stub.
    declaration: { linkSupport: true },
    definition: { linkSupport: true },
    implementation: { linkSupport: true },
    references: {},
    documentSymbol: { hierarchicalDocumentSymbolSupport: true, symbolKind: { valueSet: ALL_SYMBOL_KINDS } },
    rename: { prepareSupport: true },
  },
};

/** Lines of a server's stderr and log messages kept to explain a failure. */
const LOG_LINES_KEPT = 20;
/** After `exit`, this long before the process is killed: both servers exit in well under a second. */
const EXIT_GRACE_MS = 2_000;
/** After an exit, stderr's last lines may still be in the pipe: this long at most for them, for the failure message. */
const STDERR_DRAIN_MS = 200;

/**
 * vscode-jsonrpc 8.2 rethrows a failed request write inside a promise executor: an unhandled rejection, which would end
 * the daemon. A write to a dead server fails quietly here; its exit disposes the connection, rejecting what is pending.
 */
class QuietWriter extends StreamMessageWriter {
  override async write(message: Message): Promise<void> {
    try {
      await super.write(message);
    } catch {
      /* the server is gone: the exit handler answers for it */
    }
  }
}

/** A `$/progress` notification's value (LSP work done progress: begin, report, end). */
export interface ProgressValue {
  kind: "begin" | "report" | "end";
  title?: string;
  message?: string;
  percentage?: number;
}

export interface SessionEvents {
  onExit(reason: string): void;
  /** The server's work done progress (tsls: loading the project; pyright: finding source files). */
  onProgress?(value: ProgressValue): void;
  onPublish(params: PublishDiagnosticsParams): void;
  onDiagnosticsRefresh(): void;
}

export class ServerSession {
  readonly connection: MessageConnection;
  readonly server: SpawnedServer;
  /** Resolves with a reason when the process is gone (exit, spawn failure or a broken pipe). */
  readonly exited: Promise<string>;
  capabilities: InitializeResult["capabilities"] = {};
  serverInfo: InitializeResult["serverInfo"];
  /** Dynamic registrations by method (pyright registers `textDocument/diagnostic` and file watchers after `initialized`). */
  readonly registrations = new Map<string, Set<string>>();
  /** typescript-language-server's `$/typescriptVersion`: which typescript it runs and where it found it. */
  typescript?: { version: string; source: string };
  dead = false;
  /** Resolves once the server has listed the workspace's files (ServerSpec.indexedLog), or when it dies. */
  readonly indexed: Promise<void>;
  private markIndexed: () => void = () => {};
  /** Set when the server must not be restarted: it runs code we did not choose. */
  fatal?: string;
  private stopping = false;
  private readonly log: string[] = [];
  private readonly deathListeners = new Set<() => void>();

  constructor(
    readonly spec: ServerSpec,
    readonly root: string,
    spawn: SpawnServer,
    env: NodeJS.ProcessEnv,
    private readonly events: SessionEvents,
  ) {
    this.server = spawn(spec.command, spec.args, { cwd: root, env });
    const child = this.server.process;
    let exitedWith: (reason: string) => void = () => {};
    this.exited = new Promise((resolve) => (exitedWith = resolve));
    this.indexed = spec.indexedLog ? new Promise((resolve) => (this.markIndexed = resolve)) : Promise.resolve();
    const stderrEnded = new Promise<void>((resolve) => child.stderr.once("close", resolve));
    const die = (reason: string) => {
      if (this.dead) return;
      this.dead = true;
      this.connection.dispose(); // rejects every pending request
      for (const listener of [...this.deathListeners]) listener();
      void this.server.stop({ graceMs: 0 }); // what it left behind (tsserver) goes with it
      this.markIndexed();
      void Promise.race([stderrEnded, new Promise((resolve) => setTimeout(resolve, STDERR_DRAIN_MS).unref())]).then(() => {
        exitedWith(reason);
        if (!this.stopping) this.events.onExit(reason);
      });
    };
    child.on("exit", (code, signal) => die(signal ? `killed by ${signal}` : `exited with code ${code}`));
    child.on("error", (e) => die(`could not run: ${e.message}`));
    child.stdin.on("error", () => {}); // EPIPE on a dead server: the exit event says what happened
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => this.remember(chunk));
    this.connection = createMessageConnection(new StreamMessageReader(child.stdout), new QuietWriter(child.stdin));
    this.handleServerMessages();
    this.connection.listen();
  }

  get pid(): number | undefined {
    return this.server.process.pid;
  }

  /**
   * Calls `listener` when the process is found gone (at once if it is): a request whose write was still in flight when
   * the connection was disposed is registered after it and never settles (vscode-jsonrpc 8.2), so a request must also
   * wait for this. Returns the unsubscribe.
   */
  whenDead(listener: () => void): () => void {
    if (this.dead) {
      listener();
      return () => {};
    }
    this.deathListeners.add(listener);
    return () => this.deathListeners.delete(listener);
  }

  /** The last lines the server logged, for a failure message. */
  lastLog(): string {
    return this.log.join(" | ").slice(-1_000);
  }

  async initialize(): Promise<void> {
    const rootUri = pathToFileURL(this.root).href;
    const result = await this.connection.sendRequest(InitializeRequest.type, {
      // The servers watch this pid and exit when it is gone: a second guard beside the supervisor's. In a sandbox's PID
      // namespace it names no process (or another one), and bwrap's --die-with-parent is the guard instead.
      processId: this.server.isolated ? null : process.pid,
      clientInfo: { name: "tool-layer" },
      rootUri,
      rootPath: this.root,
      workspaceFolders: [{ uri: rootUri, name: this.root.split("/").pop() || "root" }],
      capabilities: CLIENT_CAPABILITIES,
      initializationOptions: this.spec.initializationOptions,
      locale: "en",
    });
    this.capabilities = result.capabilities;
    this.serverInfo = result.serverInfo;
    await this.connection.sendNotification(InitializedNotification.type, {});
  }

  /** Pull diagnostics: advertised in initialize or registered later. */
  get canPull(): boolean {
    return this.capabilities.diagnosticProvider !== undefined || (this.registrations.get("textDocument/diagnostic")?.size ?? 0) > 0;
  }

  get watchesFiles(): boolean {
    return (this.registrations.get("workspace/didChangeWatchedFiles")?.size ?? 0) > 0;
  }

  /**
   * shutdown, exit, then kill whatever is left (the supervisor's stop, asked politely first); resolves once no process
   * of the server is alive, or after the supervisor's GONE_WAIT_MS with the pids of those still alive.
   */
  async stop(): Promise<number[]> {
    this.stopping = true;
    const polite = async () => {
      await this.connection.sendRequest(ShutdownRequest.type);
      await this.connection.sendNotification(ExitNotification.type);
      await this.exited;
    };
    const left = await this.server.stop(this.dead ? { graceMs: 0 } : { graceMs: EXIT_GRACE_MS, ask: polite });
    if (!this.dead) this.connection.dispose();
    return left;
  }

  private remember(text: string): void {
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      this.log.push(line.trim().slice(0, 300));
      if (this.log.length > LOG_LINES_KEPT) this.log.shift();
    }
  }

  private handleServerMessages(): void {
    const c = this.connection;
    c.onRequest("workspace/configuration", (params: { items: { section?: string }[] }) =>
      params.items.map((item) => (item.section === undefined ? this.spec.settings : (this.spec.settings[item.section] ?? null))),
    );
    c.onRequest("client/registerCapability", (params: { registrations: { id: string; method: string }[] }) => {
      for (const r of params.registrations) {
        const ids = this.registrations.get(r.method) ?? new Set<string>();
        ids.add(r.id);
        this.registrations.set(r.method, ids);
      }
      return null;
    });
    c.onRequest("client/unregisterCapability", (params: { unregisterations: { id: string; method: string }[] }) => {
      for (const r of params.unregisterations) this.registrations.get(r.method)?.delete(r.id);
      return null;
    });
    // pyright exits (an unhandled rejection) if a refresh request fails: every request a server may send gets an answer.
    c.onRequest("workspace/diagnostic/refresh", () => {
      this.events.onDiagnosticsRefresh();
      return null;
    });
    for (const method of [
      "window/workDoneProgress/create",
      "workspace/semanticTokens/refresh",
      "workspace/inlayHint/refresh",
      "workspace/inlineValue/refresh",
      "workspace/codeLens/refresh",
      "workspace/foldingRange/refresh",
      "window/showMessageRequest",
    ]) {
      c.onRequest(method, () => null);
    }
    c.onRequest("window/showDocument", () => ({ success: false }));
    // A read-only client: edits reach the workspace only through the tools' versioned write.
    c.onRequest("workspace/applyEdit", () => ({ applied: false, failureReason: "tool-layer applies edits itself" }));
    c.onRequest("workspace/workspaceFolders", () => [{ uri: pathToFileURL(this.root).href, name: "root" }]);
    c.onRequest((method: string) => new ResponseError(ErrorCodes.MethodNotFound, `tool-layer does not handle ${method}`));

    c.onNotification("textDocument/publishDiagnostics", (params: PublishDiagnosticsParams) => this.events.onPublish(params));
    c.onNotification("$/typescriptVersion", (params: { version: string; source: string }) => {
      this.typescript = params;
      // "user-setting" is our tsserver.path; anything else is the workspace's typescript or tsls's guess.
      if (params.source !== "user-setting") {
        this.fatal = `it runs typescript ${params.version} from "${params.source}", not the project's own`;
        void this.server.stop({ graceMs: 0 });
      }
    });
    c.onNotification("window/logMessage", (params: { type: number; message: string }) => {
      if (params.type <= 2) this.remember(params.message);
      if (this.spec.indexedLog?.test(params.message.trim())) this.markIndexed();
    });
    c.onNotification("window/showMessage", (params: { message: string }) => this.remember(params.message));
    c.onNotification("$/progress", (params: { value?: ProgressValue }) => {
      if (params.value && typeof params.value === "object") this.events.onProgress?.(params.value);
    });
    c.onNotification(() => {}); // telemetry/event, …
    c.onError(() => {}); // a broken stream: the exit event decides
  }
}
