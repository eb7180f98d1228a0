/**
 * A client of one language server: lazily started, restarted after a crash (capped), its documents kept in sync, and every
 * answer about a known content hash. The tools call it with `{path, text, hash}` of the file as they read it; the daemon's
 * bus calls `sync` for every change of any origin.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  CancellationTokenSource,
  type Diagnostic,
  type DocumentDiagnosticReport,
  type DocumentSymbol,
  type Hover,
  type Location,
  type LocationLink,
  type Position,
  type PublishDiagnosticsParams,
  type SymbolInformation,
  type WorkspaceEdit,
  type WorkspaceSymbol,
} from "vscode-languageserver-protocol";
import { fileHash } from "../core/hash.js";
import { decodeText, splitText } from "../core/text.js";
import { ToolError } from "../errors.js";
import {
  type DiagnosticItem,
  type FileEdits,
  type SymbolItem,
  type TsServerDiagnostic,
  fromLspDiagnostic,
  fromTsServerDiagnostic,
  hoverText,
  normalizeWorkspaceEdit,
  placesOf,
  sortDiagnostics,
  symbolsOf,
} from "./convert.js";
import { type DocumentAction, DocumentStore, type OpenDocument } from "./documents.js";
import { type Place, type PositionSpec, placeOf, toLspPosition } from "./positions.js";
import { type ServerSpec, languageOf, serverEnv } from "./servers.js";
import { ServerSession } from "./session.js";
import { type SpawnServer, spawnInGroup, treeRss } from "./spawn.js";

/** tsls checks every open file after each change (its geterr covers all open buffers): a bound keeps an edit cheap. */
export const MAX_OPEN_DOCUMENTS = 32;
/** SPEC 10's cap: a server that crashes this often within RESTART_WINDOW_MS is left failed, not restarted forever. */
export const MAX_RESTARTS = 3;
export const RESTART_WINDOW_MS = 60_000;
/** Both servers answer initialize in under half a second here; this is for a machine under heavy load, then failed. */
export const INITIALIZE_TIMEOUT_MS = 30_000;
/** A cross-file answer waits this long at most for the server to list the workspace (pyright: 250 ms after the last open). */
export const INDEX_WAIT_MS = 10_000;
/** SPEC 10's default wait_ms. */
export const DEFAULT_DIAGNOSTICS_WAIT_MS = 10_000;

/** A file as the caller read it: root-relative path, its text (SPEC 4 decoded, no BOM) and its file hash. */
export interface DocRef {
  path: string;
  text: string;
  hash: string;
}

export type ClientState =
  | { kind: "idle" }
  | { kind: "starting" }
  | { kind: "ready" }
  | { kind: "crashed"; restarts: number; reason: string }
  | { kind: "failed"; reason: string }
  | { kind: "stopped" };

export function stateText(state: ClientState): string {
  switch (state.kind) {
    case "idle":
      return "not started";
    case "crashed":
      return `crashed (restarts ${state.restarts})`;
    case "failed":
      return `failed: ${state.reason}`;
    default:
      return state.kind;
  }
}

export type DiagnosticsAnswer =
  | { status: "current"; hash: string; diagnostics: DiagnosticItem[] }
  | { status: "unknown"; hash: string; reason: string };

export interface RenameFile extends FileEdits {
  /** The content hash the server computed this file's edits against; null when it read the file itself (not open here). */
  hash: string | null;
}

export interface ClientOptions {
  /** Absolute real path of the workspace root. */
  root: string;
  spawn?: SpawnServer;
  /** The environment servers start from (serverEnv removes what lets the workspace run code); default process.env. */
  env?: NodeJS.ProcessEnv;
  maxOpenDocuments?: number;
  maxRestarts?: number;
  restartWindowMs?: number;
  /** Reads a file the server names but we do not have open; default: from disk, decoded as the file tools do. */
  readFile?: (abs: string) => { text: string; hash: string } | undefined;
}

type ClientEvent = { kind: "doc"; path: string } | { kind: "publish"; path: string } | { kind: "exit" };

function readFromDisk(abs: string): { text: string; hash: string } | undefined {
  try {
    const bytes = readFileSync(abs);
    return { text: decodeText(bytes, abs).text, hash: fileHash(bytes) };
  } catch {
    return undefined;
  }
}

