import { type Stats, lstatSync, readFileSync, statSync } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { fileHash } from "../core/hash.js";
import { TEMP_FILE_PATTERN } from "../fs/atomic-write.js";
import type { Actor, ToolWrite, Workspace } from "../workspace.js";
import { type ChangeKind, coalesce } from "./coalesce.js";
import type { RawEvent } from "./engine.js";
import { type FileIndex, parentOf } from "./file-index.js";
import { type GitState, emptyTouch, readGitState, touchGit } from "./git-state.js";
import type { IgnoreRules } from "./ignore-rules.js";
import { type GitReader, walk } from "./listing.js";
import { gitChangedPaths, rescanFolders } from "./rescan.js";

/**
 * Raw events are gathered this long before one `fs.changed` line goes out (VS Code's FILE_CHANGES_HANDLER_DELAY),
 * counting the time the engine itself held them (parcel: 50 ms), so the pipeline's own timer waits only the rest.
 */
export const WINDOW_MS = 75;
/**
 * A window with this many raw events (over 650 a second) is a flood (a checkout, a build, an unpacked archive): the
 * next window is longer, so a flood that trickles in over seconds (chokidar stats each file) is still a few lines.
 */
export const FLOOD_EVENTS = 50;
/** The window while flooding: a 10,000-file checkout lands in a handful of lines instead of one per 75 ms. */
export const FLOOD_WINDOW_MS = 250;
/** Changes per `fs.changed` line: keeps a line around 150 KB, and a 10,000-file checkout to about ten lines. */
export const MAX_CHANGES_PER_LINE = 1_000;
/** Files above this get `hash: null` (not read to hash); the file tools' own limit (SPEC 4) when that is higher. */
export const HASH_MAX_BYTES = 10 * 1024 * 1024;
/** How long a touched folder counts as part of a flood that begins after it (a flood's first windows may be thin). */
const RECENT_DIRS_MS = 2_000;
/**
 * After an ordinary window, the folders it touched (at most this many) are listed to catch what the engine missed (a
 * file renamed before the engine watched its new folder); a flood's folders are read again when it ends instead.
 */
const VERIFY_MAX_DIRS = 16;
/**
 * Files are stat'ed, read and hashed synchronously, this many between yields to the event loop: for the small files of a
 * checkout the thread-pool hop of async fs calls costs more than the IO (10,000 files: 280 ms instead of 510 ms here),
 * and a slice blocks the loop for a millisecond or two, so a tool call waits no longer than that.
 */
const SYNC_SLICE = 64;
/** A tool write whose change never arrives (the file was changed again before the window) is forgotten after this. */
const TOOL_WRITE_TTL_MS = 30_000;
/**
 * How long after an attributed operation ends its changes may still arrive: the engine's own batch (parcel: 50 ms)
 * plus chokidar's stat of each path, with room for a loaded machine. Writes wait for the operation (WorktreeLock), so
 * what arrives meanwhile is the operation's unless a process outside the daemon wrote at that very moment.
 */
export const ATTRIBUTION_GRACE_MS = 300;

declare module "../platform/bus.js" {
  interface BusEvents {
    "fs.changed": { changes: FsChange[] };
    "git.changed": { head: string | null; branch: string | null; index: boolean; refs: boolean; operation: string | null };
  }
}

export interface FsChange {
  path: string;
  kind: ChangeKind;
  hash: string | null;
  origin: "external" | "tool";
  by: string | null;
  tool: string | null;
  stale_sessions: string[];
}

/** An operation whose changes are its actor's (a git checkout, a terminal command): open, or closed at `closedAt`. */
interface Window extends Actor {
  closedAt?: number;
}

export interface PipelineHooks {
  rules: () => IgnoreRules;
  /** A folder appeared with folders inside (moved in): the engine should re-read the tree. */
  onFolderMovedIn: (rel: string) => void;
  /** A folder appeared or changed and was walked (outside a flood): the VFS lists it again shortly (see vfs.ts). */
  onFolderWalked: (rel: string) => void;
  /** A flood is over and its folders were read again: engines that may have lost watches in it re-read the tree. */
  onFloodOver: (dirs: Set<string>, since: number) => void;
  /** A .gitignore or info/exclude changed. */
  onIgnoreChanged: () => Promise<void>;
}

