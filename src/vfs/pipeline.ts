import { existsSync, statSync } from "node:fs";
import path from "node:path";
import type { BusEvents } from "../platform/bus.js";
import { Attribution } from "./attribution.js";
import type { RawChange } from "./coalesce.js";
import type { RawEvent } from "./engine.js";
import { type Batch, EventWindow, WINDOW_MS } from "./event-window.js";
import type { FsChange } from "./events.js";
import { type FileIndex, parentOf } from "./file-index.js";
import { FloodTracker } from "./flood.js";
import { GitEvents } from "./git-events.js";
import type { ContentHistory } from "./history.js";
import type { GitReader } from "./listing.js";
import { absOf, relOf } from "./rel-path.js";
import { rescanFolders } from "./rescan.js";
import { DiskResolver, type ResolverHooks } from "./resolver.js";
import type { Actor, ToolWrite } from "./types.js";
import type { SessionViews } from "./views.js";

/** Changes per `fs.changed` line: keeps a line around 150 KB, and a 10,000-file checkout to about ten lines. */
export const MAX_CHANGES_PER_LINE = 1_000;
/**
 * A file found gone is reported deleted only once it is still gone this long after (and no flood is on): git rewrites a
 * file by unlink and create, and a loaded machine can pause it between the two for tens of milliseconds, so a window
 * that looks right then must not report a deletion that the next one would undo as a creation.
 */
export const DELETE_CONFIRM_MS = 250;
/**
 * While git holds the index lock it may be between a file's unlink and its create for longer than DELETE_CONFIRM_MS (a
 * loaded machine deschedules it): deletions wait for the lock to go, but no longer than this (a lock left by a git
 * that crashed stays until someone removes it).
 */
export const GIT_LOCK_HOLD_MAX_MS = 10_000;
/**
 * A flood is not over while git holds the index lock (a checkout writing the worktree), however thin its windows: on a
 * loaded machine git writes a 50,000-file checkout over minutes, at times fewer than FLOOD_EVENTS a window, and each
 * window that looked like the end read the flood's folders again, found the files whose events were still on their
 * way, took them for lost and had the tree re-crawled: dozens of times a checkout. A lock left by a git that crashed
 * holds a flood no longer than this; one older than GIT_LOCK_FRESH_MS when the flood began holds none.
 */
export const GIT_LOCK_FLOOD_MAX_MS = 10 * 60_000;
/** git takes the index lock as it starts and writes files soon after: a lock made this long before a flood is not its. */
export const GIT_LOCK_FRESH_MS = 2 * 60_000;
/** Files above this get `hash: null` (not read to hash); the file tools' own limit (SPEC 4) when that is higher. */
export const HASH_MAX_BYTES = 10 * 1024 * 1024;

/** TOOL_LAYER_TRACE_FLOOD=1: each window's and flood rescan's times go to the log (see docs/benchmarks.md). */
const TRACE_FLOOD = process.env.TOOL_LAYER_TRACE_FLOOD === "1";

/** What the pipeline needs from the daemon around it, and nothing more. */
export interface PipelineSink {
  readonly root: string;
  /** Files above this are reported with `hash: null` (see HASH_MAX_BYTES). */
  readonly hashMaxBytes: number;
  /** Who saw which version: `stale_sessions`. */
  readonly views: Pick<SessionViews, "staleSessions">;
  /** The versions an operation (a checkout) made, so its session's next read can be a diff. */
  readonly history: Pick<ContentHistory, "put">;
  /** Out through the bus. */
  emit<K extends "fs.changed" | "git.changed">(event: K, data: BusEvents[K]): void;
  log(message: string): void;
}

export interface PipelineHooks extends Omit<ResolverHooks, "onFoldersSeen" | "keepContent"> {
  /**
   * A flood is over and its folders were read again. `lost`: the rescan found changes no event reported (the kernel
   * dropped events, and an engine may have lost watches with them), or an ignored folder filled up (npm install) whose
   * new watches are waste: the tree is worth re-reading then, and only then.
   */
  onFloodOver: (dirs: Set<string>, since: number, lost: boolean) => void;
  /** A .gitignore or info/exclude changed. */
  onIgnoreChanged: () => Promise<void>;
}

