import { initHash } from "./core/hash.js";
import { DEFAULT_MAX_FILE_BYTES } from "./core/limits.js";
import { VersionedFiles } from "./fs/versioned-write.js";
import { FileFactsCache, WindowCache } from "./fs/window-cache.js";
import { GitRepo } from "./git/repo.js";
import { PathResolver } from "./paths.js";
import type { EventBus } from "./platform/bus.js";
import type { Supervisor } from "./platform/supervisor.js";
import { WorktreeLock } from "./platform/worktree-lock.js";
import { SearchCaches } from "./search/caches.js";
import { ContentHistory } from "./vfs/history.js";
import { SessionViews } from "./vfs/views.js";
import type { Actor, FileIndexView, ToolWrite, WatcherEngine } from "./vfs/types.js";
import { type Vfs, startVfs } from "./vfs/vfs.js";

export type { Actor, FileIndexView, ToolWrite, WatcherEngine };

export interface WorkspaceOptions {
  root: string;
  maxFileBytes?: number;
  watcher?: WatcherEngine;
}

type Disposer = () => unknown;

/**
 * The services every tool shares, each with one job: where paths land (paths), who owns child processes (processes),
 * how events flow (bus), what sessions saw (views, history), what serializes worktree changes (lock), the one versioned
 * write (files), and the live VFS (index, state, attribution). Later parts (language servers, terminal, MCP) are
 * services of their own, owned by the daemon, not methods here.
 */
export class Workspace {
  readonly paths: PathResolver;
  readonly root: string;
  readonly maxFileBytes: number;
  readonly watcherEngine: WatcherEngine;
  readonly views = new SessionViews();
  readonly history = new ContentHistory();
  /** file_read's rendered windows, used only for bytes equal to what they were rendered from (fs/window-cache.ts). */
  readonly windows = new WindowCache();
  /** file_read's hash, lines and tags of a file, used only for bytes equal to what they were made from (the same). */
  readonly facts = new FileFactsCache();
  readonly lock = new WorktreeLock();
  /** What search, find_file and list_dir keep between calls, for this root only. */
  readonly search = new SearchCaches();
  readonly files: VersionedFiles;
  /** The root's repository: where it is, git's caches, the changelist tracker (started by the daemon). */
  readonly git: GitRepo;
  private vfs?: Vfs;
  private readonly disposers: Disposer[] = [];

  constructor(
    options: WorkspaceOptions,
    readonly processes: Supervisor,
    readonly bus: EventBus,
    readonly log: (message: string) => void = (m) => process.stderr.write(`tool-layer: ${m}\n`),
  ) {
    this.paths = new PathResolver(options.root);
    this.root = this.paths.root;
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.watcherEngine = options.watcher ?? "parcel";
    this.files = new VersionedFiles(this);
    this.git = new GitRepo({ root: this.root, processes, bus, paths: this.paths, maxFileBytes: this.maxFileBytes, log });
    this.onDispose(() => this.git.stop());
    this.onDispose(() => this.search.dispose());
  }

  /** Everything `ready` promises: after this resolves, no change on disk is missed. */
  async init(): Promise<void> {
    await initHash();
    const [vfs] = await Promise.all([startVfs(this), this.files.init()]);
    this.onDispose(() => vfs.stop());
    this.vfs = vfs;
  }

  /** The VFS's file index (empty before init). */
  get fileIndex(): FileIndexView | undefined {
    return this.vfs?.index;
  }

  /** Whether the VFS leaves this root-relative path out (its ignore rules; false before init). */
  isIgnored(rel: string, isDir = false): boolean {
    return this.vfs?.ignored(rel, isDir) ?? false;
  }

  /** The watcher's state for `info`. */
  vfsState(): Record<string, unknown> {
    return this.vfs ? this.vfs.state() : { watcher: "not started" };
  }

  /**
   * Resolves once the watcher has reported every change made on disk before this call: what the bus says then is what
   * the disk had (the engine's own batch delay, then the pipeline's window).
   */
  async settle(since?: number): Promise<void> {
    await this.vfs?.settle(since);
  }

  /** A session saw this version of a file (it read or wrote it): feeds stale_sessions and the since/mismatch diffs. */
  recordSeen(session: string, rel: string, hash: string, content: Buffer): void {
    this.views.record(session, rel, hash);
    this.history.put(hash, content);
  }

  /** Called just before a tool commits a write or delete of one file, so the change is `origin:"tool"`, `by` the session. */
  expectToolWrite(write: ToolWrite): void {
    if (write.hash === null) this.views.record(write.session, write.rel, null);
    this.git.status.touched(); // before its fs.changed comes: a git_status right after the write must see it
    this.vfs?.expect(write);
  }

  /** Runs `work`; every change the watcher sees meanwhile (and just after, as it trails the disk) is `actor`'s. */
  async attributeDuring<T>(actor: Actor, work: () => Promise<T>): Promise<T> {
    const window = this.vfs?.openWindow(actor);
    try {
      return await work();
    } finally {
      window?.close();
    }
  }

  /** Registers cleanup (a watcher, a service) run at shutdown, newest first. */
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