export class LspClient {
  private session?: ServerSession;
  private starting?: Promise<ServerSession>;
  private current: ClientState = { kind: "idle" };
  private readonly docs: DocumentStore;
  private restarts = 0;
  private readonly crashes: number[] = [];
  /** Grows with every change to any file: another file's edit can change this one's diagnostics (imports). */
  private generation = 0;
  private readonly pushed = new Map<string, { version?: number; items: Diagnostic[] }>();
  private readonly pulled = new Map<string, { resultId?: string; items: Diagnostic[] }>();
  private readonly answered = new Map<string, { version: number; generation: number; items: DiagnosticItem[] }>();
  private readonly listeners = new Set<(e: ClientEvent) => void>();
  private readonly readFile: (abs: string) => { text: string; hash: string } | undefined;

  constructor(readonly spec: ServerSpec, private readonly options: ClientOptions) {
    this.docs = new DocumentStore(options.maxOpenDocuments ?? MAX_OPEN_DOCUMENTS);
    this.readFile = options.readFile ?? readFromDisk;
  }

  get state(): ClientState {
    return this.current;
  }

  get pid(): number | undefined {
    return this.session && !this.session.dead ? this.session.pid : undefined;
  }

  /** typescript-language-server's own word on the typescript it runs (`source` "user-setting" is ours). */
  get typescript(): { version: string; source: string } | undefined {
    return this.session?.typescript;
  }

  get version(): string {
    const info = this.session?.serverInfo;
    return info ? `${this.spec.version} (${info.name}${info.version ? ` ${info.version}` : ""})` : this.spec.version;
  }

  /** Root-relative paths of the open documents, least recently used first. */
  openFiles(): string[] {
    return this.docs.paths();
  }

  /** Resident memory of the server and its children (tsserver), in bytes; undefined when not running. */
  rss(): number | undefined {
    return this.pid === undefined ? undefined : treeRss(this.pid);
  }

  /** Starts the server if it is not running (or restarts it after a crash, within the cap). */
  start(): Promise<void> {
    return this.running().then(() => {});
  }

  /**
   * A change from the bus (text null: deleted). An open document gets didChange or didClose; for a file that is not open,
   * a server that asked us to watch files (pyright) gets didChangeWatchedFiles. Never starts a server.
   */
  sync(file: string, text: string | null, hash: string | null, kind?: "created" | "modified" | "deleted"): void {
    this.generation++;
    const wasOpen = this.docs.get(file) !== undefined;
    const actions = this.docs.update(file, text, hash);
    this.send(actions);
    if (actions.length) this.emit({ kind: "doc", path: file });
    const s = this.ready();
    if (s?.watchesFiles && !(wasOpen && text !== null)) {
      const type = text === null || kind === "deleted" ? 3 : kind === "created" ? 1 : 2;
      void s.connection.sendNotification("workspace/didChangeWatchedFiles", { changes: [{ uri: this.uriOf(file), type }] }).catch(() => {});
    }
  }

