import type { FileIndexView } from "./types.js";

export interface IndexEntry {
  size?: number;
  mtimeMs?: number;
  /** undefined: not computed yet (hashes are lazy); null: above HASH_MAX_BYTES. */
  hash?: string | null;
}

const EMPTY: ReadonlySet<string> = new Set();

export function parentOf(rel: string): string {
  const cut = rel.lastIndexOf("/");
  return cut < 0 ? "" : rel.slice(0, cut);
}

/** Every watched file by root-relative path, kept right by the event pipeline; find_file reads it through FileIndexView. */
export class FileIndex implements FileIndexView {
  private readonly entries = new Map<string, IndexEntry>();
  /** Paths by parent folder, so a folder's files are found without a scan of the whole index. */
  private readonly byDir = new Map<string, Set<string>>();
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
    if (!this.entries.has(rel)) {
      this.gen++;
      const dir = parentOf(rel);
      let set = this.byDir.get(dir);
      if (!set) this.byDir.set(dir, (set = new Set()));
      set.add(rel);
    }
    this.entries.set(rel, entry);
  }

  delete(rel: string): boolean {
    const had = this.entries.delete(rel);
    if (had) {
      this.gen++;
      const dir = parentOf(rel);
      const set = this.byDir.get(dir);
      set?.delete(rel);
      if (set?.size === 0) this.byDir.delete(dir);
    }
    return had;
  }

  /** Files directly in folder `dir` ("" for the root). */
  children(dir: string): ReadonlySet<string> {
    return this.byDir.get(dir) ?? EMPTY;
  }

  /** Paths under folder `dir` (root-relative, no trailing slash), at any depth; walks folders, not files. */
  under(dir: string): string[] {
    const prefix = `${dir}/`;
    const out: string[] = [];
    for (const [d, set] of this.byDir) if (d === dir || d.startsWith(prefix)) out.push(...set);
    return out;
  }

  /** Folders holding watched files: a stand-in for watched folders with engines that do not say. */
  folderCount(): number {
    return this.byDir.size;
  }
}
