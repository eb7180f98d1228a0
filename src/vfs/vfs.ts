import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { EventBus } from "../platform/bus.js";
import type { Supervisor } from "../platform/supervisor.js";
import { ENGINE_BATCH_DELAY_MS, type RawEvent, type WatchEngine, type WatchRequest, isWatchLimitError } from "./engine.js";
import { createEngine } from "./engines.js";
import { WINDOW_MS } from "./event-window.js";
import { FileIndex } from "./file-index.js";
import { GIT_DIR_UNWATCHED } from "./git-state.js";
import type { ContentHistory } from "./history.js";
import { IgnoreRules } from "./ignore-rules.js";
import { type GitReader, type Listing, gitReader, listGit, listIgnoredDirs, listPlain, ruleChanges, walk } from "./listing.js";
import { HASH_MAX_BYTES, Pipeline, type PipelineSink } from "./pipeline.js";
import { modifiedSince, rescanFolders } from "./rescan.js";
import type { Actor, ToolWrite, WatcherEngine } from "./types.js";
import type { SessionViews } from "./views.js";
import { WatcherHost } from "./watcher-client.js";

/** A failing watcher is restarted at most this often, then left off (the daemon keeps serving without events). */
export const MAX_RESTARTS = 5;
/** Wait before restart n is n times this: a watcher that fails at once is not spun on. */
const RESTART_DELAY_MS = 500;
/** Folders moved in within this long trigger one engine refresh, not one each. */
const REFRESH_DEBOUNCE_MS = 300;
/**
 * A folder that just appeared is listed again this long after it was walked: parcel starts watching a new folder only
 * when it gets to it, and drops a create and delete that fall within one of its batches, so a file made and removed in
 * that gap would otherwise never be reported gone (or made). Longer than parcel's 50 ms batch, short for a model.
 */
const RECHECK_DELAY_MS = 250;
/** Past the engine's own batch delay, the time the kernel, the engine's thread and the watcher host's pipe take to hand
 * an event over. */
const SETTLE_MARGIN_MS = 25;
/**
 * parcel (its Debounce, 2.6.0) hands an event over at once when it handed none over for this long; later ones wait for
 * its 50 ms batch. So when no batch came in the half second before some work began, nor since, the work's first change
 * is on its way already: the watcher host's word that parcel's threads are asleep (WatcherHost.drained: they have read
 * and handed over everything the kernel queued) or, when it cannot say, a round trip to it (its answer follows every
 * batch it wrote) and at least QUIET_SETTLE_MS for parcel's own threads; the rest of the batch delay only once a batch
 * has come.
 */
const PARCEL_QUIET_MS = 500;
const QUIET_SETTLE_MS = 10;
/**
 * Once a batch has come, settle() in a repository writes this file in the git dir (a name of the daemon's own, `.pid`
 * added, removed at stop) and waits for parcel to report it: one inotify queue holds the events of both watched trees
 * in the order they happened, and parcel hands them over in that order, so once the marker's event is here, every
 * change made before it was written is too, with no fixed wait. Not when parcel was quiet: its event would be handed
 * over at once, but it would start parcel's 500 ms of batching (Debounce.cc), and every settle in that time would wait
 * for a 50 ms batch where a quiet one takes 10 ms. git ignores what it does not know in its folder.
 */
const SETTLE_MARKER = "tool-layer-settle";
/** Errors kept for `info`. */
const KEPT_ERRORS = 5;

type Role = "tree" | "git";

/** What the VFS needs from the workspace that owns it (the Workspace is one; the VFS never imports it). */
export interface VfsHost {
  readonly root: string;
  readonly maxFileBytes: number;
  readonly watcherEngine: WatcherEngine;
  readonly processes: Pick<Supervisor, "run" | "attach">;
  readonly bus: Pick<EventBus, "emit">;
  readonly views: Pick<SessionViews, "staleSessions">;
  readonly history: Pick<ContentHistory, "put">;
  readonly log: (message: string) => void;
  /** Where the root's repository is (the workspace's GitRepo finds it once for every service), null outside one. */
  readonly git: { tryLocation(): Promise<{ gitDir: string; insideWorkTree: boolean } | null> };
}

