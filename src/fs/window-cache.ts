import type { LineTags, RenderedWindow } from "../core/line-tags.js";
import type { KnownBytes } from "./read-text.js";

/** Windows kept at most, and the file bytes they hold at most; files over WINDOW_CACHE_MAX_FILE_BYTES are not kept. */
export const WINDOW_CACHE_MAX_ENTRIES = 64;
export const WINDOW_CACHE_MAX_BYTES = 4 * 1024 * 1024;
export const WINDOW_CACHE_MAX_FILE_BYTES = 256 * 1024;
/** What a line's offsets and tag cost FileFactsCache besides the file's bytes (two numbers and a tag), for its bound. */
const BYTES_PER_LINE = 24;

/** A file_read answer for one window of one path, with the bytes it was rendered from. */
export interface CachedWindow {
  readonly bytes: Buffer;
  readonly hash: string;
  /** The answer as file_read gave it (`text` a RenderedWindow); never changed, handed out as a copy. */
  readonly result: Readonly<Record<string, unknown>> & { readonly text: RenderedWindow };
}

/** What file_read knows of a file's bytes, all of it a function of them: its hash, its lines, their tags once computed. */
export interface FileFacts {
  readonly bytes: Buffer;
  readonly hash: string;
  /** LineTags of `bytes`, checked to be UTF-8 text (textLines): its tags are computed once each and kept. */
  readonly lines: LineTags;
}

/**
 * An LRU of values rendered from a file's bytes, each used only for bytes equal, byte for byte, to the ones it was made
 * from: nothing here is trusted to say a file is unchanged. Bounded by entries, by `cost` in total, and per file.
 */
class BytesLru<T extends { readonly bytes: Buffer }> {
  private readonly entries = new Map<string, T>();
  private total = 0;

  constructor(private readonly cost: (entry: T) => number) {}

  /**
   * The entry under `key` if it was made from exactly `bytes`; one made from other bytes is dropped. The same Buffer
   * (one a FileFactsCache hit handed out) is equal without a compare.
   */
  get(key: string, bytes: Buffer): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.bytes !== bytes && !entry.bytes.equals(bytes)) {
      this.total -= this.cost(entry);
      return undefined;
    }
    this.entries.set(key, entry); // the most recently used last
    return entry;
  }

  /** The entry under `key`, its bytes not compared: only for readBytes' known bytes, which it compares itself. */
  protected peek(key: string): T | undefined {
    return this.entries.get(key);
  }

  put(key: string, entry: T): void {
    if (entry.bytes.length > WINDOW_CACHE_MAX_FILE_BYTES) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.total -= this.cost(old);
    }
    this.entries.set(key, entry);
    this.total += this.cost(entry);
    for (const [k, e] of this.entries) {
      if (this.entries.size <= WINDOW_CACHE_MAX_ENTRIES && this.total <= WINDOW_CACHE_MAX_BYTES) break;
      this.entries.delete(k);
      this.total -= this.cost(e);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * file_read's rendered windows, by path and window, for the next read of the same bytes. Every read still opens and
 * reads the file, and an entry is used only when the bytes just read equal, byte for byte, the bytes it was rendered
 * from (the answer is a function of those bytes, the path and the window). So a write the watcher or stat cannot see
 * (the same size and mtime, a shared mmap) still shows at once; what is saved is the hash, the line split, the tags and
 * the JSON text (the transports keep one literal per window).
 */
export class WindowCache extends BytesLru<CachedWindow> {
  constructor() {
    super((entry) => entry.bytes.length);
  }

  static key(rel: string, offset: number, limit: number): string {
    return `${offset}:${limit}:${rel}`;
  }
}

/**
 * file_read's facts of a file, by its real path, for the next read of equal bytes, whichever window or mode it asks
 * for: another window of an unchanged file skips the hash, the UTF-8 check and the line split, and renders only its
 * own lines (their tags once each). Used only for bytes equal to the ones the facts were made from, as WindowCache.
 */
export class FileFactsCache extends BytesLru<FileFacts> {
  constructor() {
    super((facts) => facts.bytes.length + BYTES_PER_LINE * facts.lines.length);
  }

  /** The read buffer known() hands out, grown to the largest file kept (the reads using it are synchronous). */
  private scratch = Buffer.alloc(0);

  /**
   * For readBytes: the bytes kept for `key`, untested, with a buffer to read the file into and compare (read-text.ts's
   * KnownBytes); undefined when nothing is kept. The result of the read is still tested by get().
   */
  known(key: string): KnownBytes | undefined {
    const bytes = this.peek(key)?.bytes;
    if (!bytes) return undefined;
    if (this.scratch.length < bytes.length) this.scratch = Buffer.allocUnsafe(Math.max(bytes.length, 64 * 1024));
    return { bytes, scratch: this.scratch };
  }

  /** The facts of exactly `bytes`; from their first reuse on, their tags are kept as computed (LineTags.rememberTags). */
  override get(key: string, bytes: Buffer): FileFacts | undefined {
    const facts = super.get(key, bytes);
    facts?.lines.rememberTags();
    return facts;
  }
}
