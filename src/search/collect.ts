import { type MatchSource, readMatches } from "./read-matches.js";
import { type SearchFile, fileHeader } from "./render.js";
import type { RgFile } from "./ripgrep.js";

/**
 * Reads the files rg reports while rg still searches (each once: hash, tags, shown text, read-matches.ts), in rg's
 * order, within the answer's budgets, so a search costs about what rg costs and not rg plus a read of every hit after
 * it. When a budget fills, `full` aborts (rg is stopped: nothing it still finds could be shown). At the deadline rg is
 * stopped and the files it reported are still read, until `cutoff` (a little later); those left are counted.
 */

export interface CollectLimits {
  /** Characters of `text` the lines and headers may take. */
  chars: number;
  /** Bytes of files read past which the files that follow are left out. */
  readBytes: number;
  maxFileBytes: number;
}

export interface Collected {
  files: SearchFile[];
  /** Notes on files left out (changed while searched, ...). */
  leftOut: string[];
  linesCut: boolean;
  sizeCapped: boolean;
  /** Files rg reported that the cutoff left unread. */
  unread: number;
}

export class MatchCollector {
  /** Aborted once the answer is full: what rg finds after that could not be shown. */
  readonly full = new AbortController();
  private readonly queue: RgFile[] = [];
  private draining?: Promise<void>;
  private failure?: { error: unknown };
  private readonly budget: MatchSource["budget"];
  private readonly result: Collected = { files: [], leftOut: [], linesCut: false, sizeCapped: false, unread: 0 };
  private readBytes = 0;

  constructor(
    private readonly source: Omit<MatchSource, "budget">,
    private readonly limits: CollectLimits,
    /** Drops files before they are read (a batch at a time: the glob check asks git once per batch). */
    private readonly filter: (files: RgFile[]) => Promise<RgFile[]>,
    private readonly cutoff: AbortSignal,
    private readonly signal: AbortSignal,
  ) {
    this.budget = { chars: limits.chars, full: false };
  }

  add(file: RgFile): void {
    this.queue.push(file);
    this.draining ??= this.drain()
      .catch((error: unknown) => void (this.failure = { error }))
      .finally(() => (this.draining = undefined));
  }

  /** Everything added has been read (or left out at the cutoff); sorted by path. */
  async done(): Promise<Collected> {
    while (this.draining) await this.draining;
    if (this.failure) throw this.failure.error;
    if (this.cutoff.aborted) this.result.unread += this.queue.length;
    this.queue.length = 0;
    this.result.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    this.result.sizeCapped ||= this.budget.full;
    return this.result;
  }

  private async drain(): Promise<void> {
    while (this.queue.length && !this.cutoff.aborted && !this.full.signal.aborted) {
      const batch = await this.filter(this.queue.splice(0));
      for (let i = 0; i < batch.length; i++) {
        this.signal.throwIfAborted();
        if (this.cutoff.aborted) {
          this.result.unread += batch.length - i;
          return;
        }
        if (this.budget.chars <= 0 || this.readBytes > this.limits.readBytes) {
          this.result.sizeCapped = true;
          this.full.abort();
          return;
        }
        await this.read(batch[i]);
      }
    }
    if (this.budget.full) this.full.abort();
  }

  private async read(rg: RgFile): Promise<void> {
    const read = await readMatches({ ...this.source, budget: this.budget }, rg);
    this.result.linesCut ||= read.linesCut;
    this.readBytes += read.bytesRead ?? 0;
    if (read.note) this.result.leftOut.push(read.note);
    if (!read.file) return;
    this.result.files.push(read.file);
    this.budget.chars -= fileHeader(read.file, this.limits.maxFileBytes).length + 2;
  }
}
