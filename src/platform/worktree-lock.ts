/**
 * The daemon's one lock type. The workspace's serializes what changes the worktree (SPEC 7): writes to one file never
 * interleave, and an operation that rewrites the tree (a git checkout, reset, stash, merge; an LSP rename over many
 * files; an approval check and the call it binds) runs alone, so a file_write never lands in the middle of a checkout's
 * update. Writes to different files run in parallel. A service that only needs one writer per key (the changelists'
 * per-file state) has one of its own and never calls `exclusive`.
 * Fair in arrival order: each call waits only for what arrived before it (an exclusive operation for the writes in
 * flight, a write for the exclusive operations queued before it), so nothing can wait for itself.
 */
export class WorktreeLock {
  /** Settles when the last exclusive operation queued so far is done. */
  private exclusiveTail: Promise<void> = Promise.resolve();
  /** File writes queued or running, which an exclusive operation arriving now must wait for. */
  private readonly writes = new Set<Promise<unknown>>();
  private readonly fileTails = new Map<string, Promise<void>>();

  /** Runs `work` with the whole worktree to itself. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    const before = [this.exclusiveTail, ...this.writes];
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = Promise.allSettled(before).then(() => mine);
    this.exclusiveTail = tail;
    await Promise.allSettled(before);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** Runs `work` as the only writer of `key` (a real path). */
  async file<T>(key: string, work: () => Promise<T>): Promise<T> {
    const exclusive = this.exclusiveTail;
    const previous = this.fileTails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.fileTails.set(key, tail);
    const run = (async () => {
      await exclusive;
      await previous;
      return work();
    })();
    this.writes.add(run);
    try {
      return await run;
    } finally {
      this.writes.delete(run);
      release();
      if (this.fileTails.get(key) === tail) this.fileTails.delete(key);
    }
  }
}
