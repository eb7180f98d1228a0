/**
 * A client of one language server: lazily started, restarted after a crash (capped), its documents kept in sync, and every
 * answer about a known content hash. The tools call it with `{path, text, hash}` of the file as they read it; the daemon's
 * bus calls `sync` for every change of any origin.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type {
  DocumentSymbol,
  Hover,
  Location,
  LocationLink,
  Position,
  SymbolInformation,
  WorkspaceEdit,
  WorkspaceSymbol,
} from "vscode-languageserver-protocol";
import { fileHash } from "../core/hash.js";
import { decodeText, splitText } from "../core/text.js";
import { ToolError } from "../errors.js";
import { treeRss } from "../platform/process-tree.js";
import { type DiagnosticItem, type FileEdits, type SymbolItem, hoverText, normalizeWorkspaceEdit, placesOf, sortDiagnostics, symbolsOf } from "./convert.js";
import { DiagnosticsTracker } from "./diagnostics.js";
import { type DocumentAction, DocumentStore, type OpenDocument } from "./documents.js";
import { type Place, type PositionSpec, placeOf, toLspPosition } from "./positions.js";
import { type ClientState, type KeeperOptions, ServerKeeper } from "./keeper.js";
import { request, retrying, untilIndexed } from "./request.js";
import { type ServerSpec, languageOf } from "./servers.js";
import type { ProgressValue, ServerSession } from "./session.js";
import { WorkspacePaths } from "./workspace-paths.js";

/** tsls checks every open file after each change (its geterr covers all open buffers): a bound keeps an edit cheap. */
export const MAX_OPEN_DOCUMENTS = 32;
/** SPEC 10's default wait_ms. */
export const DEFAULT_DIAGNOSTICS_WAIT_MS = 10_000;

/** A file as the caller read it: root-relative path, its text (SPEC 4 decoded, no BOM) and its file hash. */
export interface DocRef {
  path: string;
  text: string;
  hash: string;
}

export type DiagnosticsAnswer = { status: "current"; hash: string; diagnostics: DiagnosticItem[] } | { status: "unknown"; hash: string; reason: string };

export interface RenameFile extends FileEdits {
  /** The content hash the server computed this file's edits against; null when it read the file itself (not open here). */
  hash: string | null;
}

export type { ClientState } from "./keeper.js";
export { stateText } from "./keeper.js";

/**
 * `root`: absolute real path of the workspace; `spawn`: the daemon's supervisor's (default: one of its own); `env`: what servers
 * start from, less what serverEnv removes (default process.env); restarts capped by `maxRestarts` in `restartWindowMs`.
 */
export interface ClientOptions extends KeeperOptions {
  maxOpenDocuments?: number;
  /** Reads a file the server names but we do not have open; default: from disk, decoded as the file tools do. */
  readFile?: (abs: string) => { text: string; hash: string } | undefined;
}

/**
 * What a client tells its listeners: an open document opened, changed, closed (to stay within the bound) or deleted; a
 * file it does not have open changed (another file's diagnostics may follow from it); the server asked for diagnostics
 * again (workspace/diagnostic/refresh); the server gone; diagnostics computed for the version that is still the
 * document's (`hash`, its `lines`), no file having changed meanwhile.
 */
export type ClientEvent =
  | { kind: "doc"; path: string; change: "opened" | "changed" | "closed" | "deleted" }
  | { kind: "file"; path: string }
  | { kind: "refresh" }
  | { kind: "exit" }
  | { kind: "progress"; value: ProgressValue }
  | { kind: "diagnostics"; path: string; hash: string; lines: readonly string[]; diagnostics: DiagnosticItem[] };

/** One diagnostics question in flight, shared by every caller asking about the same version and generation. */
interface Inflight {
  version: number;
  generation: number;
  session: ServerSession;
  promise: Promise<DiagnosticItem[]>;
  stops: (() => void)[];
}

/** A file as the servers are given it: SPEC 4 decoded, within `maxBytes`; undefined when it is gone or not text. */
export function readSource(abs: string, maxBytes = Infinity): { text: string; hash: string } | undefined {
  try {
    const bytes = readFileSync(abs);
    if (bytes.length > maxBytes) return undefined;
    return { text: decodeText(bytes, abs).text, hash: fileHash(bytes) };
  } catch {
    return undefined;
  }
}

