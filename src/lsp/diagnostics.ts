/**
 * Diagnostics of an exact document version, from whichever source the server offers (see DiagnosticsSource), and what
 * the client remembers of them. The finality rule: an answer counts for version V only if V was the document's version
 * when the question went out and still is when the answer is used.
 * - tsserver: the `*DiagnosticsSync` requests reach tsserver after the `change` that made V (tsls queues a change as a
 *   fence that no request passes), so tsserver answers about V's text exactly.
 * - pull: pyright re-checks until the file's content is stable before it answers; with no change sent since, that is V.
 * - push: a publish naming V. A publish without a version is never final.
 */
import type { Diagnostic, DocumentDiagnosticReport, PublishDiagnosticsParams } from "vscode-languageserver-protocol";
import { type DiagnosticItem, type TsServerDiagnostic, fromLspDiagnostic, fromTsServerDiagnostic, sortDiagnostics } from "./convert.js";
import type { OpenDocument } from "./documents.js";
import type { DiagnosticsSource } from "./servers.js";
import type { ServerSession } from "./session.js";

/** tsserver's three phases, as typescript-language-server publishes them (a suggestion is a hint). */
const TSSERVER_PHASES = ["syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync"];

export class DiagnosticsTracker {
  private readonly pushed = new Map<string, { version?: number; items: Diagnostic[] }>();
  private readonly pulled = new Map<string, { resultId?: string; items: Diagnostic[] }>();
  private readonly answered = new Map<string, { version: number; generation: number; items: DiagnosticItem[] }>();
  private readonly publishListeners = new Set<(path: string) => void>();

  constructor(private readonly source: DiagnosticsSource) {}

  onPublish(path: string, params: PublishDiagnosticsParams): void {
    this.pushed.set(path, { version: params.version, items: params.diagnostics });
    for (const listener of [...this.publishListeners]) listener(path);
  }

  /** A document changed or closed: nothing known about it holds. */
  forget(path: string): void {
    this.pushed.delete(path);
    this.pulled.delete(path);
    this.answered.delete(path);
  }

  /** The server is gone: a new one knows none of this. */
  clear(): void {
    this.pushed.clear();
    this.pulled.clear();
    this.answered.clear();
  }

  /** The last answer for this version, if no file has changed since (another file's edit can change this one's list). */
  cached(doc: OpenDocument, generation: number): DiagnosticItem[] | undefined {
    const got = this.answered.get(doc.path);
    return got && got.version === doc.version && got.generation === generation ? got.items : undefined;
  }

  remember(doc: OpenDocument, generation: number, items: DiagnosticItem[]): DiagnosticItem[] {
    const sorted = sortDiagnostics(items);
    this.answered.set(doc.path, { version: doc.version, generation, items: sorted });
    return sorted;
  }

  /** Asks the server about `doc`; `stops` collects what to undo when the caller stops waiting. */
  async compute(session: ServerSession, doc: OpenDocument, abs: string, uri: string, stops: (() => void)[]): Promise<DiagnosticItem[]> {
    if (this.source === "tsserver") {
      const answers = await Promise.all(
        TSSERVER_PHASES.map(
          (phase) =>
            session.connection.sendRequest("workspace/executeCommand", {
              command: "typescript.tsserverRequest",
              arguments: [phase, { file: abs }],
            }) as Promise<{ success?: boolean; body?: unknown; message?: string } | null>,
        ),
      );
      return answers.flatMap((a, i) => {
        if (!a?.success || !Array.isArray(a.body)) throw new Error(`tsserver did not answer ${TSSERVER_PHASES[i]}${a?.message ? `: ${a.message}` : ""}`);
        return (a.body as TsServerDiagnostic[]).map((d) => fromTsServerDiagnostic(d, doc.lines));
      });
    }
    if (this.source === "pull" || session.canPull) {
      const previous = this.pulled.get(doc.path);
      const report = (await session.connection.sendRequest("textDocument/diagnostic", {
        textDocument: { uri },
        ...(previous?.resultId ? { previousResultId: previous.resultId } : {}),
      })) as DocumentDiagnosticReport;
      const items = report.kind === "unchanged" ? previous?.items : report.items;
      if (!items) throw new Error("the server answered 'unchanged' about diagnostics it never sent");
      this.pulled.set(doc.path, { resultId: report.resultId, items });
      return items.map((d) => fromLspDiagnostic(d, doc.lines));
    }
    return new Promise<DiagnosticItem[]>((resolve) => {
      const check = () => {
        const got = this.pushed.get(doc.path);
        if (got && got.version === doc.version) resolve(got.items.map((d) => fromLspDiagnostic(d, doc.lines)));
      };
      const listener = (path: string) => path === doc.path && check();
      this.publishListeners.add(listener);
      stops.push(() => this.publishListeners.delete(listener));
      check();
    });
  }
}
