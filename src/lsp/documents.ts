/**
 * The documents one server has open, as the client wants them (pure: no IO). Every sync gives a document a new version
 * from one counter per client, so a version never repeats, not even across a close and reopen: a late answer about an
 * old version can never be taken for a new one. A restarted server is given the same versions: it never saw the old ones.
 */
import { splitText } from "../core/text.js";

export interface OpenDocument {
  path: string;
  languageId: string;
  version: number;
  text: string;
  hash: string;
  /** The text's lines (SPEC 4), for positions and places. */
  lines: string[];
}

/** What the client must tell the server for one sync, in this order. */
export type DocumentAction = { kind: "open"; doc: OpenDocument } | { kind: "change"; doc: OpenDocument } | { kind: "close"; path: string };

export class DocumentStore {
  /** Insertion order is recency: a touched document is moved to the end, so the first is the least recently used. */
  private readonly docs = new Map<string, OpenDocument>();
  private nextVersion = 1;

  constructor(private readonly maxOpen: number) {
    if (maxOpen < 1) throw new Error("maxOpen must be at least 1");
  }

  get(path: string): OpenDocument | undefined {
    return this.docs.get(path);
  }

  paths(): string[] {
    return [...this.docs.keys()];
  }

  all(): OpenDocument[] {
    return [...this.docs.values()];
  }

  get size(): number {
    return this.docs.size;
  }

  /**
   * Makes `path` open at this content: nothing when it already is (only its recency changes), a change when it is open
   * with other content, an open (after closing the least recently used beyond the limit) when it is not open.
   */
  open(path: string, languageId: string, text: string, hash: string, evict = true): DocumentAction[] {
    const current = this.docs.get(path);
    if (current) {
      this.touch(path, current);
      if (current.hash === hash && current.text === text) return [];
      return [{ kind: "change", doc: this.replace(current, text, hash) }];
    }
    const actions: DocumentAction[] = [];
    while (evict && this.docs.size >= this.maxOpen) {
      const oldest = this.docs.keys().next().value as string;
      this.docs.delete(oldest);
      actions.push({ kind: "close", path: oldest });
    }
    const doc: OpenDocument = { path, languageId, version: this.nextVersion++, text, hash, lines: splitText(text).lines };
    this.docs.set(path, doc);
    actions.push({ kind: "open", doc });
    return actions;
  }

  /** A change from the bus: a change for an open document, a close for a deleted one; nothing for a file that is not open. */
  update(path: string, text: string | null, hash: string | null): DocumentAction[] {
    const current = this.docs.get(path);
    if (!current) return [];
    if (text === null) {
      this.docs.delete(path);
      return [{ kind: "close", path }];
    }
    if (current.hash === hash && current.text === text) return [];
    return [{ kind: "change", doc: this.replace(current, text, hash ?? current.hash) }];
  }

  /** Beyond the limit (a rename pins every file it touches), closes the least recently used until within it. */
  trim(): DocumentAction[] {
    const actions: DocumentAction[] = [];
    while (this.docs.size > this.maxOpen) {
      const oldest = this.docs.keys().next().value as string;
      this.docs.delete(oldest);
      actions.push({ kind: "close", path: oldest });
    }
    return actions;
  }

  private replace(current: OpenDocument, text: string, hash: string): OpenDocument {
    const doc: OpenDocument = { ...current, version: this.nextVersion++, text, hash, lines: splitText(text).lines };
    this.docs.set(current.path, doc);
    return doc;
  }

  private touch(path: string, doc: OpenDocument): void {
    this.docs.delete(path);
    this.docs.set(path, doc);
  }
}