/** The live VFS: watchers on the tree and the git folder, the file index, the event pipeline, and their state. */
export class Vfs {
  readonly index = new FileIndex();
  private rules!: IgnoreRules;
  private ignoredDirs: string[] = [];
  private gitDir: string | null = null;
  private pipeline!: Pipeline;
  private readonly engines = new Map<Role, WatchEngine>();
  private readonly requests = new Map<Role, WatchRequest>();
  private ready = false;
  private stopped = false;
  private restarts = 0;
  /** When the VFS started, and since when each failed watcher has been down (cleared once it is back and caught up). */
  private startedAt = 0;
  private readonly downSince = new Map<Role, number>();
  private inotifyLimitHit = false;
  private readonly errors: string[] = [];
  /** Folders moved in, refreshed together (see refreshMovedIn). */
  private readonly movedIn = new FolderBatch(REFRESH_DEBOUNCE_MS, (dirs) => void this.refreshMovedIn(dirs));
  /** Folders walked lately, listed again together (see RECHECK_DELAY_MS). */
  private readonly walked = new FolderBatch(RECHECK_DELAY_MS, (dirs) => void this.relist(dirs, true));
  private folderCache?: { gen: number; count: number };
  /** When an engine last handed over a batch (Date.now()): see settle(). */
  private lastBatchAt = 0;
  /** settle()'s marker file, once written, and the settles waiting for its event. */
  private marker?: string;
  private readonly markerWaiters = new Set<() => void>();
  /**
   * How settles ended: quiet (parcel idle before and after, see QUIET_SETTLE_MS), on the marker's event, or on the
   * timed wait (no marker here, or it did not come in time); `drained`: how many found parcel idle before and had the
   * host's word that its threads slept (then quiet, or on to the marker when a batch came meanwhile).
   */
  private readonly settles = { quiet: 0, drained: 0, marker: 0, timed: 0 };

  private readonly git: GitReader;
  /** Where parcel runs (a process of its own: watcher-host.ts says why); chokidar runs in the daemon. */
  private readonly watcherHost: WatcherHost;

  constructor(private readonly ws: VfsHost) {
    this.git = gitReader(ws.processes, ws.root);
    this.watcherHost = new WatcherHost(ws.processes, ws.root, ws.log);
  }

  /** A tool is about to write a file: the change that brings its hash is the tool's. */
  expect(write: ToolWrite): void {
    this.pipeline?.expect(write);
  }

  /**
   * Resolves once every change made before the call has been through the pipeline (see Workspace.settle). `since`: when
   * the work whose changes are awaited began (Date.now()); with parcel, a quiet watcher then shortens the wait.
   */
  async settle(since?: number): Promise<void> {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const fullMs = ENGINE_BATCH_DELAY_MS[this.ws.watcherEngine] + SETTLE_MARGIN_MS;
    const quiet = () => since !== undefined && this.ws.watcherEngine === "parcel" && this.lastBatchAt < since - PARCEL_QUIET_MS;
    if (quiet()) {
      // The host saw parcel's threads asleep: what they had read is in, and a batch of it made quiet() false. Else the
      // fixed wait, less what asking took.
      const began = Date.now();
      if (await Promise.race([this.watcherHost.drained(), sleep(fullMs).then(() => false)])) this.settles.drained++;
      else await Promise.all([sleep(QUIET_SETTLE_MS - (Date.now() - began)), Promise.race([this.watcherHost.ping(), sleep(fullMs)])]);
      if (quiet()) {
        this.settles.quiet++;
        return this.pipeline?.idle();
      }
    }
    // A batch came, so parcel holds what follows for its 50 ms batch: the marker's event says when that is here.
    if (await this.markerSeen(fullMs)) {
      // Batches of one round of parcel's come one per watched tree: the host's answer to a ping follows them all.
      await this.watcherHost.ping();
      this.settles.marker++;
    } else {
      await sleep(fullMs);
      this.settles.timed++;
    }
    await this.pipeline?.idle();
  }

