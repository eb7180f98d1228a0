/** How long a touched folder counts as part of a flood that begins after it (a flood's first windows may be thin). */
const RECENT_DIRS_MS = 2_000;

/** A flood that is over: when it began and the folders it touched, to be read again (see rescan.ts). */
export interface Flood {
  since: number;
  dirs: Set<string>;
}

/**
 * Which folders a flood touched. The kernel may drop events in a flood (rescan.ts), so once it is over its folders are
 * read again; folders touched shortly before it began count too. No IO.
 */
export class FloodTracker {
  private flood?: Flood;
  /** Floods over whose folders are not read again yet (see seen). */
  private readonly unread = new Set<Flood>();
  /** Folders events touched lately (and folders walked), by when. */
  private readonly recent = new Map<string, number>();

  get active(): boolean {
    return this.flood !== undefined;
  }

  /** When the flood in progress began (its first window's first event). */
  get since(): number | undefined {
    return this.flood?.since;
  }

  /** Folders that were walked (a new folder and those inside it). */
  touched(dirs: Iterable<string>): void {
    const now = Date.now();
    for (const d of dirs) this.recent.set(d, now);
  }

  /**
   * After each window, with the folders its events touched: while flooding they (and the recent ones) are the flood's.
   * Returns the flood when this window, not flooding, finds one over.
   */
  afterWindow(dirs: Iterable<string>, flooding: boolean, firstEventAt: number): Flood | undefined {
    this.touched(dirs);
    if (flooding) {
      this.flood ??= { since: firstEventAt, dirs: new Set() };
      for (const d of this.recent.keys()) this.flood.dirs.add(d);
      this.recent.clear();
      return undefined;
    }
    const now = Date.now();
    for (const [d, at] of this.recent) if (now - at > RECENT_DIRS_MS) this.recent.delete(d);
    const over = this.flood;
    this.flood = undefined;
    if (over) this.unread.add(over);
    return over;
  }

  /** The rescan of a flood over is done (or failed): see seen. */
  reread(flood: Flood): void {
    this.unread.delete(flood);
  }

  /**
   * Whether a file in folder `dir` that the index knows at `mtimeMs` came with an event of a flood whose folders are
   * still to be read again (the flood in progress, or one over whose rescan has not ended): that rescan compares the
   * file with the index anyway, so git's lane need not stat it.
   */
  seen(dir: string, mtimeMs: number | undefined): boolean {
    if (mtimeMs === undefined) return false;
    const seenIn = (flood: Flood) => mtimeMs >= flood.since && flood.dirs.has(dir);
    if (this.flood && seenIn(this.flood)) return true;
    for (const flood of this.unread) if (seenIn(flood)) return true;
    return false;
  }
}
