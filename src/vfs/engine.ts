/** The contract both watch engines (chokidar-engine.ts, parcel-engine.ts) implement; engines.ts picks one. */
import type { WatcherEngine } from "./types.js";
import type { RawKind } from "./coalesce.js";

/** One change an engine saw, by absolute path. */
export interface RawEvent {
  path: string;
  kind: RawKind;
}

export interface WatchRequest {
  /** Absolute folder to watch, recursively. */
  dir: string;
  /** Absolute folders not to watch at all (ignored now; they cost watches and events). Asked again on refresh. */
  ignoreDirs: () => readonly string[];
  /** Whether an absolute path is ignored; `isDir` undefined when the engine does not know yet. */
  ignored: (abs: string, isDir: boolean | undefined) => boolean;
}

/** The small interface both watchers sit behind: start (resolves once live), raw events, errors, stop. */
export interface WatchEngine {
  readonly name: WatcherEngine;
  /** How long the engine itself gathers events before it hands them over; the pipeline's window waits only the rest. */
  readonly batchDelayMs: number;
  /** Resolves once changes after it are guaranteed to be reported. */
  /** `onError(e, true)`: the engine goes on watching (a path it could not read); otherwise it needs a restart. */
  start(request: WatchRequest, onEvents: (events: RawEvent[]) => void, onError: (error: Error, keptWatching?: boolean) => void): Promise<void>;
  /** Re-reads the tree and `ignoreDirs` (after a folder was moved in, or the ignore rules changed). */
  refresh(): Promise<void>;
  /** Folders with a watch, when the engine can tell. */
  watchedFolders(): number | undefined;
  stop(): Promise<void>;
}

/**
 * How long each engine gathers events before handing them over: parcel's native Debounce waits 50 ms after the last one
 * (its src/Debounce.hh); chokidar hands each over as it comes (atomic and awaitWriteFinish are off).
 */
export const ENGINE_BATCH_DELAY_MS: Record<WatcherEngine, number> = { parcel: 50, chokidar: 0 };

/** The kernel's per-user inotify watch limit (fs.inotify.max_user_watches) is exhausted: restarting does not help. */
export function isWatchLimitError(error: unknown): boolean {
  const e = error as NodeJS.ErrnoException | undefined;
  return e?.code === "ENOSPC" || /no space left on device|ENOSPC|inotify.*limit/i.test(String(e?.message ?? ""));
}