  /**
   * Diagnostics for exactly this content. "current" only with the server's answer for the version holding `doc.hash`;
   * "unknown" when the server dies, the file changes again, or `waitMs` passes first. Never a fixed wait.
   */
  async diagnostics(doc: DocRef, waitMs = DEFAULT_DIAGNOSTICS_WAIT_MS): Promise<DiagnosticsAnswer> {
    const unknown = (reason: string): DiagnosticsAnswer => ({ status: "unknown", hash: doc.hash, reason });
    let timer: NodeJS.Timeout | undefined;
    const stops: (() => void)[] = [];
    const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`no diagnostics within ${waitMs} ms`), waitMs)));
    try {
      const open = this.openDoc(doc);
      const session = await Promise.race([this.running(), timeout]);
      if (typeof session === "string") return unknown(`${session}: the server is still starting`);
      if (this.docs.get(doc.path)?.version !== open.version) return unknown("the file changed again before its diagnostics came");
      const cached = this.answered.get(doc.path);
      if (cached && cached.version === open.version && cached.generation === this.generation) {
        return { status: "current", hash: doc.hash, diagnostics: cached.items };
      }
      const generation = this.generation;
      const changed = new Promise<string>((resolve) => stops.push(this.on((e) => {
        if (e.kind === "doc" && e.path === doc.path) resolve("the file changed again before its diagnostics came");
      })));
      const died = session.exited.then((reason) => `the server exited (${reason}) before answering`);
      // A death rejects the pending requests before the exit is known: the exit's reason is the answer's.
      const computed = this.compute(session, open, stops).then((items) => ({ items }), (e) => (session.dead ? died : Promise.reject(e)));
      const outcome = await Promise.race([computed, changed, died, timeout]);
      if (typeof outcome === "string") return unknown(outcome);
      if (this.docs.get(doc.path)?.version !== open.version) return unknown("the file changed again before its diagnostics came");
      const items = sortDiagnostics(outcome.items);
      this.answered.set(doc.path, { version: open.version, generation, items });
      return { status: "current", hash: doc.hash, diagnostics: items };
    } catch (e) {
      if (e instanceof ToolError && e.code !== "LSP_UNAVAILABLE") throw e;
      if (e instanceof ToolError && this.current.kind === "failed") throw e;
      return unknown(e instanceof Error ? e.message : String(e));
    } finally {
      clearTimeout(timer);
      for (const stop of stops) stop();
    }
  }

  async hover(doc: DocRef, at: PositionSpec, signal?: AbortSignal): Promise<{ hash: string; text: string; place?: Place }> {
    const { session, open, position } = await this.prepare(doc, at);
    const hover = await this.request<Hover | null>(session, "textDocument/hover", { textDocument: { uri: this.uriOf(open.path) }, position }, signal);
    return { hash: open.hash, text: hoverText(hover), ...(hover?.range ? { place: placeOf(open.path, hover.range, open.lines) } : {}) };
  }

  definition(doc: DocRef, at: PositionSpec, signal?: AbortSignal): Promise<{ hash: string; places: Place[] }> {
    return this.places("textDocument/definition", doc, at, {}, signal);
  }

  implementation(doc: DocRef, at: PositionSpec, signal?: AbortSignal): Promise<{ hash: string; places: Place[] }> {
    return this.places("textDocument/implementation", doc, at, {}, signal, true);
  }

  references(doc: DocRef, at: PositionSpec, signal?: AbortSignal): Promise<{ hash: string; places: Place[] }> {
    return this.places("textDocument/references", doc, at, { context: { includeDeclaration: true } }, signal, true);
  }

  async documentSymbols(doc: DocRef, signal?: AbortSignal): Promise<{ hash: string; symbols: SymbolItem[] }> {
    const { session, open } = await this.prepare(doc);
    const result = await this.request<DocumentSymbol[] | SymbolInformation[] | null>(
      session, "textDocument/documentSymbol", { textDocument: { uri: this.uriOf(open.path) } }, signal);
    return { hash: open.hash, symbols: symbolsOf(result, this.pathOf, this.linesReader(), open.path) };
  }

  /** Workspace symbols matching `query`; tsserver searches the projects of the open files, so open one first. */
  async workspaceSymbols(query: string, signal?: AbortSignal): Promise<SymbolItem[]> {
    const session = await this.running();
    await this.indexed(session, signal);
    const result = await this.request<SymbolInformation[] | WorkspaceSymbol[] | null>(session, "workspace/symbol", { query }, signal);
    return symbolsOf(result, this.pathOf, this.linesReader());
  }

  /**
   * prepareRename, then rename. Every file the edit touches that we did not have open is opened (from disk) and the
   * rename asked again, so each file's edits are about a content hash we know: the write can then refuse a file that
   * changed since. NOT_FOUND when there is nothing to rename there.
   */
  async rename(doc: DocRef, at: PositionSpec, newName: string, signal?: AbortSignal): Promise<{ hash: string; files: RenameFile[]; count: number }> {
    const { session, open, position } = await this.prepare(doc, at);
    await this.indexed(session, signal);
    const where = { textDocument: { uri: this.uriOf(open.path) }, position };
    const provider = session.capabilities.renameProvider;
    if (typeof provider === "object" && provider.prepareProvider) {
      const prepared = await this.request<unknown>(session, "textDocument/prepareRename", where, signal, "NOT_FOUND");
      if (!prepared) throw new ToolError("NOT_FOUND", `Nothing to rename at ${open.path}:${at.line}; point at an identifier.`);
    }
    const ask = async () => normalizeWorkspaceEdit(
      await this.request<WorkspaceEdit | null>(session, "textDocument/rename", { ...where, newName }, signal, "NOT_FOUND"),
      this.pathOf, (p) => this.docs.get(p)?.version);
    let files = await ask();
    const unpinned = files.filter((f) => !this.docs.get(f.path) && !path.isAbsolute(f.path) && languageOf(f.path)?.language === this.spec.language);
    for (const f of unpinned) {
      const read = this.readFile(this.absOf(f.path));
      if (read) this.openDoc({ path: f.path, text: read.text, hash: read.hash }, false);
    }
    if (unpinned.length) files = await ask();
    const pinned = new Map(files.map((f) => [f.path, this.docs.get(f.path)]));
    this.send(this.docs.trim());
    if (files.length === 0) throw new ToolError("NOT_FOUND", `The server found nothing to rename at ${open.path}:${at.line}.`);
    return {
      hash: open.hash,
      files: files.map((f) => ({ ...f, hash: pinned.get(f.path)?.hash ?? null })),
      count: files.reduce((n, f) => n + f.edits.length, 0),
    };
  }

  /** shutdown and exit, then kill what is left: resolves once none of the server's processes is alive. */
  async stop(): Promise<void> {
    this.current = { kind: "stopped" };
    await this.starting?.catch(() => {});
    const session = this.session;
    this.session = undefined;
    if (session) await session.stop();
    this.emit({ kind: "exit" });
  }

  // --- internals ---

  private on(listener: (e: ClientEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: ClientEvent): void {
    for (const listener of [...this.listeners]) listener(e);
  }

  private ready(): ServerSession | undefined {
    return this.current.kind === "ready" && this.session && !this.session.dead ? this.session : undefined;
  }

  private running(): Promise<ServerSession> {
    const ready = this.ready();
    if (ready) return Promise.resolve(ready);
    if (this.starting) return this.starting;
    const state = this.current;
    if (state.kind === "failed" || state.kind === "stopped") {
      return Promise.reject(new ToolError("LSP_UNAVAILABLE", `${this.spec.name} is ${stateText(state)}.`, { language: this.spec.language }));
    }
    if (state.kind === "crashed") {
      const since = Date.now() - (this.options.restartWindowMs ?? RESTART_WINDOW_MS);
      const recent = this.crashes.filter((t) => t >= since).length;
      if (recent > (this.options.maxRestarts ?? MAX_RESTARTS)) {
        this.current = { kind: "failed", reason: `crashed ${recent} times within ${Math.round((Date.now() - since) / 1000)} s; last: ${state.reason}` };
        return this.running();
      }
      this.restarts++;
    }
    this.starting = this.launch().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async launch(): Promise<ServerSession> {
    this.current = { kind: "starting" };
    const env = serverEnv(this.spec, this.options.env ?? process.env, this.options.root);
    const session: ServerSession = new ServerSession(this.spec, this.options.root, this.options.spawn ?? spawnInGroup, env, {
      onExit: (reason) => this.onExit(session, reason),
      onPublish: (params) => this.onPublish(params),
      onDiagnosticsRefresh: () => {},
    });
    this.session = session;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        session.initialize(),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no initialize answer within ${INITIALIZE_TIMEOUT_MS} ms`)), INITIALIZE_TIMEOUT_MS))),
      ]);
    } catch (e) {
      // A dead server fails initialize by the disposed connection; its exit says more.
      const exit = session.dead ? await session.exited : undefined;
      const said = session.lastLog() ? `; it said: ${session.lastLog()}` : "";
      const reason = session.fatal ?? (exit ? `it ${exit} while starting${said}` : `${e instanceof Error ? e.message : String(e)}${said}`);
      const crashed = session.dead && !session.fatal;
      await session.stop();
      if (this.current.kind === "starting") {
        this.current = crashed ? { kind: "crashed", restarts: this.restarts, reason } : { kind: "failed", reason };
      }
      throw new ToolError("LSP_UNAVAILABLE", `${this.spec.name} could not start: ${reason}`, { language: this.spec.language });
    } finally {
      clearTimeout(timer);
    }
    if (this.current.kind !== "starting") {
      await session.stop();
      throw new ToolError("LSP_UNAVAILABLE", `${this.spec.name} is ${stateText(this.current)}.`, { language: this.spec.language });
    }
    this.current = { kind: "ready" };
    for (const doc of this.docs.all()) this.send([{ kind: "open", doc }]);
    return session;
  }

  private onExit(session: ServerSession, reason: string): void {
    if (session !== this.session) return;
    this.pushed.clear();
    this.pulled.clear();
    this.answered.clear();
    if (session.fatal) this.current = { kind: "failed", reason: session.fatal };
    else if (this.current.kind === "ready") {
      this.crashes.push(Date.now());
      this.current = { kind: "crashed", restarts: this.restarts, reason };
    } else if (this.current.kind === "starting") this.crashes.push(Date.now());
    this.emit({ kind: "exit" });
  }

  private onPublish(params: PublishDiagnosticsParams): void {
    const file = this.pathOf(params.uri);
    this.pushed.set(file, { version: params.version, items: params.diagnostics });
    this.emit({ kind: "publish", path: file });
  }

  private send(actions: DocumentAction[]): void {
    for (const a of actions) {
      const p = a.kind === "close" ? a.path : a.doc.path;
      if (a.kind !== "open") {
        this.pushed.delete(p);
        this.pulled.delete(p);
        this.answered.delete(p);
      }
    }
    const s = this.ready();
    if (!s) return; // a starting or restarted server gets every open document when it is up
    for (const a of actions) {
      const sent =
        a.kind === "open"
          ? s.connection.sendNotification("textDocument/didOpen", {
            textDocument: { uri: this.uriOf(a.doc.path), languageId: a.doc.languageId, version: a.doc.version, text: a.doc.text },
          })
          : a.kind === "change"
            ? s.connection.sendNotification("textDocument/didChange", {
              // Full text: the bus hands us whole contents, and both servers reparse the file either way.
              textDocument: { uri: this.uriOf(a.doc.path), version: a.doc.version },
              contentChanges: [{ text: a.doc.text }],
            })
            : s.connection.sendNotification("textDocument/didClose", { textDocument: { uri: this.uriOf(a.path) } });
      sent.catch(() => {}); // a dead server: its exit is handled, and a restart reopens every document
    }
  }

  /** `evict` false: a rename pins every file it touches beyond the limit, trimmed once it has its answer. */
  private openDoc(doc: DocRef, evict = true): OpenDocument {
    const lang = languageOf(doc.path);
    if (!lang || lang.language !== this.spec.language) {
      throw new ToolError("LSP_UNAVAILABLE", `${doc.path} is not a ${this.spec.language} file for ${this.spec.name}.`);
    }
    const actions = this.docs.open(doc.path, lang.languageId, doc.text, doc.hash, evict);
    this.send(actions);
    for (const a of actions) if (a.kind !== "open") this.emit({ kind: "doc", path: a.kind === "close" ? a.path : a.doc.path });
    if (actions.length) this.generation++;
    return this.docs.get(doc.path)!;
  }

  /**
   * Opens the caller's content at once, before any await: a bus change that arrives while the server starts is then
   * newer than the caller's read and wins, instead of the caller's older text overwriting it.
   */
  private async prepare(doc: DocRef, at?: PositionSpec): Promise<{ session: ServerSession; open: OpenDocument; position?: Position }> {
    const open = this.openDoc(doc);
    const position = at ? toLspPosition(open.lines, at, doc.path) : undefined;
    const session = await this.running();
    const now = this.docs.get(doc.path);
    if (now?.version !== open.version) {
      throw new ToolError("HASH_MISMATCH", `${doc.path} changed while the language server started; read it again.`, {
        path: doc.path,
        current_hash: now?.hash ?? null,
      });
    }
    return { session, open, ...(position ? { position } : {}) };
  }

  private async places(method: string, doc: DocRef, at: PositionSpec, extra: object, signal?: AbortSignal, crossFile = false) {
    const { session, open, position } = await this.prepare(doc, at);
    if (crossFile) await this.indexed(session, signal);
    const result = await this.request<Location | Location[] | LocationLink[] | null>(
      session, method, { textDocument: { uri: this.uriOf(open.path) }, position, ...extra }, signal);
    return { hash: open.hash, places: placesOf(result, this.pathOf, this.linesReader()) };
  }

  /** Until the server has listed the workspace (bounded: a server that never says so answers from what it has). */
  private async indexed(session: ServerSession, signal?: AbortSignal): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort = () => {};
    const aborted = new Promise<void>((resolve) => signal?.addEventListener("abort", (onAbort = () => resolve()), { once: true }));
    try {
      await Promise.race([session.indexed, aborted, new Promise<void>((resolve) => (timer = setTimeout(resolve, INDEX_WAIT_MS)))]);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    signal?.throwIfAborted();
  }

  /** One request; a server error is `errorCode` (NOT_FOUND for a rename the server refuses), a dead server LSP_UNAVAILABLE. */
  private async request<R>(session: ServerSession, method: string, params: object, signal?: AbortSignal,
    errorCode: "LSP_UNAVAILABLE" | "NOT_FOUND" = "LSP_UNAVAILABLE"): Promise<R> {
    signal?.throwIfAborted();
    const cancel = new CancellationTokenSource();
    const onAbort = () => cancel.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      return (await session.connection.sendRequest(method, params, cancel.token)) as R;
    } catch (e) {
      signal?.throwIfAborted();
      if (session.dead) {
        throw new ToolError("LSP_UNAVAILABLE", `${this.spec.name} exited while answering; the next call restarts it.`, { language: this.spec.language });
      }
      throw new ToolError(errorCode, `${this.spec.name} could not answer ${method}: ${(e as Error).message}`, { language: this.spec.language });
    } finally {
      signal?.removeEventListener("abort", onAbort);
      cancel.dispose();
    }
  }

  private async compute(session: ServerSession, open: OpenDocument, stops: (() => void)[]): Promise<DiagnosticItem[]> {
    const uri = this.uriOf(open.path);
    if (this.spec.diagnostics === "tsserver") {
      const file = this.absOf(open.path);
      const phases = ["syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync"];
      const answers = await Promise.all(phases.map((phase) => session.connection.sendRequest("workspace/executeCommand",
        { command: "typescript.tsserverRequest", arguments: [phase, { file }] }) as Promise<{ success?: boolean; body?: unknown; message?: string } | null>));
      return answers.flatMap((a, i) => {
        if (!a?.success || !Array.isArray(a.body)) throw new Error(`tsserver did not answer ${phases[i]}${a?.message ? `: ${a.message}` : ""}`);
        return (a.body as TsServerDiagnostic[]).map((d) => fromTsServerDiagnostic(d, open.lines));
      });
    }
    if (this.spec.diagnostics === "pull" || session.canPull) {
      const previous = this.pulled.get(open.path);
      const report = (await session.connection.sendRequest("textDocument/diagnostic",
        { textDocument: { uri }, ...(previous?.resultId ? { previousResultId: previous.resultId } : {}) })) as DocumentDiagnosticReport;
      const items = report.kind === "unchanged" ? previous?.items : report.items;
      if (!items) throw new Error("the server answered 'unchanged' for diagnostics it never sent");
      this.pulled.set(open.path, { resultId: report.resultId, items });
      return items.map((d) => fromLspDiagnostic(d, open.lines));
    }
    // Push: only a publish naming this very version is final.
    return new Promise<DiagnosticItem[]>((resolve) => {
      const check = () => {
        const got = this.pushed.get(open.path);
        if (got && got.version === open.version) resolve(got.items.map((d) => fromLspDiagnostic(d, open.lines)));
      };
      stops.push(this.on((e) => e.kind === "publish" && e.path === open.path && check()));
      check();
    });
  }

  private absOf(file: string): string {
    return path.isAbsolute(file) ? file : path.join(this.options.root, file);
  }

  private uriOf(file: string): string {
    return pathToFileURL(this.absOf(file)).href;
  }

  /** A URI as the tools name it: root-relative inside the root, absolute outside, the URI itself when not a file. */
  private readonly pathOf = (uri: string): string => {
    if (!uri.startsWith("file:")) return uri;
    const abs = fileURLToPath(uri);
    const rel = path.relative(this.options.root, abs);
    return rel.startsWith("..") || path.isAbsolute(rel) ? abs : rel.split(path.sep).join("/");
  };

  /** Lines of files an answer names: ours when open, else read once per answer. */
  private linesReader(): (file: string) => readonly string[] | undefined {
    const read = new Map<string, readonly string[] | undefined>();
    return (file) => {
      const open = this.docs.get(file);
      if (open) return open.lines;
      if (!read.has(file)) {
        const got = this.readFile(this.absOf(file));
        read.set(file, got ? splitText(got.text).lines : undefined);
      }
      return read.get(file);
    };
  }
}
