/**
 * The language servers of one workspace: a client per language, made on first need (a client starts its process only
 * when a call needs it), chosen by a file's extension. What the `lsp_*` tools and `info` call.
 */
import path from "node:path";
import { ToolError } from "../errors.js";
import { type ClientOptions, LspClient, stateText } from "./client.js";
import { LANGUAGES, type Language, type ServerSpec, languageOf, serverSpec } from "./servers.js";

export interface ServerInfo {
  language: Language;
  /** SPEC 10: `not installed | not started | starting | ready | crashed (restarts N) | failed: reason`. */
  state: string;
  version: string | null;
  pid: number | null;
  /** Restarts after crashes (capped; see keeper.ts). */
  restarts: number;
  /** Resident memory of the server and its children (tsserver), bytes; null when not running. */
  memory_bytes: number | null;
  open: string[];
}

export class LanguageServers {
  private readonly clients = new Map<Language, LspClient>();
  private readonly specs = new Map<Language, ServerSpec | { missing: string }>();
  private stopped = false;

  /**
   * `specs` replaces the built-in specs (tests: a spec that is missing or that cannot start); `created` hears of each
   * client as it is made (the lsp.diagnostics publisher subscribes to it).
   */
  constructor(
    private readonly options: ClientOptions,
    specs: Partial<Record<Language, ServerSpec | { missing: string }>> = {},
    private readonly created: (client: LspClient) => void = () => {},
  ) {
    for (const language of LANGUAGES) this.specs.set(language, specs[language] ?? serverSpec(language));
  }

  /** The client for a file's language; LSP_UNAVAILABLE when no server handles it or its server is not installed. */
  clientFor(file: string): LspClient {
    const lang = languageOf(file);
    if (!lang) {
      throw new ToolError("LSP_UNAVAILABLE", `No language server handles ${file}: they cover .ts .tsx .js .jsx .mts .cts and .py .pyi files.`, { path: file });
    }
    return this.client(lang.language);
  }

  client(language: Language): LspClient {
    if (this.stopped) throw new ToolError("LSP_UNAVAILABLE", "The language servers are shut down.");
    const existing = this.clients.get(language);
    if (existing) return existing;
    const spec = this.specs.get(language)!;
    if ("missing" in spec) {
      throw new ToolError("LSP_UNAVAILABLE", `The ${language} language server is not installed (${spec.missing}); run npm ci.`, { language });
    }
    const client = new LspClient(spec, this.options);
    this.clients.set(language, client);
    this.created(client);
    return client;
  }

  /** The clients made so far (a client exists once a call needed its language). */
  existing(): LspClient[] {
    return [...this.clients.values()];
  }

  /** Whether any server has this file open (then a change of it must reach that server with its content). */
  isOpen(file: string): boolean {
    for (const client of this.clients.values()) if (client.openDocument(file)) return true;
    return false;
  }

  /** A change from the bus, to the client of its language if that client exists; never starts one. */
  sync(file: string, text: string | null, hash: string | null, kind?: "created" | "modified" | "deleted"): void {
    const lang = languageOf(file);
    const name = path.basename(file);
    for (const [language, client] of this.clients) {
      if (lang?.language === language || client.spec.configFiles.includes(name)) client.sync(file, text, hash, kind);
    }
  }

  /** The languages whose server is installed. */
  installed(): Language[] {
    return LANGUAGES.filter((language) => !("missing" in this.specs.get(language)!));
  }

  info(): ServerInfo[] {
    return LANGUAGES.map((language) => {
      const spec = this.specs.get(language)!;
      const client = this.clients.get(language);
      if ("missing" in spec) return { language, state: "not installed", version: null, pid: null, restarts: 0, memory_bytes: null, open: [] };
      return {
        language,
        state: client ? stateText(client.state) : "not started",
        version: client?.version ?? spec.version,
        pid: client?.pid ?? null,
        restarts: client?.restarts ?? 0,
        memory_bytes: client?.rss() ?? null,
        open: client?.openFiles() ?? [],
      };
    });
  }

  /** Stops every server; resolves when none of their processes is alive. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.clients.values()].map((c) => c.stop()));
  }
}