export class LspClient {
  private readonly keeper: ServerKeeper;
  private readonly docs: DocumentStore;
  /** Grows with every change to any file: another file's edit can change this one's diagnostics (imports). */
  private generation = 0;
  private readonly diags: DiagnosticsTracker;
  private readonly paths: WorkspacePaths;
  private readonly listeners = new Set<(e: ClientEvent) => void>();
  private readonly inflight = new Map<string, Inflight>();
  private readonly readFile: (abs: string) => { text: string; hash: string } | undefined;

  constructor(
    readonly spec: ServerSpec,
    options: ClientOptions,
  ) {
    this.docs = new DocumentStore(options.maxOpenDocuments ?? MAX_OPEN_DOCUMENTS);
    this.readFile = options.readFile ?? ((abs) => readSource(abs));
    this.diags = new DiagnosticsTracker(spec.diagnostics);
    this.paths = new WorkspacePaths(options.root);
    this.keeper = new ServerKeeper(spec, options, {
      onReady: () => this.send(this.docs.all().map((doc) => ({ kind: "open", doc }))),
      onExit: () => {
        this.diags.clear();
        for (const path of [...this.inflight.keys()]) this.dropInflight(path);
        this.emit({ kind: "exit" });
      },
      onPublish: (params) => this.diags.onPublish(this.paths.pathOf(params.uri), params),
      // pyright says another file's change may have changed these: no cached answer holds, and listeners ask again.
      onDiagnosticsRefresh: () => {
        this.generation++;
        this.emit({ kind: "refresh" });
      },
      onProgress: (value) => this.emit({ kind: "progress", value }),
    });
  }

  get state(): ClientState {
    return this.keeper.state;
  }

  /** Up or starting: a background check may ask it; a dead, crashed or failed one waits for a call to restart it. */
  get live(): boolean {
    const kind = this.keeper.state.kind;
    return kind === "starting" || (kind === "ready" && this.keeper.ready() !== undefined);
  }

  get restarts(): number {
    return this.keeper.restartCount;
  }

  get pid(): number | undefined {
    const s = this.keeper.last();
    return s && !s.dead ? s.pid : undefined;
  }

  /** typescript-language-server's own word on the typescript it runs (`source` "user-setting" is ours). */
  get typescript(): { version: string; source: string } | undefined {
    return this.keeper.last()?.typescript;
  }

  get version(): string {
    const info = this.keeper.last()?.serverInfo;
    return info ? `${this.spec.version} (${info.name}${info.version ? ` ${info.version}` : ""})` : this.spec.version;
  }

  /** Root-relative paths of the open documents, least recently used first. */
  openFiles(): string[] {
    return this.docs.paths();
  }

  /** The open documents as the server has them (path, text, hash, lines), least recently used first. */
  openDocuments(): (DocRef & { lines: readonly string[] })[] {
    return this.docs.all().map((d) => ({ path: d.path, text: d.text, hash: d.hash, lines: d.lines }));
  }

  /** One open document as the server has it. */
  openDocument(file: string): DocRef | undefined {
    const d = this.docs.get(file);
    return d && { path: d.path, text: d.text, hash: d.hash };
  }

  /** A file's lines as the server sees them: the open document's, else the disk's (undefined: unreadable). */
  lines(file: string): readonly string[] | undefined {
    return this.linesReader()(file);
  }

