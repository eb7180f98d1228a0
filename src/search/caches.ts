import { LRUCache } from "lru-cache";
import type { FileIndexView } from "../vfs/types.js";
import { FuzzyIndex } from "./fuzzy.js";
import { writeDefaultIgnoreFile } from "./ripgrep.js";

/** Line counts list_dir keeps between calls, by real path, at most. */
export const MAX_CACHED_COUNTS = 20_000;

/** A file's line count as list_dir found it, valid while its size and mtime stay the same. */
export interface LineCount {
  size: number;
  mtimeMs: number;
  lines: number | "binary" | null;
}

/**
 * What the search tools (search, find_file, list_dir) derive from one workspace and keep between calls. One per
 * workspace (the Workspace owns it), so two daemons in one process never see each other's.
 */
export class SearchCaches {
  /** list_dir's line counts; the least recently used go past MAX_CACHED_COUNTS. */
  readonly lineCounts = new LRUCache<string, LineCount>({ max: MAX_CACHED_COUNTS });
  /** find_file's matcher, rebuilt when the index's generation moves (a file was added or removed). */
  private fuzzy?: { view: FileIndexView; generation: number; index: FuzzyIndex };
  /** search's DEFAULT_IGNORES file outside git: written on first use; null when it could not be. */
  private ignores?: { file: string; remove: () => void } | null;

  fuzzyIndexOf(view: FileIndexView): FuzzyIndex {
    const cached = this.fuzzy?.view === view ? this.fuzzy : undefined;
    if (cached && cached.generation === view.generation) return cached.index;
    const generation = view.generation;
    const index = new FuzzyIndex(view.paths(), cached?.index);
    this.fuzzy = { view, generation, index };
    return index;
  }

  defaultIgnoreFile(): string | undefined {
    if (this.ignores === undefined) this.ignores = writeDefaultIgnoreFile();
    return this.ignores?.file;
  }

  dispose(): void {
    this.ignores?.remove();
    this.ignores = undefined;
    this.lineCounts.clear();
  }
}