export interface PipelineOptions {
  index: FileIndex;
  gitDir: string | null;
  git: GitReader;
  hooks: PipelineHooks;
  /** How long the engine holds events before handing them over (the window waits only the rest). */
  engineDelayMs?: number;
}

/**
 * Raw events -> window (event-window.ts) -> changes on disk (resolver.ts) -> who made them (attribution.ts) -> one
 * `fs.changed` per window, in lines of at most MAX_CHANGES_PER_LINE, and `git.changed` (git-events.ts). After a flood
 * its folders are read again (flood.ts, rescan.ts).
 */
export class Pipeline {
  private readonly window: EventWindow;
  private readonly resolver: DiskResolver;
  private readonly attribution: Attribution;
  private readonly flood = new FloodTracker();
  private readonly gitEvents?: GitEvents;
  private readonly index: FileIndex;
  private readonly gitDir: string | null;
  /** The git dir with its separator: made once, not per event (a flood's hundred thousand of them). */
  private readonly gitPrefix: string | null;
  private readonly hooks: PipelineHooks;
  /** Paths found gone (see DELETE_CONFIRM_MS), or empty while git writes, held back: since when, and when their event came. */
  private held = new Map<string, { since: number; seenAt: number | undefined }>();
  /** When the pipeline opened (the watcher is live): the initial listing is the baseline for rescans. */
  openedAt = 0;
  private opened = false;
  private stopped = false;
  /** See afterWindows. */
  private readonly after = new Set<Promise<void>>();

  constructor(
    private readonly sink: PipelineSink,
    options: PipelineOptions,
  ) {
    this.index = options.index;
    this.gitDir = options.gitDir;
    this.gitPrefix = options.gitDir && options.gitDir + path.sep;
    this.hooks = options.hooks;
    this.window = new EventWindow((batch) => this.process(batch), { engineDelayMs: options.engineDelayMs, again: () => this.flood.active, log: sink.log });
    this.attribution = new Attribution(sink.views);
    this.resolver = new DiskResolver(sink.root, options.index, sink.hashMaxBytes, {
      ...options.hooks,
      onFoldersSeen: (dirs) => this.flood.touched(dirs),
      keepContent: (rel) => this.attribution.mayBeTools(rel),
    });
    if (options.gitDir) {
      const delayMs = Math.max(0, WINDOW_MS - (options.engineDelayMs ?? 0));
      this.gitEvents = new GitEvents(
        options.gitDir,
        sink.root,
        options.git,
        options.index,
        (data) => sink.emit("git.changed", data),
        () => this.openedAt,
        (paths) => {
          this.trace(`git recheck paths=${paths.length}`);
          this.afterWindows(async () => {
            this.trace("git stale start");
            const stale = await this.gitEvents!.stale(paths, (rel) => this.flood.seen(parentOf(rel), this.index.get(rel)?.mtimeMs));
            this.trace(`git stale end found=${stale.length}`);
            return stale;
          });
        },
        delayMs,
      );
    }
  }

  /** Starts emitting; events pushed before (while the index was being listed) are kept and processed now. */
  async open(): Promise<void> {
    this.gitEvents?.open();
    this.openedAt = Date.now();
    this.opened = true;
    this.window.open();
  }

  /**
   * `rescan`: events the VFS found itself after a flood or a checkout; they do not count towards a flood. Events in the
   * git folder go to git's own lane (git-events.ts); info/exclude, which changes the rules, to the window too.
   */
  push(events: readonly RawEvent[], rescan = false): void {
    const { gitDir, gitPrefix } = this;
    if (!gitDir || !gitPrefix || !this.gitEvents) return this.window.push(events, rescan);
    const tree: RawEvent[] = [];
    for (const e of events) {
      if (e.path !== gitDir && !e.path.startsWith(gitPrefix)) tree.push(e);
      else if (gitRel(gitDir, e.path) === "info/exclude")
        tree.push(e); // the window reloads the rules
      else if (this.opened) this.gitEvents.push(gitRel(gitDir, e.path)); // before, open() reads the state they made
    }
    this.window.push(tree, rescan);
  }

  /** A tool is about to write `write.rel`: the change that brings `write.hash` is its own. */
  expect(write: ToolWrite): void {
    this.attribution.expect(write);
  }

  /** Changes seen from now until close() and ATTRIBUTION_GRACE_MS after are `actor`'s. */
  openWindow(actor: Actor): { close(): void } {
    return this.attribution.openWindow(actor);
  }

