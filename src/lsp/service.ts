/**
 * The language servers of the daemon (`ws.lsp`): the pool of clients on the process supervisor (sandboxed where
 * bubblewrap works), kept in sync from the bus, and the disk check every LSP call makes before the server answers.
 *
 * Public API (what the lsp_* tools and `info` call):
 *   new LspService(ws, {sandbox?, specs?, maxOpenDocuments?}); stop()
 *   clientFor(rel): Promise<LspClient>          LSP_UNAVAILABLE for a file no server handles
 *   current(target): Promise<DocRef & {lines}>  the file as the disk has it now (SPEC 4 decoded)
 *   refresh(client): void                       every open document of that server made the disk's
 *   disk(rel): {text, hash} | undefined         a file as the servers are given it, read now
 *   unseenLinks(language): UnseenLink[]        links to what the sandboxed servers cannot see
 *   clients(): LspClient[]; installed(): Language[]; info(): {sandbox, servers}; renames: RenamePlans
 *   warm(paths): Promise<void>                  starts the servers of the root's project files (lsp.state events)
 */
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../errors.js";
import { readText } from "../fs/read-text.js";
import type { ResolvedPath } from "../paths.js";
import type { EventBus } from "../platform/bus.js";
import { childEnv } from "../platform/child-env.js";
import type { Supervisor } from "../platform/supervisor.js";
import type { FsChange } from "../vfs/events.js";
import { DEFAULT_IGNORES, IgnoreRules } from "../vfs/ignore-rules.js";
import { walk } from "../vfs/listing.js";
import { type DocRef, type LspClient, readSource } from "./client.js";
import { type DiagnosticsEvent, DiagnosticsPublisher } from "./publisher.js";
import { RenamePlans } from "./rename-plan.js";
import { type LspSandboxMode, type SandboxProbe, probeLspSandbox } from "./sandbox.js";
import { LanguageServers, type ServerInfo } from "./servers-pool.js";
import { LANGUAGES, type Language, type ServerSpec, languageOf, serverSpec } from "./servers.js";
import { type ServerWrapper, supervisedSpawn } from "./supervised-spawn.js";
import { type LspStateEvent, firstFile, progressOf, projectLanguages } from "./warm.js";

declare module "../platform/bus.js" {
  interface BusEvents {
    "lsp.diagnostics": DiagnosticsEvent;
    "lsp.state": LspStateEvent;
  }
}

/** The warm start's first diagnostics may take this long (a large project loading on a loaded machine). */
const WARM_WAIT_MS = 120_000;

/** What the service needs of the workspace (a narrow view, so tests and benches can build one). */
export interface LspWorkspace {
  root: string;
  maxFileBytes: number;
  processes: Pick<Supervisor, "attach" | "run">;
  bus: EventBus;
  paths: { toRel(abs: string): string };
  log: (message: string) => void;
}

export interface LspServiceOptions {
  sandbox?: LspSandboxMode;
  /** Host folders the sandboxed servers must not see (the daemon's state folder). */
  hide?: readonly string[];
  /** Replaces built-in server specs (tests). */
  specs?: Partial<Record<Language, ServerSpec | { missing: string }>>;
  maxOpenDocuments?: number;
}

type SandboxState = { kind: "unprobed" } | { kind: "on"; version: string; hides: (abs: string) => boolean } | { kind: "off"; reason: string };

/** A link in the root to a place the sandboxed servers cannot see (unseenLinks). */
export interface UnseenLink {
  /** Root-relative. */
  path: string;
  /** Its real path, outside the root. */
  target: string;
}

export class LspService {
  private readonly servers: LanguageServers;
  private readonly publisher: DiagnosticsPublisher;
  private readonly unsubscribe: () => void;
  private wrapper?: ServerWrapper;
  private probing?: Promise<void>;
  private sandbox: SandboxState;
  private readonly configFiles: Set<string>;
  /** The last lsp.state of each language the warm start began (what info shows). */
  private readonly warmState = new Map<Language, LspStateEvent>();
  /** The plans of recent lsp_rename previews, which their approvals apply. */
  readonly renames = new RenamePlans();

