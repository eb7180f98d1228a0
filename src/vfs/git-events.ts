import { lstat } from "node:fs/promises";
import path from "node:path";
import type { RawEvent } from "./engine.js";
import type { GitChanged } from "./events.js";
import type { FileIndex } from "./file-index.js";
import { type GitState, type GitTouch, readGitState } from "./git-state.js";
import type { GitReader } from "./listing.js";
import { gitChangedPaths } from "./rescan.js";

/**
 * `git.changed` from events in the git folder: the state is read from git's files and compared with the last one, so a
 * `git status` that rewrites an identical index says nothing. When HEAD moved, the paths git says differ come back as
 * raw events to check: a checkout's own file events may have been dropped by the kernel (see rescan.ts).
 */
export class GitEvents {
  private state?: GitState;

  constructor(
    private readonly gitDir: string,
    private readonly root: string,
    private readonly git: GitReader,
    private readonly index: FileIndex,
    private readonly emit: (data: GitChanged) => void,
    /** When the watcher went live (see changedSinceOpen). */
    private readonly openedAt: () => number,
  ) {}

  async open(): Promise<void> {
    this.state = await readGitState(this.gitDir);
  }

  /** Reads the state after a window touched `touch`; emits `git.changed` if it changed; returns paths to check again. */
  async changed(touch: GitTouch): Promise<RawEvent[]> {
    const before = this.state;
    const now = await readGitState(this.gitDir);
    this.state = now;
    const index = touch.index && now.indexHash !== before?.indexHash;
    const moved = now.head !== before?.head || now.branch !== before?.branch || now.operation !== before?.operation;
    if (!index && !touch.refs && !moved) return []; // e.g. `git status` rewrote an identical index
    const recheck = before?.head && now.head && before.head !== now.head ? await this.changedSinceOpen(await gitChangedPaths(this.git, this.root, before.head, now.head)) : [];
    this.emit({ head: now.head, branch: now.branch, index, refs: touch.refs, operation: now.operation });
    return recheck;
  }

  /**
   * Drops paths whose last hash the index never learnt and that were not modified since the watcher went live (a file
   * edited before the daemon started and now committed): those are not changes, and hashing could not tell.
   */
  private async changedSinceOpen(events: RawEvent[]): Promise<RawEvent[]> {
    const keep = await Promise.all(
      events.map(async (e) => {
        const entry = this.index.get(path.relative(this.root, e.path).split(path.sep).join("/"));
        if (!entry || entry.hash !== undefined) return true;
        const st = await lstat(e.path).catch(() => null);
        return !st || st.mtimeMs >= this.openedAt();
      }),
    );
    return events.filter((_, i) => keep[i]);
  }
}