  /** Hears of documents, exits and computed diagnostics; returns the unsubscribe. */
  on(listener: (e: ClientEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resident memory of the server and its children (tsserver), in bytes; undefined when not running. */
  rss(): number | undefined {
    return this.pid === undefined ? undefined : treeRss(this.pid);
  }

  /** Starts the server if it is not running (or restarts it after a crash, within the cap). */
  start(): Promise<void> {
    return this.keeper.running().then(() => {});
  }

  /**
   * A change from the bus (text null: deleted, or not read because no server has the file open; `kind` says which). An
   * open document gets didChange or didClose; for a file that is not open, a server that asked us to watch files
   * (pyright) gets didChangeWatchedFiles. Never starts a server.
   */
  sync(file: string, text: string | null, hash: string | null, kind?: "created" | "modified" | "deleted"): void {
    const wasOpen = this.docs.get(file) !== undefined;
    const actions = this.docs.update(file, text, hash);
    // The server has this content already (a call read the disk before the bus brought it): nothing changed.
    if (wasOpen && actions.length === 0) return;
    this.generation++;
    this.send(actions);
    if (actions.length) this.emit({ kind: "doc", path: file, change: text === null ? "deleted" : "changed" });
    else this.emit({ kind: "file", path: file });
    const s = this.keeper.ready();
    if (s?.watchesFiles && !(wasOpen && text !== null)) {
      const type = kind === "deleted" || (kind === undefined && text === null) ? 3 : kind === "created" ? 1 : 2;
      void s.connection.sendNotification("workspace/didChangeWatchedFiles", { changes: [{ uri: this.paths.uriOf(file), type }] }).catch(() => {});
    }
  }

  /**
   * Diagnostics for exactly this content. "current" only with the server's answer for the version holding `doc.hash`;
   * "unknown" when the server dies, the file changes again, or `waitMs` passes first. Never a fixed wait.
   */
  async diagnostics(doc: DocRef, waitMs = DEFAULT_DIAGNOSTICS_WAIT_MS): Promise<DiagnosticsAnswer> {
    const unknown = (reason: string): DiagnosticsAnswer => ({ status: "unknown", hash: doc.hash, reason });
    const changedAgain = "the file changed again before its diagnostics came";
    const open = this.openDoc(doc);
    let timer: NodeJS.Timeout | undefined;
    const stops: (() => void)[] = [];
    const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`no diagnostics within ${waitMs} ms`), waitMs)));
    try {
      const session = await Promise.race([this.keeper.running(), timeout]);
      if (typeof session === "string") return unknown(`${session}: the server is still starting`);
      if (this.docs.get(doc.path)?.version !== open.version) return unknown(changedAgain);
      const cached = this.diags.cached(open, this.generation);
      if (cached) return { status: "current", hash: doc.hash, diagnostics: cached };
      const changed = new Promise<string>((resolve) => stops.push(this.on((e) => e.kind === "doc" && e.path === doc.path && resolve(changedAgain))));
      const died = session.exited.then((reason) => `the server exited (${reason}) before answering`);
      // A death rejects the pending requests before the exit is known: the exit's reason is the answer's.
      const computed = this.computeOnce(session, open).then(
        (items) => ({ items }),
        (e) => (session.dead ? died : Promise.reject(e)),
      );
      const outcome = await Promise.race([computed, changed, died, timeout]);
      if (typeof outcome === "string") return unknown(outcome);
      if (this.docs.get(doc.path)?.version !== open.version) return unknown(changedAgain);
      return { status: "current", hash: doc.hash, diagnostics: outcome.items };
    } catch (e) {
      // A failed server is LSP_UNAVAILABLE; one that broke while answering leaves this version unknown.
      if (e instanceof ToolError && (e.code !== "LSP_UNAVAILABLE" || this.keeper.state.kind === "failed")) throw e;
      return unknown(e instanceof Error ? e.message : String(e));
    } finally {
      clearTimeout(timer);
      for (const stop of stops) stop();
    }
  }

  hover(doc: DocRef, at: PositionSpec, signal?: AbortSignal): Promise<{ hash: string; text: string; place?: Place }> {
    return retrying(async () => {
      const { session, open, position } = await this.prepare(doc, at);
      const hover = await request<Hover | null>(session, "textDocument/hover", { textDocument: { uri: this.paths.uriOf(open.path) }, position }, signal);
      return { hash: open.hash, text: hoverText(hover), ...(hover?.range ? { place: placeOf(open.path, hover.range, open.lines) } : {}) };
    });
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

  documentSymbols(doc: DocRef, signal?: AbortSignal): Promise<{ hash: string; symbols: SymbolItem[] }> {
    return retrying(async () => {
      const { session, open } = await this.prepare(doc);
      const result = await request<DocumentSymbol[] | SymbolInformation[] | null>(
        session,
        "textDocument/documentSymbol",
        { textDocument: { uri: this.paths.uriOf(open.path) } },
        signal,
      );
      return { hash: open.hash, symbols: symbolsOf(result, this.paths.pathOf, this.linesReader(), open.path) };
    });
  }

  /** Workspace symbols matching `query`; tsserver searches the projects of the open files, so open one first. */
  workspaceSymbols(query: string, signal?: AbortSignal): Promise<SymbolItem[]> {
    return retrying(async () => {
      const session = await this.keeper.running();
      await untilIndexed(session, signal);
      const result = await request<SymbolInformation[] | WorkspaceSymbol[] | null>(session, "workspace/symbol", { query }, signal);
      return symbolsOf(result, this.paths.pathOf, this.linesReader());
    });
  }

  /**
   * prepareRename, then rename. Every file the edit touches that we did not have open is opened (from disk) and the
   * rename asked again, so each file's edits are about a content hash we know: the write can then refuse a file that
   * changed since. NOT_FOUND when there is nothing to rename there.
   */
  rename(doc: DocRef, at: PositionSpec, newName: string, signal?: AbortSignal): Promise<{ hash: string; files: RenameFile[]; count: number }> {
    return retrying(() => this.renameOnce(doc, at, newName, signal));
  }

  private async renameOnce(
    doc: DocRef,
    at: PositionSpec,
    newName: string,
    signal?: AbortSignal,
  ): Promise<{ hash: string; files: RenameFile[]; count: number }> {
    const { session, open, position } = await this.prepare(doc, at);
    await untilIndexed(session, signal);
    const where = { textDocument: { uri: this.paths.uriOf(open.path) }, position };
    const provider = session.capabilities.renameProvider;
    if (typeof provider === "object" && provider.prepareProvider) {
      const prepared = await request<unknown>(session, "textDocument/prepareRename", where, signal, "NOT_FOUND");
      if (!prepared) throw new ToolError("NOT_FOUND", `Nothing to rename at ${open.path}:${at.line}; point at an identifier.`);
    }
    const ask = async () => {
      // What each open document was when the question went out: its edits are about that content, if it is still so.
      const sent = new Map(this.docs.all().map((d) => [d.path, d]));
      const files = normalizeWorkspaceEdit(
        await request<WorkspaceEdit | null>(session, "textDocument/rename", { ...where, newName }, signal, "NOT_FOUND"),
        this.paths.pathOf,
        (p) => sent.get(p)?.version,
      );
      return files.map((f): RenameFile => {
        const was = sent.get(f.path);
        if (was && this.docs.get(f.path)?.version !== was.version) {
          throw new ToolError("HASH_MISMATCH", `${f.path} changed while the language server computed the rename; run it again.`, { path: f.path });
        }
        return { ...f, hash: was?.hash ?? null };
      });
    };
    let files = await ask();
    const unpinned = files.filter((f) => f.hash === null && !path.isAbsolute(f.path) && languageOf(f.path)?.language === this.spec.language);
    for (const f of unpinned) {
      const read = this.readFile(this.paths.absOf(f.path));
      if (read) this.openDoc({ path: f.path, text: read.text, hash: read.hash }, false);
    }
    try {
      if (unpinned.length) files = await ask();
    } finally {
      this.apply(this.docs.trim());
    }
    if (files.length === 0) throw new ToolError("NOT_FOUND", `The server found nothing to rename at ${open.path}:${at.line}.`);
    return { hash: open.hash, files, count: files.reduce((n, f) => n + f.edits.length, 0) };
  }

  /** shutdown and exit, then kill what is left: resolves once none of the server's processes is alive. */
  async stop(): Promise<void> {
    await this.keeper.stop();
    this.emit({ kind: "exit" });
  }

  // --- internals ---

  /**
   * The server's diagnostics of this version, asked once however many callers wait (a tool call and the lsp.diagnostics
   * publisher): remembered for the version and generation of the question, and told to listeners while still current.
   */
  private computeOnce(session: ServerSession, open: OpenDocument): Promise<DiagnosticItem[]> {
    const generation = this.generation;
    const known = this.inflight.get(open.path);
    if (known && known.version === open.version && known.generation === generation && known.session === session) return known.promise;
    this.dropInflight(open.path);
    const stops: (() => void)[] = [];
    const promise = this.diags.compute(session, open, this.paths.absOf(open.path), this.paths.uriOf(open.path), stops).then((items) => {
      // A late answer about a version the document no longer has is the waiting caller's to refuse, never remembered.
      if (this.docs.get(open.path)?.version !== open.version) return sortDiagnostics(items);
      const sorted = this.diags.remember(open, generation, items);
      if (this.generation === generation) this.emit({ kind: "diagnostics", path: open.path, hash: open.hash, lines: open.lines, diagnostics: sorted });
      return sorted;
    });
    const entry: Inflight = { version: open.version, generation, session, promise, stops };
    this.inflight.set(open.path, entry);
    const done = () => {
      if (this.inflight.get(open.path) === entry) this.dropInflight(open.path);
    };
    promise.then(done, done);
    return promise;
  }

  private dropInflight(path: string): void {
    const entry = this.inflight.get(path);
    if (!entry) return;
    this.inflight.delete(path);
    for (const stop of entry.stops) stop();
  }

  private emit(e: ClientEvent): void {
    for (const listener of [...this.listeners]) listener(e);
  }

  private send(actions: DocumentAction[]): void {
    for (const a of actions) {
      const p = a.kind === "close" ? a.path : a.doc.path;
      if (a.kind !== "open") {
        this.diags.forget(p);
        this.dropInflight(p);
      }
    }
    const s = this.keeper.ready();
    if (!s) return; // a starting or restarted server gets every open document when it is up
    for (const a of actions) {
      const sent =
        a.kind === "open"
          ? s.connection.sendNotification("textDocument/didOpen", {
              textDocument: { uri: this.paths.uriOf(a.doc.path), languageId: a.doc.languageId, version: a.doc.version, text: a.doc.text },
            })
          : a.kind === "change"
            ? s.connection.sendNotification("textDocument/didChange", {
                // Full text: the bus hands us whole contents, and both servers reparse the file either way.
                textDocument: { uri: this.paths.uriOf(a.doc.path), version: a.doc.version },
                contentChanges: [{ text: a.doc.text }],
              })
            : s.connection.sendNotification("textDocument/didClose", { textDocument: { uri: this.paths.uriOf(a.path) } });
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
    this.apply(actions);
    return this.docs.get(doc.path)!;
  }

  /** Tells the server and the listeners of what the caller's reads opened, changed and closed. */
  private apply(actions: DocumentAction[]): void {
    if (!actions.length) return;
    this.generation++;
    this.send(actions);
    for (const a of actions) {
      this.emit(
        a.kind === "close"
          ? { kind: "doc", path: a.path, change: "closed" }
          : { kind: "doc", path: a.doc.path, change: a.kind === "open" ? "opened" : "changed" },
      );
    }
  }

  /**
   * Opens the caller's content at once, before any await: a bus change that arrives while the server starts is then
   * newer than the caller's read and wins, instead of the caller's older text overwriting it.
   */
  private async prepare(doc: DocRef, at?: PositionSpec): Promise<{ session: ServerSession; open: OpenDocument; position?: Position }> {
    const open = this.openDoc(doc);
    const position = at ? toLspPosition(open.lines, at, doc.path) : undefined;
    const session = await this.keeper.running();
    const now = this.docs.get(doc.path);
    if (now?.version !== open.version) {
      throw new ToolError("HASH_MISMATCH", `${doc.path} changed while the language server started; read it again.`, {
        path: doc.path,
        current_hash: now?.hash ?? null,
      });
    }
    return { session, open, ...(position ? { position } : {}) };
  }

  private places(method: string, doc: DocRef, at: PositionSpec, extra: object, signal?: AbortSignal, crossFile = false) {
    return retrying(async () => {
      const { session, open, position } = await this.prepare(doc, at);
      if (crossFile) await untilIndexed(session, signal);
      const result = await request<Location | Location[] | LocationLink[] | null>(
        session,
        method,
        { textDocument: { uri: this.paths.uriOf(open.path) }, position, ...extra },
        signal,
      );
      return { hash: open.hash, places: placesOf(result, this.paths.pathOf, this.linesReader()) };
    });
  }

  /** Lines of files an answer names: ours when open, else read once per answer. */
  private linesReader(): (file: string) => readonly string[] | undefined {
    const read = new Map<string, readonly string[] | undefined>();
    return (file) => {
      const open = this.docs.get(file);
      if (open) return open.lines;
      if (!read.has(file)) {
        const got = this.readFile(this.paths.absOf(file));
        read.set(file, got ? splitText(got.text).lines : undefined);
      }
      return read.get(file);
    };
  }
}
