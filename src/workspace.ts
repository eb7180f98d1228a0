import { initHash } from "./core/hash.js";
import { VersionedFiles } from "./fs/versioned-write.js";
import { GitRepo } from "./git/repo.js";
import { PathResolver } from "./paths.js";
import { EventBus } from "./platform/bus.js";
import { Supervisor } from "./platform/supervisor.js";
import { WorktreeLock } from "./platform/worktree-lock.js";
import { ContentHistory } from "./vfs/history.js";
import { SessionViews } from "./vfs/views.js";
import type { Actor, FileIndexView, ToolWrite, WatcherEngine } from "./vfs/types.js";
import { type Vfs, startVfs } from "./vfs/vfs.js";
import type { McpPassthrough } from "./mcp/passthrough.js";
import type { Terminal } from "./terminal/terminal.js";

export type { Actor, FileIndexView, ToolWrite, WatcherEngine };
import type { LspService } from "./lsp/service.js";

/** Files above this are TOO_LARGE for the file tools unless `--max-file-bytes` raises it (SPEC 4). */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

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
  readonly lock = new WorktreeLock();
  readonly files: VersionedFiles;
  /** The root's repository: where it is, git's caches, the changelist tracker (started by the daemon). */
  readonly git: GitRepo;
  private vfs?: Vfs;
  /** The MCP passthrough (SPEC 12), set by the daemon once the workspace is ready. */
  mcp?: McpPassthrough;
  /** The terminal (SPEC 11), set by the daemon; `terminalOf(ws)` makes one with the defaults where there is no daemon. */
  terminal?: Terminal;
  /** The language servers (SPEC 10), set by the daemon once the workspace is ready. */
  lsp?: LspService;
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
