import { initHash } from "./core/hash.js";
import { KeyedLock } from "./fs/keyed-lock.js";
import { killAllChildren } from "./git/run.js";
import { PathResolver } from "./paths.js";
import { ContentHistory } from "./vfs/history.js";
import { SessionViews } from "./vfs/views.js";
import { startVfs } from "./vfs/vfs.js";

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

/** A write a tool is about to make (hash null: a delete), so the watcher can attribute the change to its session. */
export interface ToolWrite {
  session: string;
  rel: string;
  hash: string | null;
}

/** The VFS's index of watched files, read by find_file. */
export interface FileIndexView {
  /** Bumped on every add or remove, so a consumer can cache what it derives from `paths()`. */
  readonly generation: number;
  /** Root-relative paths (with `/`) of every watched, not ignored, file. */
  paths(): readonly string[];
}

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
  private readonly toolWriteHooks: ((write: ToolWrite) => void)[] = [];
  /** Set by the VFS once its index is live. */
  fileIndex?: FileIndexView;
  /** The watcher's state for `info`; set by the VFS. */
  vfsState: () => Record<string, unknown> = () => ({ watcher: "not started" });

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
    // git and gh processes still running at shutdown (the steps that ignore cancellation included) die with the daemon.
    this.onDispose(killAllChildren);
    const vfs = await startVfs(this);
    this.onDispose(() => vfs.stop());
    this.fileIndex = vfs.index;
    this.vfsState = () => vfs.state();
  }

  /** A session saw this version of a file (it read or wrote it): feeds stale_sessions and the since/mismatch diffs. */
  recordSeen(session: string, rel: string, hash: string, content: Buffer): void {
    this.views.record(session, rel, hash);
    this.history.put(hash, content);
  }

  /** Called by a file tool just before it commits a write or delete, so the resulting change is `origin:"tool"`, `by` the session. */
  expectToolWrite(write: ToolWrite): void {
    if (write.hash === null) this.views.record(write.session, write.rel, null);
    for (const hook of this.toolWriteHooks) hook(write);
  }

  onToolWrite(hook: (write: ToolWrite) => void): void {
    this.toolWriteHooks.push(hook);
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
