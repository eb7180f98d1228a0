import { initHash } from "./core/hash.js";
import { KeyedLock } from "./fs/keyed-lock.js";
import { PathResolver } from "./paths.js";
import { ContentHistory } from "./vfs/history.js";
import { SessionViews } from "./vfs/views.js";

/** Files above this are TOO_LARGE for the file tools unless `--max-file-bytes` raises it (SPEC 4). */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

export type WatcherEngine = "parcel" | "chokidar";

export interface WorkspaceOptions {
  root: string;
  maxFileBytes?: number;
  watcher?: WatcherEngine;
}

export type EmitEvent = (event: string, data: unknown) => void;
type Disposer = () => unknown;

/** The state every tool shares: the root, the path resolver, what sessions saw, the write locks, and services' lifetimes. */
export class Workspace {
  readonly paths: PathResolver;
  readonly root: string;
  readonly maxFileBytes: number;
  readonly watcherEngine: WatcherEngine;
  readonly views = new SessionViews();
  readonly history = new ContentHistory();
  /** Per real path: writes and deletes to one file never interleave. */
  readonly writeLocks = new KeyedLock();
  private readonly disposers: Disposer[] = [];

  constructor(
    options: WorkspaceOptions,
    readonly emit: EmitEvent,
    readonly log: (message: string) => void = (m) => process.stderr.write(`tool-layer: ${m}\n`),
  ) {
    this.paths = new PathResolver(options.root);
    this.root = this.paths.root;
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.watcherEngine = options.watcher ?? "parcel";
  }

  /** Everything `ready` promises: after this resolves, no change on disk is missed. */
  async init(): Promise<void> {
    await initHash();
  }

  /** Registers cleanup (a watcher, a child process) run at shutdown, newest first. */
  onDispose(disposer: Disposer): void {
    this.disposers.push(disposer);
  }

  async dispose(): Promise<void> {
    for (const d of this.disposers.splice(0).reverse()) {
      try {
        await d();
      } catch (e) {
        this.log(`cleanup failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}
