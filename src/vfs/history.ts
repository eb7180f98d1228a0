/** Versions sessions saw, by file hash, so a later call can be answered with a diff instead of a whole file. */
export const DEFAULT_HISTORY_BYTES = 64 * 1024 * 1024;

/** An LRU of file contents bounded by total bytes (a Map iterates in insertion order, so the first key is the oldest). */
export class ContentHistory {
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly maxBytes = DEFAULT_HISTORY_BYTES) {}

  put(hash: string, content: Buffer): void {
    if (content.length > this.maxBytes) return;
    const old = this.entries.get(hash);
    if (old) {
      this.entries.delete(hash);
      this.entries.set(hash, old);
      return;
    }
    this.entries.set(hash, content);
    this.bytes += content.length;
    for (const [key, value] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(key);
      this.bytes -= value.length;
    }
  }

  get(hash: string): Buffer | undefined {
    const content = this.entries.get(hash);
    if (content) {
      this.entries.delete(hash);
      this.entries.set(hash, content);
    }
    return content;
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}