  constructor(
    private readonly ws: LspWorkspace,
    private readonly options: LspServiceOptions = {},
  ) {
    const mode = options.sandbox ?? "auto";
    this.sandbox = mode === "off" ? { kind: "off", reason: "--lsp-sandbox off" } : { kind: "unprobed" };
    this.publisher = new DiagnosticsPublisher((e) => ws.bus.emit("lsp.diagnostics", e));
    const spawn = supervisedSpawn(ws.processes);
    this.servers = new LanguageServers(
      {
        root: ws.root,
        // The workspace environment (no GIT_DIR, no prompts); serverEnv then removes what would run workspace code.
        env: childEnv(),
        maxOpenDocuments: options.maxOpenDocuments,
        spawn: (command, args, opts) => {
          if (this.sandbox.kind === "unprobed") throw new Error("a language server was started before the sandbox probe");
          return (this.wrapper ? supervisedSpawn(ws.processes, this.wrapper) : spawn)(command, args, opts);
        },
        readFile: (abs) => this.readDisk(abs),
        log: ws.log,
      },
      options.specs,
      (client) => this.publisher.attach(client),
    );
    this.configFiles = new Set(
      LANGUAGES.flatMap((l) => {
        const spec = options.specs?.[l] ?? serverSpec(l);
        return "missing" in spec ? [] : spec.configFiles;
      }),
    );
    this.unsubscribe = ws.bus.on("fs.changed", ({ changes }) => this.onChanges(changes));
  }

  /** The client for a file's language, once the sandbox question is settled (it decides how servers start). */
  async clientFor(rel: string): Promise<LspClient> {
    const client = this.servers.clientFor(rel);
    await this.probeSandbox();
    return client;
  }

  /** The clients made so far. */
  clients(): LspClient[] {
    return this.servers.existing();
  }

  /** The languages whose server is installed. */
  installed(): Language[] {
    // Not from info(): that measures every running server's memory, a walk of all of /proc.
    return this.servers.installed();
  }

  /** The file as the disk has it now: what an answer must be about (SPEC 10), whatever the bus has said so far. */
  async current(target: ResolvedPath): Promise<DocRef & { lines: string[] }> {
    const file = await readText(target, this.ws.maxFileBytes);
    return { path: target.realRel, text: file.bytes.toString("utf8", file.doc.bom ? 3 : 0), hash: file.hash, lines: file.doc.lines };
  }

  /**
   * Every document this server has open, made the disk's: the bus trails the disk by the watcher's window, and another
   * file's content can change this one's answer (an import's type, a rename's edits).
   */
  refresh(client: LspClient): void {
    for (const doc of client.openDocuments()) {
      const now = this.readDisk(path.join(this.ws.root, doc.path));
      if (!now) client.sync(doc.path, null, null, "deleted");
      else if (now.hash !== doc.hash) client.sync(doc.path, now.text, now.hash, "modified");
    }
  }

  /** A workspace file as the servers are given it (root-relative), read now; undefined when gone or not text. */
  disk(rel: string): { text: string; hash: string } | undefined {
    return this.readDisk(path.join(this.ws.root, rel));
  }

  /**
   * The root's links (to a file of `language`, or to a folder) whose targets the sandboxed servers cannot see: they
   * dangle in there (a link into another folder of /tmp), so that code is in no answer of theirs, a rename's included.
   * None when the servers run unsandboxed: then they read through the link, and name it in their answers.
   */
  async unseenLinks(language: Language): Promise<UnseenLink[]> {
    await this.probeSandbox();
    const sandbox = this.sandbox;
    if (sandbox.kind !== "on") return [];
    const links: string[] = [];
    await walk(this.ws.root, "", new IgnoreRules(DEFAULT_IGNORES), [], undefined, true, links);
    const unseen: UnseenLink[] = [];
    for (const rel of links) {
      const target = await realpath(path.join(this.ws.root, rel)).catch(() => null);
      if (!target || !sandbox.hides(target)) continue; // dangling here too, or seen in there
      const folder = (await stat(target).catch(() => null))?.isDirectory() ?? false;
      if (folder || languageOf(rel)?.language === language) unseen.push({ path: rel, target });
    }
    return unseen;
  }

