import type { FileIndexView } from "../workspace.js";

export interface IndexEntry {
  size?: number;
  mtimeMs?: number;
  /** undefined: not computed yet (hashes are lazy); null: above HASH_MAX_BYTES. */
  hash?: string | null;
}

/** Every watched file by root-relative path, kept right by the event pipeline; find_file reads it through FileIndexView. */
export class FileIndex implements FileIndexView {
  private readonly entries = new Map<string, IndexEntry>();
  private gen = 0;
  private cached?: { gen: number; paths: readonly string[] };

  get generation(): number {
    return this.gen;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Cached per generation: find_file may call this on every keystroke. */
  paths(): readonly string[] {
    if (this.cached?.gen !== this.gen) this.cached = { gen: this.gen, paths: Object.freeze([...this.entries.keys()]) };
    return this.cached.paths;
  }

  get(rel: string): IndexEntry | undefined {
    return this.entries.get(rel);
  }

  has(rel: string): boolean {
    return this.entries.has(rel);
  }

  set(rel: string, entry: IndexEntry): void {
    if (!this.entries.has(rel)) this.gen++;
    this.entries.set(rel, entry);
  }

  delete(rel: string): boolean {
    const had = this.entries.delete(rel);
    if (had) this.gen++;
    return had;
  }

  /** Paths under folder `dir` (root-relative, no trailing slash). */
  under(dir: string): string[] {
    const prefix = `${dir}/`;
    const out: string[] = [];
    for (const rel of this.entries.keys()) if (rel.startsWith(prefix)) out.push(rel);
    return out;
  }

  /** Distinct folders holding watched files (the root included): a stand-in for watched folders with engines that do not say. */
  folderCount(): number {
    const dirs = new Set<string>([""]);
    for (const rel of this.entries.keys()) {
      const cut = rel.lastIndexOf("/");
      if (cut > 0) dirs.add(rel.slice(0, cut));
    }
    return dirs.size;
  }
}
