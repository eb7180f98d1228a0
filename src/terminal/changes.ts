import type { EventBus } from "../platform/bus.js";
import type { ChangeKind } from "../vfs/coalesce.js";
import type { FsChange } from "../vfs/events.js";
import type { Actor } from "../vfs/types.js";

/** `changed_files` entries listed at most; a build that writes 10,000 files says so in `changed_files_total`. */
export const MAX_CHANGED_FILES = 1_000;

export interface ChangedFile {
  path: string;
  kind: ChangeKind;
  hash: string | null;
}

/** Two reports of one path folded into one, as the watcher's own window folds raw events; null: they cancel out. */
function fold(prev: ChangeKind, next: ChangeKind): ChangeKind | null {
  if (next === "deleted") return prev === "created" ? null : "deleted";
  if (prev === "deleted") return next === "created" ? "modified" : next;
  return prev; // created stays created, modified stays modified
}

/** A run's changes, one per path in order of first report, from several fs.changed lines. Pure. */
export function mergeChanges(changes: readonly ChangedFile[]): ChangedFile[] {
  const byPath = new Map<string, ChangedFile | null>();
  for (const c of changes) {
    const prev = byPath.get(c.path);
    if (prev === undefined) {
      byPath.set(c.path, { path: c.path, kind: c.kind, hash: c.hash });
      continue;
    }
    // Gone and back: a file that was not there before the run and is again is new.
    const kind = prev === null ? (c.kind === "deleted" ? null : "created") : fold(prev.kind, c.kind);
    byPath.set(c.path, kind === null ? null : { path: c.path, kind, hash: c.hash });
  }
  return [...byPath.values()].filter((c): c is ChangedFile => c !== null);
}

/**
 * The fs.changed entries attributed to one actor while it is subscribed: what a terminal command changed, as the VFS
 * reported it (so ignored paths are not in it, and the hashes are the VFS's own).
 */
export class ChangeCollector {
  private readonly seen: ChangedFile[] = [];
  private off?: () => void;

  constructor(
    private readonly bus: EventBus,
    private readonly actor: Actor,
  ) {}

  start(): this {
    this.off = this.bus.on("fs.changed", ({ changes }) => this.take(changes));
    return this;
  }

  stop(): void {
    this.off?.();
    this.off = undefined;
  }

  private take(changes: readonly FsChange[]): void {
    for (const c of changes) {
      if (c.origin === "tool" && c.by === this.actor.session && c.tool === this.actor.tool) this.seen.push({ path: c.path, kind: c.kind, hash: c.hash });
    }
  }

  /** The merged changes, at most MAX_CHANGED_FILES of them, and how many there were. */
  result(): { files: ChangedFile[]; total: number } {
    const all = mergeChanges(this.seen);
    return { files: all.slice(0, MAX_CHANGED_FILES), total: all.length };
  }
}