function lstatOrNull(abs: string): Stats | null {
  return lstatSync(abs, { throwIfNoEntry: false }) ?? null;
}

function statOrNull(abs: string): Stats | null {
  try {
    return statSync(abs, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null; // a dangling or looping link
  }
}

function readOrNull(abs: string): Buffer | null {
  try {
    return readFileSync(abs);
  } catch {
    return null;
  }
}

interface Expected extends ToolWrite {
  at: number;
}

function change(rel: string, kind: ChangeKind, hash: string | null, actor: Actor | undefined, stale: string[]): FsChange {
  return { path: rel, kind, hash, origin: actor ? "tool" : "external", by: actor?.session ?? null, tool: actor?.tool ?? null, stale_sessions: stale };
}

/** Raw events -> window -> coalesce -> hash -> attribute -> one `fs.changed` (chunked) and `git.changed` per window. */
export class Pipeline {
  private pending: RawEvent[] = [];
  /** Events in `pending` that came from an engine (not from a rescan): what flood detection counts. */
  private pendingFromEngine = 0;
  private timer?: NodeJS.Timeout;
  /** While a flood lasts: when it began and the folders it touched, read again once it is over (see rescan.ts). */
  private flood?: { since: number; dirs: Set<string> };
  /** Folders events touched lately (and folders created), by when: a flood also re-reads those it began among. */
  private readonly recentDirs = new Map<string, number>();
  private busy = false;
  private flooding = false;
  private held = true;
  private stopped = false;
  private readonly expected = new Map<string, Expected[]>();
  private readonly windows = new Set<Window>();
  private readonly idleWaiters: (() => void)[] = [];
  /** seenAt of the window being resolved (absolute paths). */
  private batchSeenAt?: Map<string, number>;
  /** When each path of the window being gathered last had a raw event, to match it against attribution windows. */
  private seenAt = new Map<string, number>();
  private git?: GitState;
  private readonly hashMax: number;
  private firstEventAt = 0;
  /** When the pipeline opened (the watcher is live): the initial listing is the baseline for rescans. */
  openedAt = 0;
  /** Settles when the window being processed is done (tests and shutdown wait on it). */
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly ws: Workspace,
    private readonly index: FileIndex,
    private readonly gitDir: string | null,
    private readonly hooks: PipelineHooks,
    private readonly gitReader: GitReader,
    private readonly engineDelayMs = 0,
  ) {
    this.hashMax = Math.max(HASH_MAX_BYTES, ws.maxFileBytes);
  }

  /** Starts emitting; events pushed before (while the index was being listed) are kept and processed now. */
  async open(): Promise<void> {
    if (this.gitDir) this.git = await readGitState(this.gitDir);
    this.held = false;
    this.openedAt = Date.now();
    if (this.pending.length) this.schedule();
  }

  /** `rescan`: events the VFS found itself after a flood or a checkout; they do not count towards a flood. */
  push(events: RawEvent[], rescan = false): void {
    if (this.stopped || !events.length) return;
    const now = Date.now();
    for (const e of events) {
      this.pending.push(e);
      this.seenAt.set(e.path, now);
    }
    if (!rescan) {
      if (this.pendingFromEngine === 0 && !this.flood) this.firstEventAt = Date.now();
      this.pendingFromEngine += events.length;
    }
    if (!this.held) this.schedule();
  }

  /** A tool is about to write `rel`: the change that brings `hash` is its own. */
  expect(write: ToolWrite): void {
    const list = this.expected.get(write.rel) ?? [];
    list.push({ ...write, at: Date.now() });
    this.expected.set(write.rel, list);
  }

  /** Changes that arrive from now until close() and ATTRIBUTION_GRACE_MS after are `actor`'s. */
  openWindow(actor: Actor): { close(): void } {
    const window: Window = { ...actor };
    this.windows.add(window);
    return {
      close: () => {
        window.closedAt = Date.now();
        setTimeout(() => this.windows.delete(window), ATTRIBUTION_GRACE_MS + WINDOW_MS).unref();
      },
    };
  }

  /** The open (or just closed) window a change seen at `at` falls in. */
  private windowAt(at: number | undefined): Window | undefined {
    if (at === undefined) return undefined;
    for (const w of this.windows) if (w.closedAt === undefined || at <= w.closedAt + ATTRIBUTION_GRACE_MS) return w;
    return undefined;
  }

  /** Resolves once every event pushed so far has been processed and reported. */
  idle(): Promise<void> {
    if (this.stopped || (!this.pending.length && !this.busy && !this.timer)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private wakeIdle(): void {
    if (this.pending.length || this.busy || this.timer) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const w of this.idleWaiters.splice(0)) w();
    await this.running;
  }

  private schedule(): void {
    if (this.timer || this.busy) return;
    this.timer = setTimeout(() => this.flush(), this.flooding ? FLOOD_WINDOW_MS : Math.max(0, WINDOW_MS - this.engineDelayMs));
  }

  private flush(): void {
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    const seenAt = this.seenAt;
    this.seenAt = new Map();
    this.flooding = this.pendingFromEngine >= FLOOD_EVENTS;
    this.pendingFromEngine = 0;
    const flooding = this.flooding;
    this.busy = true;
    this.running = this.process(batch, flooding, seenAt)
      .catch((e) => this.ws.log(`file events lost a window: ${e instanceof Error ? e.stack : String(e)}`))
      .finally(() => {
        this.busy = false;
        // What came in meanwhile gets a window of its own from now: a slow window must not turn into a line per event.
        // During a flood a window runs even when nothing came: the kernel may have dropped the rest, and the window
        // that finds the flood over reads its folders again.
        if ((this.pending.length || this.flood) && !this.stopped) this.schedule();
        this.wakeIdle();
      });
  }

  private async process(batch: RawEvent[], flooding: boolean, seenAt: Map<string, number>): Promise<void> {
    this.batchSeenAt = seenAt;
    const touch = emptyTouch();
    let gitTouched = false;
    let ignoreChanged = false;
    const raw: { path: string; kind: RawEvent["kind"] }[] = [];
    for (const e of batch) {
      if (this.gitDir && (e.path === this.gitDir || e.path.startsWith(this.gitDir + path.sep))) {
        const rel = path.relative(this.gitDir, e.path).split(path.sep).join("/");
        gitTouched = touchGit(touch, rel) || gitTouched;
        continue;
      }
      const rel = path.relative(this.ws.root, e.path).split(path.sep).join("/");
      if (!rel || rel.startsWith("../") || rel === ".." || path.isAbsolute(rel)) continue;
      if (rel === ".git" || rel.startsWith(".git/")) continue;

      if (rel === ".gitignore" || rel.endsWith("/.gitignore")) ignoreChanged = true;
      raw.push({ path: rel, kind: e.kind });
    }
    const coalesced = coalesce(raw);
    // Created and deleted within the window cancels out, unless it was known already (its creation reported by a
    // folder walk before the engine's own late create event came): then it is a deletion.
    const kept = new Set(coalesced.map((c) => c.path));
    for (const r of raw) {
      if (!kept.has(r.path) && this.index.has(r.path)) {
        kept.add(r.path);
        coalesced.push({ path: r.path, kind: "deleted" });
      }
    }
    if (!flooding) await this.verifyFolders(raw.map((r) => parentOf(r.path)), kept, coalesced);
    const changes = await this.resolve(coalesced);
    this.batchSeenAt = undefined;
    this.noteDirs(raw.map((r) => parentOf(r.path)), flooding);
    // After resolving: the new rules apply from the next window, and files of this one are reported as created.
    if (ignoreChanged || touch.exclude) await this.hooks.onIgnoreChanged();
    for (let i = 0; i < changes.length; i += MAX_CHANGES_PER_LINE) {
      this.ws.bus.emit("fs.changed", { changes: changes.slice(i, i + MAX_CHANGES_PER_LINE) });
    }
    if (gitTouched) await this.emitGit(touch);
    this.pruneExpected();
    if (!flooding && this.flood) {
      const { since, dirs } = this.flood;
      this.flood = undefined;
      this.push(await rescanFolders(this.ws.root, dirs, since, this.index, this.hooks.rules(), this.openedAt), true);
      this.hooks.onFloodOver(dirs, since);
    }
  }

  /** Turns coalesced paths into changes: folders expand to their files, unchanged hashes and ignored paths drop out. */
  private async resolve(coalesced: { path: string; kind: ChangeKind }[]): Promise<FsChange[]> {
    const todo = new Map(coalesced.map((c) => [c.path, c.kind]));
    const out = new Map<string, FsChange>();
    const queue = [...todo.keys()];
    let sinceYield = 0;
    for (let i = 0; i < queue.length; i++) {
      for (const c of await this.resolveOne(queue[i], todo.get(queue[i])!, todo, queue)) out.set(c.path, c);
      if (++sinceYield === SYNC_SLICE) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve)); // let tool calls in between
      }
    }
    return [...out.values()];
  }

  private async resolveOne(rel: string, kind: ChangeKind, todo: Map<string, ChangeKind>, queue: string[]): Promise<FsChange[]> {
    if (TEMP_FILE_PATTERN.test(rel)) return []; // a file tool's write in progress: its rename is the change
    const abs = path.join(this.ws.root, rel);
    if (kind === "deleted") return this.deleted(rel);
    const st = lstatOrNull(abs);
    if (!st) return this.deleted(rel);
    if (st.isDirectory()) {
      if (this.hooks.rules().ignores(rel, true)) return [];
      const files: string[] = [];
      const dirs = await walk(this.ws.root, rel, this.hooks.rules(), files, undefined, false);
      // Only a folder moved in arrives with folders inside that were not announced: a mkdir -p reports each level.
      if (dirs.some((d) => !todo.has(d))) this.hooks.onFolderMovedIn(rel);
      if (!this.flooding) this.hooks.onFolderWalked(rel);
      this.recentDirs.set(rel, Date.now());
      for (const d of dirs) this.recentDirs.set(d, Date.now());
      for (const f of files) {
        if (!todo.has(f)) {
          todo.set(f, "created");
          queue.push(f);
        }
      }
      // parcel drops a create and delete that fall within its own batch, so a file the VFS learnt of by an earlier walk
      // of this folder can vanish without a word: what the index has here and the walk did not find is checked again.
      const found = new Set(files);
      for (const p of this.index.under(rel)) {
        if (!found.has(p) && !todo.has(p)) {
          todo.set(p, "modified"); // resolveOne reports it deleted if it is gone, and drops it if unchanged
          queue.push(p);
        }
      }
      return [];
    }
    const prev = this.index.get(rel);
    if (!prev && this.hooks.rules().ignores(rel, false)) return [];
    // A link is hashed through its target; a link to a folder, a FIFO or a socket is not a file to report.
    const target = st.isSymbolicLink() ? statOrNull(abs) : st;
    if (!target?.isFile()) return prev ? this.deleted(rel) : [];
    const { size, mtimeMs } = target;
    let content: Buffer | null = null;
    let hash: string | null = null;
    if (size <= this.hashMax) {
      content = readOrNull(abs);
      if (!content) return this.deleted(rel); // vanished between the stat and the read (or unreadable)
      hash = fileHash(content);
    }
    this.index.set(rel, { size, mtimeMs, hash });
    if (prev && (hash !== null ? prev.hash === hash : prev.size === size && prev.mtimeMs === mtimeMs)) return [];
    const change = this.attribute(rel, prev ? "modified" : "created", hash);
    if (change.origin === "tool" && hash && content) this.ws.history.put(hash, content);
    return [change];
  }

  /** A deleted file, or every watched file under a deleted folder. */
  private deleted(rel: string): FsChange[] {
    const paths = this.index.has(rel) ? [rel] : this.index.under(rel);
    return paths.map((p) => {
      this.index.delete(p);
      return this.attribute(p, "deleted", null);
    });
  }

  private attribute(rel: string, kind: ChangeKind, hash: string | null): FsChange {
    const list = this.expected.get(rel);
    const i = list ? list.findIndex((w) => w.hash === hash) : -1;
    let actor: Actor | undefined;
    if (list && i >= 0) {
      actor = list[i];
      list.splice(0, i + 1); // this write and any older one the same window overtook
      if (!list.length) this.expected.delete(rel);
      // The writer saw what it wrote: it is not stale.
      return change(rel, kind, hash, actor, this.ws.views.staleSessions(rel, hash, actor.session));
    }
    // A file inside a folder that came or went has no event of its own: its folder's time stands for it.
    actor = this.windowAt(this.eventTime(rel));
    // An operation's session did not see what the operation wrote (a checkout, a merge of others' work): it stays stale.
    return change(rel, kind, hash, actor, this.ws.views.staleSessions(rel, hash));
  }

  private eventTime(rel: string): number | undefined {
    const seen = this.batchSeenAt;
    if (!seen) return undefined;
    for (let p = rel; ; p = parentOf(p)) {
      const at = seen.get(path.join(this.ws.root, p));
      if (at !== undefined) return at;
      if (p === "") break;
    }
    // Found by listing a folder this window's events touched (verifyFolders) before its own event came (a command that
    // made build/ and removed old.txt): the window's latest event stands for it.
    let latest: number | undefined;
    for (const at of seen.values()) if (latest === undefined || at > latest) latest = at;
    return latest;
  }

  /** Adds files of the touched folders that the index has and the disk has not (deleted), or the other way (created). */
  private async verifyFolders(dirs: string[], kept: Set<string>, coalesced: { path: string; kind: ChangeKind }[]): Promise<void> {
    const unique = [...new Set(dirs)];
    if (unique.length > VERIFY_MAX_DIRS) return;
    for (const dir of unique) {
      const entries = await readdir(path.join(this.ws.root, dir), { withFileTypes: true }).catch(() => null);
      if (!entries) continue; // the folder is gone: its own delete event covers its files
      const present = new Set<string>();
      for (const e of entries) {
        const rel = dir ? `${dir}/${e.name}` : e.name;
        present.add(rel);
        if (e.isDirectory() || kept.has(rel) || this.index.has(rel) || this.hooks.rules().ignores(rel, false)) continue;
        kept.add(rel);
        coalesced.push({ path: rel, kind: "created" });
      }
      for (const rel of this.index.children(dir)) {
        if (!present.has(rel) && !kept.has(rel)) {
          kept.add(rel);
          coalesced.push({ path: rel, kind: "deleted" });
        }
      }
    }
  }

  /** Remembers the folders a window touched; while flooding, they and the recent ones are the flood's. */
  private noteDirs(dirs: string[], flooding: boolean): void {
    const now = Date.now();
    for (const d of dirs) this.recentDirs.set(d, now);
    if (flooding) {
      this.flood ??= { since: this.firstEventAt, dirs: new Set() };
      for (const d of this.recentDirs.keys()) this.flood.dirs.add(d);
      this.recentDirs.clear();
    } else {
      for (const [d, at] of this.recentDirs) if (now - at > RECENT_DIRS_MS) this.recentDirs.delete(d);
    }
  }

  /**
   * Drops paths whose last hash the index never learnt and that were not modified since the watcher went live (a file
   * edited before the daemon started and now committed): those are not changes, and hashing could not tell.
   */
  private async changedSinceOpen(events: RawEvent[]): Promise<RawEvent[]> {
    const keep = await Promise.all(
      events.map(async (e) => {
        const entry = this.index.get(path.relative(this.ws.root, e.path).split(path.sep).join("/"));
        if (!entry || entry.hash !== undefined) return true;
        const st = await lstat(e.path).catch(() => null);
        return !st || st.mtimeMs >= this.openedAt;
      }),
    );
    return events.filter((_, i) => keep[i]);
  }

  private pruneExpected(): void {
    const cutoff = Date.now() - TOOL_WRITE_TTL_MS;
    for (const [rel, list] of this.expected) {
      const kept = list.filter((w) => w.at >= cutoff);
      if (kept.length) this.expected.set(rel, kept);
      else this.expected.delete(rel);
    }
  }

  private async emitGit(touch: ReturnType<typeof emptyTouch>): Promise<void> {
    if (!this.gitDir) return;
    const before = this.git;
    const now = await readGitState(this.gitDir);
    this.git = now;
    const index = touch.index && now.indexHash !== before?.indexHash;
    const moved = now.head !== before?.head || now.branch !== before?.branch || now.operation !== before?.operation;
    if (!index && !touch.refs && !moved) return; // e.g. `git status` rewrote an identical index
    // A checkout's file events may have been dropped by the kernel (see rescan.ts): git knows which paths it changed.
    if (before?.head && now.head && before.head !== now.head) this.push(await this.changedSinceOpen(await gitChangedPaths(this.gitReader, this.ws.root, before.head, now.head)), true);
    this.ws.bus.emit("git.changed", { head: now.head, branch: now.branch, index, refs: touch.refs, operation: now.operation });
  }
}