  /** Until close() (and as long after as the watcher trails the disk), changes are `actor`'s. */
  openWindow(actor: Actor): { close(): void } {
    return this.pipeline.openWindow(actor);
  }

  /** Resolves once both watchers are live: every change after this is reported. */
  async start(): Promise<void> {
    this.startedAt = Date.now();
    if (this.ws.watcherEngine === "parcel") this.watcherHost.warm();
    const root = this.ws.root;
    const repo = await this.ws.git.tryLocation();
    this.gitDir = repo?.insideWorkTree ? repo.gitDir : null;
    // parcel does not consult the rules while it starts, only the folders to skip: it crawls while git lists (on
    // 100,000 files that saves about half a second before ready). chokidar judges every path as it crawls: rules first.
    const listed = this.gitDir && this.ws.watcherEngine === "parcel" ? this.listInParallel(this.gitDir) : undefined;
    if (listed) this.ignoredDirs = await listed.ignoredDirs;
    else await this.applyListing(await this.list());
    this.pipeline = new Pipeline(this.sink(), {
      index: this.index,
      gitDir: this.gitDir,
      git: this.git,
      engineDelayMs: ENGINE_BATCH_DELAY_MS[this.ws.watcherEngine],
      hooks: {
        rules: () => this.rules,
        onFolderMovedIn: (rel) => this.movedIn.add(rel),
        onFolderWalked: (rel) => this.walked.add(rel),
        onFloodOver: (dirs, since, lost) => void this.afterFlood(dirs, since, lost),
        onIgnoreChanged: () => this.reloadRules(),
      },
    });
    this.requests.set("tree", {
      dir: root,
      ignoreDirs: () => [path.join(root, ".git"), ...this.ignoredDirs],
      ignored: (abs, isDir) => this.ignoredAbs(abs, isDir),
    });
    if (this.gitDir) {
      const gitDir = this.gitDir;
      this.requests.set("git", { dir: gitDir, ignoreDirs: () => GIT_DIR_UNWATCHED.map((d) => path.join(gitDir, d)), ignored: () => false });
    }
    await Promise.all([...this.requests.keys()].map((role) => this.startEngine(role)));
    if (listed) await this.applyListing(await listed.listing);
    await this.pipeline.open();
    this.ready = [...this.requests.keys()].every((r) => this.engines.has(r));
  }

  private sink(): PipelineSink {
    const { root, views, history, bus, log } = this.ws;
    return { root, views, history, hashMaxBytes: this.hashMax(), emit: (event, data) => bus.emit(event, data), log };
  }

  private hashMax(): number {
    return Math.max(HASH_MAX_BYTES, this.ws.maxFileBytes);
  }

