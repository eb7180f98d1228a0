import { readdir } from "node:fs/promises";
import path from "node:path";
import { TEMP_FILE_PATTERN } from "../fs/atomic-write.js";
import { type ChangeKind, type RawChange, coalesce } from "./coalesce.js";
import { type FileIndex, parentOf } from "./file-index.js";
import { DEFAULT_HISTORY_BYTES } from "./history.js";
import { newScratch, probe } from "./file-probe.js";
import type { IgnoreRules } from "./ignore-rules.js";
import { walk } from "./listing.js";

/**
 * After an ordinary window, the folders it touched (at most this many) are listed to catch what the engine missed (a
 * file renamed before the engine watched its new folder); a flood's folders are read again when it ends instead.
 */
const VERIFY_MAX_DIRS = 16;
/**
 * Paths are resolved this many between yields to the event loop: small files are stat'ed and read synchronously (for a
 * checkout's small files the thread-pool hop of async calls costs more than the IO: 10,000 files in 280 ms instead of
 * 510 ms here), and a slice blocks the loop for a millisecond or two, so a tool call waits no longer than that.
 */
const SYNC_SLICE = 64;
/**
 * The bytes kept per window for the history of tool-made versions stop at this: the history holds 64 MB in all
 * (history.ts), so a checkout of larger files keeps what it can use, not every file it rewrote.
 */
const KEPT_CONTENT_MAX_BYTES = DEFAULT_HISTORY_BYTES;

/** A path found gone that is looked at once more before it is reported deleted. */
const HELD = Symbol("held");

/** A change as the disk has it, before attribution. */
export interface DiskChange {
  path: string;
  kind: ChangeKind;
  hash: string | null;
  /** Root-relative real path: `path`, or a link's target. */
  real: string;
  /** The bytes hashed (for the history of tool-made versions). */
  content?: Buffer;
}

export interface ResolverHooks {
  rules: () => IgnoreRules;
  /** A folder appeared with folders inside (moved in): the engine should re-read the tree. */
  onFolderMovedIn: (rel: string) => void;
  /** A folder appeared or changed and was walked (outside a flood): the VFS lists it again shortly (see vfs.ts). */
  onFolderWalked: (rel: string) => void;
  /** Folders a walk went through (for the flood's folders). */
  onFoldersSeen: (dirs: string[]) => void;
  /** Whether a changed file's bytes are wanted (for the history of a tool's versions); not kept otherwise. */
  keepContent: (rel: string) => boolean;
}

/**
 * Turns a window's raw changes (root-relative) into changes on disk and keeps the index right: coalesced per path, folders
 * expanded to their files, every path checked against the disk (an event says where to look, the disk says what
 * happened), unchanged hashes and ignored paths dropped. A path whose delete event came while it is there again (git
 * replaces a file by unlink and create, and the two events can fall in two windows) is `modified`, or nothing when its
 * content is the same: never `deleted` then `created`.
 */
export class DiskResolver {
  /** Bytes of content kept in the window being resolved (see KEPT_CONTENT_MAX_BYTES). */
  private keptBytes = 0;
  /** Where the files whose bytes are not kept are read (one at a time: resolveOne is awaited in turn). */
  private scratch?: Buffer;

  constructor(
    private readonly root: string,
    private readonly index: FileIndex,
    private readonly hashMax: number,
    private readonly hooks: ResolverHooks,
  ) {}