  /** Resolves once every event pushed so far has been processed and reported (and what that pushed in turn). */
  async idle(): Promise<void> {
    do {
      await this.gitEvents?.idle();
      await Promise.all(this.after);
      await this.window.idle();
    } while (this.after.size || this.gitEvents?.busy);
  }

  /** git's state changed unseen (its watcher was down): read it, and report what moved. */
  recheckGit(): void {
    this.gitEvents?.pushAll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.gitEvents?.stop();
    await this.window.stop();
  }

  /**
   * Work that follows the windows instead of holding them: the rescan after a flood, the paths a moved HEAD may have
   * changed. Its findings go through the window like any event (what was reported already drops out by hash).
   */
  private afterWindows(find: () => Promise<RawEvent[]>, then?: (found: RawEvent[]) => void): void {
    const job: Promise<void> = (async () => {
      await this.window.idle();
      const found = await find();
      if (this.stopped) return;
      this.push(found, true);
      then?.(found);
    })()
      .catch((e) => this.sink.log(`a rescan failed: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => this.after.delete(job));
    this.after.add(job);
  }

  /** Whether a git command is rewriting the worktree (it holds the index lock), for the deletions held since a while. */
  private gitWriting(held: ReadonlyMap<string, { since: number }>, now: number): boolean {
    if (!this.gitDir || !held.size) return false;
    let oldest = now;
    for (const h of held.values()) oldest = Math.min(oldest, h.since);
    return now - oldest < GIT_LOCK_HOLD_MAX_MS && existsSync(path.join(this.gitDir, "index.lock"));
  }

  /**
   * Whether git may be between the create and the write of `rel` (an empty file, see DiskResolver.resolve): it holds the
   * index lock, and has not held `rel` back longer than a deletion would be (GIT_LOCK_HOLD_MAX_MS).
   */
  private gitMayBeWriting(held: ReadonlyMap<string, { since: number }>, rel: string, now: number): boolean {
    if (!this.gitDir || now - (held.get(rel)?.since ?? now) >= GIT_LOCK_HOLD_MAX_MS) return false;
    return existsSync(path.join(this.gitDir, "index.lock"));
  }

  /** Whether the flood in progress is git's, still writing (see GIT_LOCK_FLOOD_MAX_MS). */
  private gitStillWriting(now: number): boolean {
    const since = this.flood.since;
    if (this.gitDir === null || since === undefined || now - since >= GIT_LOCK_FLOOD_MAX_MS) return false;
    const lock = statSync(path.join(this.gitDir, "index.lock"), { throwIfNoEntry: false });
    return lock !== undefined && lock.mtimeMs >= since - GIT_LOCK_FRESH_MS;
  }

  /** A line of the flood trace (TRACE_FLOOD), stamped with the wall clock a bench can match against git's exit. */
  private trace(what: string): void {
    if (TRACE_FLOOD) this.sink.log(`flood-trace ${Date.now()} ${what}`);
  }

  private async process(batch: Batch): Promise<void> {
    const flushedAt = Date.now();
    let ignoreChanged = false;
    const raw: RawChange[] = [];
    const { root } = this.sink;
    for (const e of batch.events) {
      if (this.gitDir && this.gitPrefix && (e.path === this.gitDir || e.path.startsWith(this.gitPrefix))) {
        ignoreChanged ||= gitRel(this.gitDir, e.path) === "info/exclude"; // the rest is git's lane's (see push)
        continue;
      }
      const rel = relOf(root, e.path);
      if (!rel || rel === ".." || rel.startsWith("../") || path.isAbsolute(rel)) continue;
      if (rel === ".git" || rel.startsWith(".git/")) continue;
      if (isIgnoreFile(rel)) ignoreChanged = true;
      raw.push({ path: rel, kind: e.kind });
    }
    const recheck = this.held;
    this.held = new Map();
    const due = new Set([...recheck].filter(([, h]) => flushedAt - h.since >= DELETE_CONFIRM_MS).map(([rel]) => rel));
    const holding = batch.flooding || this.flood.active || this.gitWriting(recheck, flushedAt);
    const onDisk = await this.resolver.resolve(raw, batch.flooding, due, holding, (rel) => this.gitMayBeWriting(recheck, rel, flushedAt));
    for (const rel of onDisk.held) this.held.set(rel, recheck.get(rel) ?? { since: flushedAt, seenAt: seenAt(root, batch.seenAt, rel) });
    // A .gitignore can have no event of its own: found by the walk of a new folder, or by listing a touched one.
    if (onDisk.changes.some((c) => isIgnoreFile(c.path))) ignoreChanged = true;
    let changes: FsChange[] = [];
    for (const c of onDisk.changes) {
      const when = heldAt(recheck, c.path) ?? seenAt(root, batch.seenAt, c.path);
      const who = this.attribution.attribute(c.path, c.real, c.hash, when);
      changes.push({ path: c.path, kind: c.kind, hash: c.hash, ...who });
      if (who.origin === "tool" && c.hash && c.content) this.sink.history.put(c.hash, c.content);
    }
    const over = this.flood.afterWindow(
      raw.map((r) => parentOf(r.path)),
      batch.flooding || this.gitStillWriting(flushedAt),
      batch.firstEventAt,
    );
    // Before this window is reported: once a .gitignore's change is out, the index follows it. A file this window found
    // that the new rules ignore (walked with its folder's new .gitignore) is left out, as the index now leaves it out.
    if (ignoreChanged) {
      await this.hooks.onIgnoreChanged();
      changes = changes.filter((c) => c.kind !== "created" || this.index.has(c.path));
    }
    for (let i = 0; i < changes.length; i += MAX_CHANGES_PER_LINE) {
      this.sink.emit("fs.changed", { changes: changes.slice(i, i + MAX_CHANGES_PER_LINE) });
    }
    if (TRACE_FLOOD && (batch.flooding || this.flood.active || over || changes.length))
      this.trace(
        `window flushed=${flushedAt} events=${batch.events.length} flooding=${batch.flooding} active=${this.flood.active} over=${over !== undefined} changes=${changes.length}`,
      );
    if (this.held.size)
      this.push(
        [...this.held.keys()].map((rel) => ({ path: path.join(root, rel), kind: "delete" as const })),
        true,
      );
    // A deletion held back is attributed when its event came: the windows it may fall in stay until it is reported.
    let keepFrom = flushedAt;
    for (const h of this.held.values()) keepFrom = Math.min(keepFrom, h.seenAt ?? flushedAt);
    this.attribution.prune(keepFrom);
    if (over) {
      const rules = this.hooks.rules();
      // once, after the windows in flight: a flood's last events may still be on their way
      this.afterWindows(
        async () => {
          this.trace(`rescan start dirs=${over.dirs.size}`);
          try {
            const found = await rescanFolders(root, over.dirs, over.since, this.index, rules, this.openedAt);
            this.trace(`rescan end found=${found.length}`);
            return found;
          } finally {
            this.flood.reread(over);
          }
        },
        (found) => this.hooks.onFloodOver(over.dirs, over.since, found.length > 0 || [...over.dirs].some((d) => d !== "" && rules.ignores(d, true))),
      );
    }
  }
}

/** `abs` relative to the git dir, with `/`. */
function gitRel(gitDir: string, abs: string): string {
  return path.relative(gitDir, abs).split(path.sep).join("/");
}

function isIgnoreFile(rel: string): boolean {
  return rel === ".gitignore" || rel.endsWith("/.gitignore");
}

/** For a path held back (or under a folder held back): when its event came. */
function heldAt(held: Map<string, { seenAt: number | undefined }>, rel: string): number | undefined {
  if (!held.size) return undefined;
  for (let p = rel; ; p = parentOf(p)) {
    if (held.has(p) || p === "") return held.get(p)?.seenAt;
  }
}

/**
 * When a path's event came; a file inside a folder that came or went has none of its own: its folder's time stands.
 * One found by listing a folder this window's events touched, before its own event came (a command that made build/
 * and removed old.txt), takes the window's latest event time.
 */
function seenAt(root: string, seen: Map<string, number>, rel: string): number | undefined {
  for (let p = rel; ; p = parentOf(p)) {
    const at = seen.get(absOf(root, p));
    if (at !== undefined) return at;
    if (p === "") break;
  }
  let latest: number | undefined;
  for (const at of seen.values()) if (latest === undefined || at > latest) latest = at;
  return latest;
}
