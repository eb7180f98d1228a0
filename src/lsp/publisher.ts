/**
 * The `lsp.diagnostics` event (SPEC 10): when a file's diagnostics list changes, `{path, hash, diagnostics}`, coalesced;
 * an edit that leaves the list as it was sends none. Nothing polls: every list the servers compute for a version that
 * is still current (a tool call's or ours) is compared with the last one sent for that file; and after a change of a
 * file a server has open (or of any file of its language: an import may change another file's list; or when the server
 * asks for diagnostics again) the open documents are checked again, the changed ones first, once per burst of changes.
 */
import type { ClientEvent, LspClient } from "./client.js";
import { type WireDiagnostic, wireDiagnostics } from "./render.js";

/** A background check waits this long for a version's diagnostics: a cold project takes seconds; past it, nothing is sent. */
export const BACKGROUND_WAIT_MS = 60_000;

export interface DiagnosticsEvent {
  path: string;
  /** The content the list is about; null for a deleted file, whose list is then empty. */
  hash: string | null;
  diagnostics: WireDiagnostic[];
}

export class DiagnosticsPublisher {
  /** Per file, the last list sent (as JSON): the comparison that keeps an unchanged list quiet. */
  private readonly sent = new Map<string, string>();
  /** Per client, the files changed since its last check started (checked first). */
  private readonly dirty = new Map<LspClient, Set<string>>();
  private readonly checking = new Set<LspClient>();
  /** Per client being checked, what wakes its loop when a change comes in meanwhile. */
  private readonly wake = new Map<LspClient, () => void>();
  private stopped = false;

  constructor(
    private readonly emit: (event: DiagnosticsEvent) => void,
    private readonly waitMs = BACKGROUND_WAIT_MS,
  ) {}

  /** Listens to a client: what it computes, and what changes under it. */
  attach(client: LspClient): () => void {
    return client.on((e) => this.onEvent(client, e));
  }

  stop(): void {
    this.stopped = true;
    this.dirty.clear();
  }

  private onEvent(client: LspClient, e: ClientEvent): void {
    switch (e.kind) {
      case "diagnostics":
        this.offer({ path: e.path, hash: e.hash, diagnostics: wireDiagnostics(e.diagnostics, e.lines) });
        return;
      case "doc":
        if (e.change === "deleted") {
          // A deleted file has no problems left; one closed to stay within the bound keeps its last list.
          if (this.sent.has(e.path) && this.sent.get(e.path) !== "[]") this.offer({ path: e.path, hash: null, diagnostics: [] });
          this.sent.delete(e.path);
        } else if (e.change === "closed") {
          this.sent.delete(e.path);
        } else if (e.change === "changed") {
          this.schedule(client, e.path);
        }
        return;
      case "file":
      case "refresh":
        this.schedule(client);
        return;
      case "exit":
      case "progress":
        return;
    }
  }

  private offer(event: DiagnosticsEvent): void {
    const list = JSON.stringify(event.diagnostics);
    if (this.sent.get(event.path) === list) return;
    this.sent.set(event.path, list);
    this.emit(event);
  }

  private schedule(client: LspClient, changed?: string): void {
    if (this.stopped) return;
    let files = this.dirty.get(client);
    if (!files) this.dirty.set(client, (files = new Set()));
    if (changed) files.add(changed);
    if (this.checking.has(client)) {
      this.wake.get(client)?.();
      return;
    }
    this.checking.add(client);
    // After the current burst: one fs.changed batch syncs every file it names before the first check starts.
    setImmediate(() => void this.check(client));
  }

  /** Checks the open documents until no change came in meanwhile; a newer change restarts it, changed files first. */
  private async check(client: LspClient): Promise<void> {
    try {
      while (!this.stopped) {
        const changed = this.dirty.get(client);
        if (!changed) return;
        this.dirty.delete(client);
        // A crashed or failed server is restarted by a call that needs it, never by a background check.
        if (!client.live) return;
        const paths = client.openFiles();
        const order = [...paths.filter((p) => changed.has(p)), ...paths.filter((p) => !changed.has(p))];
        for (const path of order) {
          if (this.dirty.has(client) || this.stopped) break;
          if (!client.live) return;
          // Taken just before asking (diagnostics opens it before any await): an older copy would undo a newer change.
          const doc = client.openDocument(path);
          if (!doc) continue;
          // The answer reaches offer() through the client's diagnostics event; unknown sends nothing. A change meanwhile
          // moves on at once (the question stays asked, its answer still offered): a slow file never holds back a newer one.
          const woken = new Promise<void>((resolve) => this.wake.set(client, resolve));
          await Promise.race([client.diagnostics(doc, this.waitMs).catch(() => undefined), woken]);
          this.wake.delete(client);
        }
      }
    } finally {
      // In the same step as the last look at `dirty`: a change scheduled after it starts a check of its own.
      this.checking.delete(client);
      this.wake.delete(client);
    }
  }
}