  /**
   * `recheck`: paths found gone earlier and held back long enough: reported deleted now if still gone, unless `holding`
   * (a flood is on: git may be between a file's unlink and its create). Others found gone are held (see pipeline.ts).
   * `gitWriting(rel)`: whether an empty `rel` may be git between the create and the write of a file it checks out (it
   * holds the index lock): such a file is held too, as its write's own event may come in a later window or never (the
   * kernel drops events in a flood), and the empty hash it had for a moment is not a version to report.
   * Returns the changes, and the paths held back, to be looked at again in the next window.
   */
  async resolve(
    raw: readonly RawChange[],
    flooding: boolean,
    recheck: ReadonlySet<string> = new Set(),
    holding = flooding,
    gitWriting: (rel: string) => boolean = () => false,
  ): Promise<{ changes: DiskChange[]; held: string[] }> {
    const coalesced = coalesce(raw);
    // Created and deleted within the window cancels out, unless it was known already (its creation reported by a
    // folder walk before the engine's own late create event came): then it is checked, and a deletion if it is gone.
    const kept = new Set(coalesced.map((c) => c.path));
    for (const r of raw) {
      if (!kept.has(r.path) && this.index.has(r.path)) {
        kept.add(r.path);
        coalesced.push({ path: r.path, kind: "deleted" });
      }
    }
    if (!flooding)
      await this.verifyFolders(
        raw.map((r) => parentOf(r.path)),
        kept,
        coalesced,
      );

    const todo = new Map(coalesced.map((c) => [c.path, c.kind]));
    const out = new Map<string, DiskChange>();
    const held: string[] = [];
    this.keptBytes = 0;
    const queue = [...todo.keys()];
    let sinceYield = 0;
    for (let i = 0; i < queue.length; i++) {
      const rel = queue[i];
      const found = await this.resolveOne(rel, todo, queue, flooding, recheck.has(rel) && !holding, gitWriting);
      if (found === HELD) held.push(rel);
      else for (const c of found) out.set(c.path, c);
      if (++sinceYield === SYNC_SLICE) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve)); // let tool calls in between
      }
    }
    return { changes: [...out.values()], held };
  }

  private async resolveOne(
    rel: string,
    todo: Map<string, ChangeKind>,
    queue: string[],
    flooding: boolean,
    confirm: boolean,
    gitWriting: (rel: string) => boolean,
  ): Promise<DiskChange[] | typeof HELD> {
    if (TEMP_FILE_PATTERN.test(rel)) return []; // a file tool's write in progress: its rename is the change
    // The bytes are read for the history only where a tool may have made the change, and while the window's budget lasts.
    const keep = this.keptBytes < KEPT_CONTENT_MAX_BYTES && this.hooks.keepContent(rel);
    const found = await probe(this.root, rel, this.hashMax, keep ? undefined : (this.scratch ??= newScratch()));
    switch (found.kind) {
      case "gone":
        // Gone now may be a replacement caught between its unlink and its create (git checkout does that to every file
        // it rewrites): still gone a while later, outside a flood, it is deleted.
        if (!confirm && (this.index.has(rel) || this.index.under(rel).length)) return HELD;
        return this.deleted(rel);
      case "unstable":
        return []; // swapped while looked at: the swap's own event brings it back
      case "other":
        // Not a workspace file (a FIFO, a device, a link leaving the root): never indexed; one that was, is gone.
        return this.index.has(rel) ? this.deleted(rel) : [];
      case "folder":
        await this.expandFolder(rel, todo, queue, flooding);
        return [];
    }
    const prev = this.index.get(rel);
    if (!prev && this.hooks.rules().ignores(rel, false)) return [];
    const { size, mtimeMs, hash } = found;
    if (size === 0 && prev?.size !== 0 && gitWriting(rel)) return HELD; // see resolve
    this.index.set(rel, { size, mtimeMs, hash });
    if (prev && (hash !== null ? prev.hash === hash : prev.hash === null && prev.size === size && prev.mtimeMs === mtimeMs)) return [];
    let content: Buffer | undefined;
    if (found.content && this.keptBytes + found.content.length <= KEPT_CONTENT_MAX_BYTES) {
      content = found.content;
      this.keptBytes += content.length;
    }
    return [{ path: rel, kind: prev ? "modified" : "created", hash, real: found.real, content }];
  }

  /** A folder that came or changed: its files are queued as created (unchanged ones drop out by hash). */
  private async expandFolder(rel: string, todo: Map<string, ChangeKind>, queue: string[], flooding: boolean): Promise<void> {
    const rules = this.hooks.rules();
    if (rules.ignores(rel, true)) return;
    const files: string[] = [];
    const dirs = await walk(this.root, rel, rules, files, undefined, false);
    // Only a folder moved in arrives with folders inside that were not announced: a mkdir -p reports each level.
    if (dirs.some((d) => !todo.has(d))) this.hooks.onFolderMovedIn(rel);
    if (!flooding) this.hooks.onFolderWalked(rel);
    this.hooks.onFoldersSeen([rel, ...dirs]);
    for (const f of files) {
      if (!todo.has(f)) {
        todo.set(f, "created");
        queue.push(f);
      }
    }
    // parcel drops a create and delete that fall within its own batch, so a file the VFS learnt of by an earlier walk
    // of this folder can vanish without a word: what the index has here and the walk did not find is checked again.
    const walked = new Set(files);
    for (const p of this.index.under(rel)) {
      if (!walked.has(p) && !todo.has(p)) {
        todo.set(p, "modified"); // resolveOne reports it deleted if it is gone, and drops it if unchanged
        queue.push(p);
      }
    }
  }

  /** A deleted file, or every watched file under a deleted folder. */
  private deleted(rel: string): DiskChange[] {
    const paths = this.index.has(rel) ? [rel] : this.index.under(rel);
    return paths.map((p) => {
      this.index.delete(p);
      return { path: p, kind: "deleted", hash: null, real: p };
    });
  }

  /** Adds files of the touched folders that the index has and the disk has not (deleted), or the other way (created). */
  private async verifyFolders(dirs: string[], kept: Set<string>, coalesced: { path: string; kind: ChangeKind }[]): Promise<void> {
    const unique = [...new Set(dirs)];
    if (unique.length > VERIFY_MAX_DIRS) return;
    const rules = this.hooks.rules();
    for (const dir of unique) {
      const entries = await readdir(path.join(this.root, dir), { withFileTypes: true }).catch(() => null);
      if (!entries) continue; // the folder is gone: its own delete event covers its files
      const present = new Set<string>();
      for (const e of entries) {
        const rel = dir ? `${dir}/${e.name}` : e.name;
        present.add(rel);
        if (e.isDirectory() || kept.has(rel) || this.index.has(rel) || rules.ignores(rel, false)) continue;
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
}