  info(): { sandbox: string; servers: (ServerInfo & { state: string; warm?: LspStateEvent })[] } {
    const s = this.sandbox;
    const sandbox =
      s.kind === "on"
        ? `on (${s.version}): workspace read-only, no network`
        : s.kind === "off"
          ? `off: ${s.reason}`
          : "not probed yet (on the first server start)";
    return {
      sandbox,
      servers: this.servers.info().map((info) => {
        const warm = this.warmState.get(info.language);
        return warm ? { ...info, ...(warm.state === "indexing" ? { state: "indexing" } : {}), warm } : info;
      }),
    };
  }

  /**
   * Starts the server of each language whose project files are at the root, and opens one of its files (`paths`: the
   * workspace's, root-relative) so the project loads now rather than in the first lsp_* call. Never throws: a server
   * that cannot start says so in its lsp.state and the first call gets the error as ever.
   */
  async warm(paths: () => Iterable<string>): Promise<void> {
    const languages = projectLanguages(this.ws.root).filter((l) => this.installed().includes(l));
    await Promise.all(languages.map((language) => this.warmOne(language, paths)));
  }

  private async warmOne(language: Language, paths: () => Iterable<string>): Promise<void> {
    const client = this.servers.client(language);
    const state = (e: Omit<LspStateEvent, "language" | "server">) => {
      const event: LspStateEvent = { language, server: client.spec.name, ...e };
      this.warmState.set(language, event);
      this.ws.bus.emit("lsp.state", event);
    };
    state({ state: "starting" });
    const unsubscribe = client.on((e) => {
      if (e.kind !== "progress") return;
      const progress = progressOf(e.value);
      if (progress) state({ state: "indexing", progress });
    });
    try {
      await this.probeSandbox();
      await client.start();
      const rel = firstFile(paths(), (p) => languageOf(p)?.language === language);
      const doc = rel === undefined ? undefined : this.disk(rel);
      if (rel !== undefined && doc) {
        const answer = await client.diagnostics({ path: rel, ...doc }, WARM_WAIT_MS);
        if (answer.status === "unknown" && !client.live) throw new Error(answer.reason);
      }
      state({ state: "ready" });
    } catch (e) {
      state({ state: "failed", reason: e instanceof Error ? e.message : String(e) });
    } finally {
      unsubscribe();
    }
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    this.publisher.stop();
    await this.servers.stop();
  }

  private probeSandbox(): Promise<void> {
    if (this.sandbox.kind !== "unprobed") return Promise.resolve();
    this.probing ??= probeLspSandbox(this.ws.processes, this.ws.root, this.options.hide).then((probe: SandboxProbe) => {
      if (probe.available) {
        this.wrapper = probe.wrapper;
        this.sandbox = { kind: "on", version: probe.version, hides: probe.hides };
      } else if (this.options.sandbox === "on") {
        this.probing = undefined; // asked again on the next call: bwrap may be installed meanwhile
        throw new ToolError(
          "LSP_UNAVAILABLE",
          `The language servers must run sandboxed (--lsp-sandbox on), and the sandbox does not work here: ${probe.reason}.`,
        );
      } else {
        this.sandbox = { kind: "off", reason: probe.reason };
      }
    });
    return this.probing;
  }

  /** A file as the servers are given it, within the file tools' size limit. */
  private readDisk(abs: string): { text: string; hash: string } | undefined {
    return readSource(abs, this.ws.maxFileBytes);
  }

  /** Document sync from the bus: the content of an open file as the disk has it now; a delete closes it. */
  private onChanges(changes: readonly FsChange[]): void {
    for (const c of changes) {
      if (!languageOf(c.path) && !this.configFiles.has(path.basename(c.path))) continue;
      if (c.kind === "deleted") {
        this.servers.sync(c.path, null, null, "deleted");
        continue;
      }
      if (!this.servers.isOpen(c.path)) {
        // Not read: no server holds its text, and a checkout of 10,000 files must not be read twice.
        this.servers.sync(c.path, null, c.hash, c.kind);
        continue;
      }
      const now = this.readDisk(path.join(this.ws.root, c.path));
      // Unreadable as text now (binary, too large, gone again): the server must not keep answering about the old text.
      if (now) this.servers.sync(c.path, now.text, now.hash, c.kind);
      else this.servers.sync(c.path, null, null, "deleted");
    }
  }
}