  /**
   * Writes the settle marker and resolves true once parcel reports it, false when it cannot be used (no repository,
   * chokidar, the git watcher down or stopped) or did not come within `timeoutMs` (then the timed settle follows).
   */
  private async markerSeen(timeoutMs: number): Promise<boolean> {
    if (this.stopped || !this.gitDir || this.ws.watcherEngine !== "parcel" || !this.engines.has("git") || !this.pipeline) return false;
    this.marker ??= path.join(this.gitDir, `${SETTLE_MARKER}.${process.pid}`);
    let timer: NodeJS.Timeout | undefined;
    let seen!: () => void;
    const reported = new Promise<boolean>((resolve) => {
      seen = () => resolve(true);
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    this.markerWaiters.add(seen);
    try {
      writeFileSync(this.marker, String(Date.now()));
      return await reported;
    } catch {
      return false; // a read-only git dir, say
    } finally {
      this.markerWaiters.delete(seen);
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.marker) {
      try {
        rmSync(this.marker, { force: true });
      } catch {
        // the git dir went away or became read-only: nothing of ours is left to tidy
      }
    }
    this.movedIn.stop();
    this.walked.stop();
    await Promise.all([...this.engines.values()].map((e) => e.stop().catch(() => undefined)));
    this.engines.clear();
    this.watcherHost.close();
    await this.pipeline?.stop();
  }

  state(): Record<string, unknown> {
    const gen = this.index.generation;
    if (this.folderCache?.gen !== gen) this.folderCache = { gen, count: this.index.folderCount() };
    return {
      engine: this.ws.watcherEngine,
      ...(this.ws.watcherEngine === "parcel" ? { host_pid: this.watcherHost.pid ?? null } : {}),
      ready: this.ready,
      git: this.gitDir !== null,
      watched_files: this.index.size,
      watched_folders: this.engines.get("tree")?.watchedFolders() ?? this.folderCache.count,
      ignored_folders: this.ignoredDirs.length,
      window_ms: WINDOW_MS,
      hash_max_bytes: this.hashMax(),
      restarts: this.restarts,
      settles: { ...this.settles },
      inotify_limit_hit: this.inotifyLimitHit,
      errors: [...this.errors],
    };
  }

  private listInParallel(gitDir: string): { ignoredDirs: Promise<string[]>; listing: Promise<Listing> } {
    const ignoredDirs = listIgnoredDirs(this.git, this.ws.root).catch(() => []);
    this.rules = new IgnoreRules(); // judges nothing before the listing is in: the pipeline holds events until then
    return { ignoredDirs, listing: listGit(this.git, this.ws.root, gitDir, ignoredDirs).catch((e) => this.listWithoutGit(e)) };
  }

  private list(): Promise<Listing> {
    return this.gitDir ? listGit(this.git, this.ws.root, this.gitDir).catch((e) => this.listWithoutGit(e)) : listPlain(this.ws.root);
  }

  /** git could not list (a broken index, a repository it refuses): watching goes on with the walk and the defaults. */
  private listWithoutGit(error: unknown): Promise<Listing> {
    this.ws.log(`git ls-files failed, listing the tree without git: ${error instanceof Error ? error.message : String(error)}`);
    return listPlain(this.ws.root);
  }

  private async applyListing(listing: Listing): Promise<{ added: string[]; removed: string[] }> {
    this.rules = listing.rules;
    this.ignoredDirs = listing.ignoredDirs;
    const now = new Set(listing.files);
    const removed = this.index.paths().filter((p) => !now.has(p));
    for (const p of removed) this.index.delete(p);
    const added = listing.files.filter((p) => !this.index.has(p));
    for (const p of added) this.index.set(p, {});
    return { added, removed };
  }

  /** Whether the VFS leaves this root-relative path out (ignored, and not a tracked file): find_file and list_dir never show it. */
  ignored(rel: string, isDir = false): boolean {
    return !this.index.has(rel) && this.rules.ignores(rel, isDir);
  }

  private ignoredAbs(abs: string, isDir: boolean | undefined): boolean {
    const rel = path.relative(this.ws.root, abs).split(path.sep).join("/");
    if (!rel || rel.startsWith("..")) return false;
    if (this.index.has(rel)) return false; // tracked files stay watched even when a rule matches them
    if (isDir === undefined) return this.rules.ignores(rel, true) || this.rules.ignores(rel, false);
    return this.rules.ignores(rel, isDir);
  }

  private async startEngine(role: Role): Promise<void> {
    const engine = await createEngine(this.ws.watcherEngine, this.watcherHost);
    try {
      await engine.start(
        this.requests.get(role)!,
        (events: RawEvent[]) => {
          this.lastBatchAt = Date.now();
          this.pipeline.push(events);
          if (role === "git" && this.markerWaiters.size && events.some((e) => e.path === this.marker)) {
            for (const seen of this.markerWaiters) seen();
            this.markerWaiters.clear();
          }
        },
        (e, keptWatching) => this.onError(role, engine, e, keptWatching),
      );
      this.engines.set(role, engine);
    } catch (e) {
      await engine.stop().catch(() => undefined);
      this.onError(role, undefined, e);
    }
  }

  /** Never a crash: a log line, then a capped restart; the inotify limit is reported, not retried. */
  private onError(role: Role, engine: WatchEngine | undefined, error: unknown, keptWatching = false): void {
    const message = error instanceof Error ? error.message : String(error);
    this.errors.push(`${role}: ${message}`);
    if (this.errors.length > KEPT_ERRORS) this.errors.shift();
    if (isWatchLimitError(error)) {
      if (!this.inotifyLimitHit) {
        this.ws.log(
          `watcher (${role}): the inotify watch limit is reached (raise fs.inotify.max_user_watches); changes in some folders are not reported, everything else works: ${message}`,
        );
      }
      this.inotifyLimitHit = true;
      return;
    }
    if (keptWatching) {
      this.ws.log(`watcher (${role}): ${message}`);
      return;
    }
    this.ws.log(`watcher (${role}) failed: ${message}`);
    if (this.stopped || (engine && this.engines.get(role) !== engine)) return; // already replaced
    const wasLive = this.ready;
    this.ready = false;
    this.engines.delete(role);
    void engine?.stop().catch(() => undefined);
    // What changed since then is looked for once it is back; a failure while starting misses what came since the start.
    if (!this.downSince.has(role)) this.downSince.set(role, this.pipeline?.openedAt ? Date.now() : this.startedAt);
    if (this.restarts >= MAX_RESTARTS) {
      this.ws.log(`watcher (${role}): gave up after ${MAX_RESTARTS} restarts; file and git events are off, tools keep working`);
      this.ws.bus.emit("vfs.state", {
        live: false,
        reason: `the ${role} watcher failed ${MAX_RESTARTS + 1} times and is off; file and git events are not reported`,
      });
      return;
    }
    if (wasLive) this.ws.bus.emit("vfs.state", { live: false, reason: `the ${role} watcher failed (${message}); restarting it` });
    this.restarts++;
    setTimeout(() => void this.restart(role), RESTART_DELAY_MS * this.restarts).unref();
  }

  /**
   * A fresh engine, then what changed while none watched, pushed through the pipeline and reported before `live:true`
   * goes out: a Gateway that sees it knows what was missed has been reported (SPEC 7).
   */
  private async restart(role: Role): Promise<void> {
    if (this.stopped) return;
    await this.startEngine(role);
    if (!this.engines.has(role)) return; // failed again: onError scheduled the next try
    this.ws.log(`watcher (${role}) restarted`);
    const since = this.downSince.get(role) ?? Date.now();
    if (role === "tree") await this.reportMissed(since);
    else this.pipeline.recheckGit();
    await this.pipeline.idle();
    if (this.stopped || !this.engines.has(role)) return; // failed again meanwhile
    this.downSince.delete(role);
    this.ready = [...this.requests.keys()].every((r) => this.engines.has(r));
    if (this.ready) this.ws.bus.emit("vfs.state", { live: true, reason: `the ${role} watcher was restarted; changes made while it was down were reported` });
  }

  /** Files added, removed (listed again) and modified (by mtime) since `since`, pushed as the VFS's own findings. */
  private async reportMissed(since: number): Promise<void> {
    const { added, removed } = await this.applyListingSilently();
    const abs = (rel: string) => path.join(this.ws.root, rel);
    const modified = await modifiedSince(this.ws.root, this.index, since);
    this.pipeline.push(
      [...added.map((p) => ({ path: abs(p), kind: "create" as const })), ...removed.map((p) => ({ path: abs(p), kind: "delete" as const })), ...modified],
      true,
    );
  }

  /** Lists again, but leaves added and removed paths for the pipeline to report (it adds and removes them itself). */
  private async applyListingSilently(): Promise<{ added: string[]; removed: string[] }> {
    const listing = await this.list();
    this.rules = listing.rules;
    this.ignoredDirs = listing.ignoredDirs;
    const now = new Set(listing.files);
    return { added: listing.files.filter((p) => !this.index.has(p)), removed: this.index.paths().filter((p) => !now.has(p)) };
  }

  /** A .gitignore changed: new rules, an index that follows them (see ruleChanges), engines told. */
  private async reloadRules(): Promise<void> {
    const before = this.ignoredDirs.join("\0");
    const oldRules = this.rules;
    const listing = await this.list();
    this.rules = listing.rules;
    this.ignoredDirs = listing.ignoredDirs;
    const { added, removed } = ruleChanges(this.index.paths(), (p) => this.index.has(p), listing, oldRules);
    for (const p of removed) this.index.delete(p);
    for (const p of added) this.index.set(p, {});
    if (this.ignoredDirs.join("\0") !== before) await this.refreshTree();
  }

  /** The tree engine re-reads the tree; a failure is the engine's (restarted by onError), never the caller's window. */
  private async refreshTree(): Promise<void> {
    const engine = this.engines.get("tree");
    try {
      await engine?.refresh();
    } catch (e) {
      this.onError("tree", engine, e);
    }
  }

  /**
   * parcel can come out of an event flood with folders it no longer watches (seen under load with 3,000 new files):
   * when the flood's rescan found what no event reported (`lost`), a fresh subscription, then the flood's folders read
   * once more for what fell between the two. A flood with nothing lost (a checkout the engine kept up with) costs no
   * re-crawl of the tree.
   */
  private async afterFlood(dirs: Set<string>, since: number, lost: boolean): Promise<void> {
    if (this.ws.watcherEngine !== "parcel" || this.stopped || !lost) return;
    this.ws.log(`a flood over ${dirs.size} folders left changes no event reported (or filled an ignored folder): the tree watcher re-reads the tree`);
    const engine = this.engines.get("tree");
    try {
      // A flood often is a new ignored folder filling up (npm install, a build): the new subscription skips it.
      if (this.gitDir) this.ignoredDirs = await listIgnoredDirs(this.git, this.ws.root);
      await engine?.refresh();
    } catch (e) {
      this.onError("tree", engine, e);
      return;
    }
    this.pipeline.push(await rescanFolders(this.ws.root, dirs, since, this.index, this.rules, this.pipeline.openedAt), true);
  }

  /**
   * A folder moved in: the engine re-reads the tree, then the folder is walked again and its files pushed as created, so
   * a file written there before the new watches took hold is still reported (unchanged ones drop out by hash).
   */
  private async refreshMovedIn(dirs: string[]): Promise<void> {
    await this.refreshTree();
    await this.relist(dirs, false);
  }

  /**
   * Walks folders again and pushes what the index does not know (every file found, unless `onlyNew`: after an engine
   * refresh a known file may have changed unseen; unchanged ones drop out by hash) and the files it has that are gone.
   */
  private async relist(dirs: string[], onlyNew: boolean): Promise<void> {
    const files: string[] = [];
    for (const d of dirs) await walk(this.ws.root, d, this.rules, files, undefined, false);
    const found = new Set(files);
    const created = onlyNew ? files.filter((f) => !this.index.has(f)) : files;
    const gone = dirs.flatMap((d) => this.index.under(d)).filter((f) => !found.has(f));
    const abs = (rel: string) => path.join(this.ws.root, rel);
    // "update" for the gone ones: the pipeline reports them deleted if they are, and drops them if they came back.
    this.pipeline.push(
      [...created.map((f) => ({ path: abs(f), kind: "create" as const })), ...gone.map((f) => ({ path: abs(f), kind: "update" as const }))],
      true,
    );
  }
}

/** Collects folders and hands them over together, `delayMs` after the first one came. */
class FolderBatch {
  private timer?: NodeJS.Timeout;
  private readonly dirs = new Set<string>();
  private stopped = false;

  constructor(
    private readonly delayMs: number,
    private readonly run: (dirs: string[]) => void,
  ) {}

  add(dir: string): void {
    this.dirs.add(dir);
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const dirs = [...this.dirs];
      this.dirs.clear();
      this.run(dirs);
    }, this.delayMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

export async function startVfs(ws: VfsHost): Promise<Vfs> {
  const vfs = new Vfs(ws);
  await vfs.start();
  return vfs;
}
