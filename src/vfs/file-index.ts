import type { FileIndexView, IndexChange } from "./types.js";

/** Adds and removes kept for changesSince: a find_file matcher catches up on these instead of being rebuilt. */
const JOURNAL_MAX = 50_000;

export interface IndexEntry {
  size?: number;
  mtimeMs?: number;
  /** undefined: not computed yet (hashes are lazy); null: above HASH_MAX_BYTES. */
  hash?: string | null;
}

const EMPTY: ReadonlySet<string> = new Set();
/**
 * The entry of every file nothing is known of yet (all of them, after the first listing), shared: an object of its own
 * per file was 56 bytes of the index's ~210 a file. Entries are replaced by set(), never changed in place.
 */
const UNKNOWN: IndexEntry = Object.freeze({});

export function parentOf(rel: string): string {
  const cut = rel.lastIndexOf("/");
  return cut < 0 ? "" : rel.slice(0, cut);
}

/** Every watched file by root-relative path, kept right by the event pipeline; find_file reads it through FileIndexView. */
export class FileIndex implements FileIndexView {
  private readonly entries = new Map<string, IndexEntry>();
  /** Paths by parent folder, so a folder's files are found without a scan of the whole index. */
  private readonly byDir = new Map<string, Set<string>>();
  /** Every folder holding watched files at any depth ("" aside): how many, and the folders right inside it. */
  private readonly folders = new Map<string, { files: number; subfolders: Set<string> }>();
  private readonly root = { files: 0, subfolders: new Set<string>() };
  private gen = 0;
  private cached?: { gen: number; paths: readonly string[] };
  /** The last JOURNAL_MAX adds and removes, by the generation each made (see changesSince). */
  private journal: { gen: number; path: string; added: boolean }[] = [];
  /** changesSince answers for generations from this on. */
  private journalFrom = 0;

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

  /** The adds and removes after `generation`, in order; undefined when they are too many to keep (derive afresh). */
  changesSince(generation: number): IndexChange[] | undefined {
    if (generation < this.journalFrom || generation > this.gen) return undefined;
    let lo = 0;
    let hi = this.journal.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.journal[mid].gen <= generation) lo = mid + 1;
      else hi = mid;
    }
    return this.journal.slice(lo).map(({ path, added }) => ({ path, added }));
  }

  private record(path: string, added: boolean): void {
    this.gen++;
    this.journal.push({ gen: this.gen, path, added });
    if (this.journal.length > JOURNAL_MAX) {
      this.journal = this.journal.slice(JOURNAL_MAX / 2);
      this.journalFrom = this.journal[0].gen - 1;
    }
  }

  set(rel: string, entry: IndexEntry): void {
    if (!this.entries.has(rel)) {
      this.record(rel, true);
      const dir = parentOf(rel);
      let set = this.byDir.get(dir);
      if (!set) this.byDir.set(dir, (set = new Set()));
      set.add(rel);
      this.countUp(dir);
    }
    const known = entry.size !== undefined || entry.mtimeMs !== undefined || entry.hash !== undefined;
    this.entries.set(rel, known ? entry : UNKNOWN);
  }

  delete(rel: string): boolean {
    const had = this.entries.delete(rel);
    if (had) {
      this.record(rel, false);
      const dir = parentOf(rel);
      const set = this.byDir.get(dir);
      set?.delete(rel);
      if (set?.size === 0) this.byDir.delete(dir);
      this.countDown(dir);
    }
    return had;
  }

  /** Whether folder `dir` holds watched files (at any depth). */
  hasFolder(dir: string): boolean {
    return dir === "" ? this.root.files > 0 : this.folders.has(dir);
  }

  /** `dir` and the folders above it, the root first. */
  private *chain(dir: string): Generator<{ files: number; subfolders: Set<string> }> {
    let node = this.root;
    yield node;
    if (dir === "") return;
    for (let cut = dir.indexOf("/"); ; cut = dir.indexOf("/", cut + 1)) {
      const d = cut < 0 ? dir : dir.slice(0, cut);
      let next = this.folders.get(d);
      if (!next) {
        this.folders.set(d, (next = { files: 0, subfolders: new Set() }));
        node.subfolders.add(d);
      }
      node = next;
      yield node;
      if (cut < 0) return;
    }
  }

  private countUp(dir: string): void {
    for (const node of this.chain(dir)) node.files++;
  }

  private countDown(dir: string): void {
    for (let d = dir; d !== ""; d = parentOf(d)) {
      const node = this.folders.get(d)!;
      if (--node.files > 0) continue;
      this.folders.delete(d);
      (parentOf(d) === "" ? this.root : this.folders.get(parentOf(d))!).subfolders.delete(d);
    }
    this.root.files--;
  }

  /** Files directly in folder `dir` ("" for the root). */
  children(dir: string): ReadonlySet<string> {
    return this.byDir.get(dir) ?? EMPTY;
  }

  /** Paths under folder `dir` (root-relative, no trailing slash), at any depth; walks its folders, not the index. */
  under(dir: string): string[] {
    const out: string[] = [];
    const todo = this.hasFolder(dir) ? [dir] : [];
    while (todo.length) {
      const d = todo.pop()!;
      out.push(...this.children(d));
      todo.push(...(d === "" ? this.root : this.folders.get(d)!).subfolders);
    }
    return out;
  }

  /** Folders holding watched files: a stand-in for watched folders with engines that do not say. */
  folderCount(): number {
    return this.byDir.size;
  }
}
