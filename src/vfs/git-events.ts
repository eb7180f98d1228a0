import type { RawEvent } from "./engine.js";
import type { GitChanged } from "./events.js";
import type { FileIndex } from "./file-index.js";
import { type GitState, type GitTouch, emptyTouch, readGitState, touchGit } from "./git-state.js";
import type { GitReader } from "./listing.js";
import { absOf } from "./rel-path.js";
import { filterByStat, gitChangedPaths } from "./rescan.js";

/**
 * `git.changed` from events in the git folder: the state is read from git's files and compared with the last one, so a
 * `git status` that rewrites an identical index says nothing. When HEAD moved, the paths git says differ come back as
 * raw events to check: a checkout's own file events may have been dropped by the kernel (see rescan.ts).
 *
 * A lane of its own beside the file events' window: a checkout's git.changed goes out as soon as HEAD moves, not after
 * the 50,000 files the same checkout wrote are resolved.
 */
export class GitEvents {
  private state?: GitState;
  private touch = emptyTouch();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly gitDir: string,
    private readonly root: string,
    private readonly git: GitReader,
    private readonly index: FileIndex,
    private readonly emit: (data: GitChanged) => void,
    /** When the watcher went live (see changedSinceOpen). */
    private readonly openedAt: () => number,
    /** Paths to check again once the file events in flight are through (they are the likelier report of them). */
    private readonly recheck: (paths: string[]) => void,
    /** How long events are gathered before the state is read: a commit's index.lock, index and ref land together. */
    private readonly delayMs: number,
  ) {}

  open(): void {
    this.state = readGitState(this.gitDir);
  }

  /** An event at `rel` (relative to the git dir, with `/`); false when it bears on nothing. */
  push(rel: string): boolean {
    if (!touchGit(this.touch, rel)) return false;
    this.schedule();
    return true;
  }

  /** git's state changed unseen (its watcher was down): read it, and report what moved. */
  pushAll(): void {
    Object.assign(this.touch, { head: true, index: true, refs: true });
    this.schedule();
  }

  get busy(): boolean {
    return this.timer !== undefined || this.running !== undefined;
  }

  /** Resolves once every touch pushed so far has been read and reported. */
  async idle(): Promise<void> {
    while (this.timer || this.running) {
      if (this.running) await this.running;
      else await new Promise<void>((resolve) => setTimeout(resolve, this.delayMs));
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.running || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const touch = this.touch;
      this.touch = emptyTouch();
      this.running = this.changed(touch)
        .catch(() => undefined)
        .finally(() => {
          this.running = undefined;
          if (Object.values(this.touch).some(Boolean)) this.schedule();
        });
    }, this.delayMs);
  }

  /** Reads the state after `touch`; emits `git.changed` if it changed; hands the paths to check again to `recheck`. */
  private async changed(touch: GitTouch): Promise<void> {
    const before = this.state;
    const now = readGitState(this.gitDir);
    this.state = now;
    const index = touch.index && now.indexHash !== before?.indexHash;
    const moved = now.head !== before?.head || now.branch !== before?.branch || now.operation !== before?.operation;
    if (!index && !touch.refs && !moved) return; // e.g. `git status` rewrote an identical index
    this.emit({ head: now.head, branch: now.branch, index, refs: touch.refs, operation: now.operation });
    if (before?.head && now.head && before.head !== now.head) this.recheck(await gitChangedPaths(this.git, before.head, now.head));
  }

  /**
   * Of the paths a commit moved, those the index does not know as they are on disk (by mtime and size): the rest were
   * reported by their own events. A path whose mtime the index never learnt counts if modified since the watcher went
   * live (a file edited before the daemon started and now committed is not a change, and hashing could not tell).
   * `seenInFlood`: paths the index learnt from a flood's events, whose folders its rescan reads again: not stat'ed (a
   * checkout's 50,000 lstats at a million files held its last path back by 1.2 s, beside the flood's rescan).
   */
  async stale(paths: string[], seenInFlood: (rel: string) => boolean = () => false): Promise<RawEvent[]> {
    // Most of a checkout's paths came with their own events, in the flood it made: no stat for those.
    const unseen = paths.filter((rel) => !seenInFlood(rel));
    const stale = await filterByStat(
      unseen,
      (rel) => absOf(this.root, rel),
      (rel, st) => {
        const entry = this.index.get(rel);
        if (!entry || !st) return true;
        if (entry.mtimeMs === undefined) return st.mtimeMs >= this.openedAt();
        return st.mtimeMs !== entry.mtimeMs || (entry.size !== undefined && st.size !== entry.size);
      },
    );
    return stale.map((rel) => ({ path: absOf(this.root, rel), kind: "update" }));
  }
}
