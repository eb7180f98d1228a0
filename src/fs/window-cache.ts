import type { RenderedWindow } from "../core/line-tags.js";

/** Windows kept at most, and the file bytes they hold at most; files over WINDOW_CACHE_MAX_FILE_BYTES are not kept. */
export const WINDOW_CACHE_MAX_ENTRIES = 64;
export const WINDOW_CACHE_MAX_BYTES = 4 * 1024 * 1024;
export const WINDOW_CACHE_MAX_FILE_BYTES = 256 * 1024;

/** A file_read answer for one window of one path, with the bytes it was rendered from. */
export interface CachedWindow {
  readonly bytes: Buffer;
  readonly hash: string;
  /** The answer as file_read gave it (`text` a RenderedWindow); never changed, handed out as a copy. */
  readonly result: Readonly<Record<string, unknown>> & { readonly text: RenderedWindow };
}

/**
 * file_read's rendered windows, by path and window, for the next read of the same bytes. Nothing here is trusted to
 * say the file is unchanged: every read still opens and reads the file, and an entry is used only when the bytes just
 * read equal, byte for byte, the bytes it was rendered from (the answer is a function of those bytes, the path and the
 * window). So a write the watcher or stat cannot see (the same size and mtime, a shared mmap) still shows at once; what
 * is saved is the hash, the line split, the tags and the JSON text (the transports keep one literal per window).
 */
export class WindowCache {
  private readonly entries = new Map<string, CachedWindow>();
  private bytes = 0;

  static key(rel: string, offset: number, limit: number): string {
    return `${offset}:${limit}:${rel}`;
  }

  /** The entry under `key` if it was rendered from exactly `bytes`; one rendered from other bytes is dropped. */
  get(key: string, bytes: Buffer): CachedWindow | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (!entry.bytes.equals(bytes)) {
      this.bytes -= entry.bytes.length;
      return undefined;
    }
    this.entries.set(key, entry); // the most recently used last
    return entry;
  }

  put(key: string, entry: CachedWindow): void {
    if (entry.bytes.length > WINDOW_CACHE_MAX_FILE_BYTES) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes.length;
    }
    this.entries.set(key, entry);
    this.bytes += entry.bytes.length;
    for (const [k, e] of this.entries) {
      if (this.entries.size <= WINDOW_CACHE_MAX_ENTRIES && this.bytes <= WINDOW_CACHE_MAX_BYTES) break;
      this.entries.delete(k);
      this.bytes -= e.bytes.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
