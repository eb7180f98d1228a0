/**
 * Changelists (SPEC 8): named groups of changes at line granularity, kept per repository (line-store.ts) and carried
 * through every change of every file, whatever made it, by following the internal bus.
 *
 * What is kept: an entry per file that has a change in a list other than the active one, with its marks
 * (changelist-marks.ts) and the worktree version they are in. A file with no entry has every change in the active
 * list. That is the JetBrains rule for new changes ("others join the active list") kept without bookkeeping, and it is
 * why a 10,000-file checkout costs a map lookup per file: only files with an entry need work, off the bus handler.
 * Activating another list first gives an entry to every changed file that has none (its changes stay where they are).
 *
 * Following: `fs.changed` for a file with an entry re-reads it and carries its marks through the old -> new diff
 * (a reverted change loses its mark, a change next to or inside a marked range joins its list, others the active
 * list); `git.changed` with a new HEAD settles the marks on the new HEAD -> worktree diff. The bus trails the disk, so
 * every tool call syncs the files it answers about from what it read (marksFor); the background work and the calls
 * take turns per file. State is saved shortly after a background change and at once after a tool changed it.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileHash } from "../core/hash.js";
import { type FileMarks, NO_MARKS, decodeMarks, encodeMarks, markSelection, remapMarks, renameList, settleMarks } from "../core/changelist-marks.js";
import type { Selection } from "../core/stage-lines.js";
import { EMPTY } from "../core/file-versions.js";
import { type CrPolicy, type LineDiff, type LineSeq, diffLines } from "../core/line-diff.js";
import { ToolError, isNodeError } from "../errors.js";
import { WorktreeLock } from "../platform/worktree-lock.js";
import type { EventBus } from "../platform/bus.js";
import type { FsChange } from "../vfs/events.js";
import type { RepoLocation } from "./location.js";
import { readObjects } from "./objects.js";
import { ChangelistStore, STORE_VERSION, type StoredState } from "./line-store.js";
import { type LineFile, type LineFiles, changedPaths } from "./line-versions.js";
import type { GitCtx, GitHost } from "./run.js";

export const DEFAULT_LIST = "default";
/** A background change is saved this long after the last one, so a burst of edits is one write. */
const PERSIST_DELAY_MS = 200;
/** Longest list name: a name is for a person to read in one line of `text`. */
export const MAX_LIST_NAME = 100;

interface Entry {
  gitPath: string;
  /** The worktree version the marks are in, its hash (null: no file) and, until saved, its bytes. */
  base: LineSeq;
  baseHash: string | null;
  baseBytes: Buffer | null;
  headSha: string | null;
  head: LineSeq;
  cr: CrPolicy;
  marks: FileMarks;
}

/** The entry of marks settled on the version `file` read; `baseBytes` until that version is saved. */
function entryOf(file: LineFile, marks: FileMarks, baseBytes: Buffer | null): Entry {
  return {
    gitPath: file.gitPath,
    base: file.worktree.seq,
    baseHash: file.hash,
    baseBytes,
    headSha: file.head.sha,
    head: file.head.seq,
    cr: file.versions.worktreeCr,
    marks,
  };
}

/** What the tracker needs of its repository (a GitRepo is one): git, the bus it follows, the log, the file size bound. */
export interface ChangelistHost extends GitHost {
  readonly bus: Pick<EventBus, "on">;
  readonly log: (message: string) => void;
  readonly maxFileBytes: number;
  location(): Promise<RepoLocation>;
}

export class Changelists {
  private lists = [DEFAULT_LIST];
  private activeList = DEFAULT_LIST;
  private readonly entries = new Map<string, Entry>();
  /** One sync of a file's changelist state at a time (a lock of its own, not the workspace's). */
  private readonly lock = new WorktreeLock();
  private store?: ChangelistStore;
  private loading?: Promise<void>;
  private loaded = false;
  private readonly dirty = new Set<string>();
  private headMoved = false;
  private draining?: Promise<void>;
  private lastHead: string | null | undefined;
  private persistTimer?: NodeJS.Timeout;
  private saving: Promise<void> = Promise.resolve();
  private changed = false;
  /** Files re-read because the bus said they changed (for `info`: a flood of unmarked files adds nothing here). */
  private followedCount = 0;
  private readonly unsubscribe: (() => void)[] = [];
  /** The marks of a file no list has an entry for (every change in the active list), per HEAD -> worktree diff. */
  private readonly unmarked = new WeakMap<LineDiff, { list: string; marks: FileMarks }>();

  constructor(
    private readonly repo: ChangelistHost,
    private readonly files: LineFiles,
  ) {}

  /** Follows the bus from now on; the stored state is loaded at the first need (or by `ready`). */
  start(): void {
    this.unsubscribe.push(this.repo.bus.on("fs.changed", (d) => this.onFiles(d.changes)));
    this.unsubscribe.push(this.repo.bus.on("git.changed", (d) => this.onGit(d.head)));
  }

  /** Loads the stored state once (NOT_A_REPOSITORY when the root is in none; a later call tries again). */
  ready(): Promise<void> {
    this.loading ??= this.load().catch((e) => {
      this.loading = undefined;
      throw e;
    });
    return this.loading;
  }

  get active(): string {
    return this.activeList;
  }

  names(): readonly string[] {
    return this.lists;
  }

  has(name: string): boolean {
    return this.lists.includes(name);
  }

  get followed(): number {
    return this.followedCount;
  }

  /** Files with an entry (a change outside the active list), for `info`. */
  get trackedFiles(): number {
    return this.entries.size;
  }

  /** Files whose entry has a change in `list` (the active list has more: every changed file without an entry). */
  entriesWith(list: string): string[] {
    return [...this.entries].filter(([, e]) => hasList(e.marks, list)).map(([rel]) => rel);
  }

  tracked(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * The file's marks, settled on `file.versions.headToWorktree` (the version just read): its entry carried to it, or,
   * for a file without one, every change in the active list. Loads the stored state first if no call has yet.
   */
  async marksFor(file: LineFile): Promise<FileMarks> {
    await this.ready();
    return this.lock.file(file.rel, async () => {
      // A call that reads the file before the bus reports its change carries the marks as the bus would have (its
      // step first), so the marks do not depend on which of the two came first.
      const e = this.entries.get(file.rel);
      if (e && file.hash !== e.baseHash) await this.followDisk(file.rel);
      return this.sync(file);
    });
  }

  private sync(file: LineFile): FileMarks {
    const hw = file.versions.headToWorktree;
    const e = this.entries.get(file.rel);
    if (!e) return this.allActive(hw);
    let marks = e.marks;
    const cr = file.versions.worktreeCr;
    if (file.hash !== e.baseHash) {
      marks = remapMarks(e.marks, diffLines(e.base, file.worktree.seq, { cr, ids: file.versions.ids }), hw, this.activeList);
    } else if (file.head.sha !== e.headSha || cr !== e.cr) {
      marks = settleMarks(e.marks, hw, this.activeList);
    }
    this.put(file, marks);
    return marks;
  }

  /** Marks putting every change of `hw` in the active list, made once per diff (a file's versions keep theirs). */
  private allActive(hw: LineDiff): FileMarks {
    const known = this.unmarked.get(hw);
    if (known?.list === this.activeList) return known.marks;
    const marks = settleMarks(NO_MARKS, hw, this.activeList);
    this.unmarked.set(hw, { list: this.activeList, marks });
    return marks;
  }

  /** Stores marks for the version `file` read, or drops the entry when every change is in the active list. */
  private put(file: LineFile, marks: FileMarks): void {
    const before = this.entries.get(file.rel);
    if (allIn(marks, this.activeList)) {
      if (before) {
        this.entries.delete(file.rel);
        this.touched();
      }
      return;
    }
    this.entries.set(file.rel, entryOf(file, marks, before && before.baseHash === file.hash ? before.baseBytes : file.bytes));
    if (!before || before.marks !== marks || before.baseHash !== file.hash || before.headSha !== file.head.sha) this.touched();
  }

  /**
   * Moves the selected changes of `file` to `list` (made if new) and saves (SPEC git_changelist_mark); NO_CHANGE when
   * the selection holds no changed line, and then nothing changes, not even a new list.
   */
  async mark(file: LineFile, sel: Selection, list: string): Promise<{ marks: FileMarks; marked: number; created: boolean }> {
    checkName(list, "changelist");
    await this.ready();
    const out = await this.lock.file(file.rel, async () => {
      const r = markSelection(this.sync(file), file.versions.headToWorktree, sel, list);
      const created = !this.has(list);
      if (created) {
        this.lists.push(list);
        this.touched();
      }
      this.put(file, r.marks);
      return { ...r, created };
    });
    await this.persistNow();
    return out;
  }

  // ---- the lists

  /** A list made if it does not exist (git_changelist_mark); INVALID_PARAMS for a name that cannot be one. */
  async ensure(name: string): Promise<boolean> {
    checkName(name, "changelist");
    if (this.has(name)) return false;
    this.lists.push(name);
    this.touched();
    await this.persistNow();
    return true;
  }

  async create(name: string): Promise<void> {
    checkName(name, "name");
    if (this.has(name))
      throw new ToolError("ALREADY_EXISTS", `A changelist named "${name}" exists already; pick another name, or mark lines into it with git_changelist_mark.`);
    await this.ensure(name);
  }

  async rename(from: string, to: string): Promise<void> {
    this.require(from, "name");
    if (from === DEFAULT_LIST)
      throw new ToolError(
        "INVALID_PARAMS",
        `name: "${DEFAULT_LIST}" cannot be renamed; there is always a list of that name. Create a new list and mark lines into it instead.`,
      );
    checkName(to, "new_name");
    if (this.has(to)) throw new ToolError("ALREADY_EXISTS", `new_name: a changelist named "${to}" exists already.`);
    this.lists[this.lists.indexOf(from)] = to;
    if (this.activeList === from) this.activeList = to;
    for (const e of this.entries.values()) e.marks = renameList(e.marks, from, to);
    this.touched();
    await this.persistNow();
  }

  /** Deletes a list: its changes move to `default` (and `default` becomes active if it was). */
  async delete(name: string): Promise<void> {
    this.require(name, "name");
    if (name === DEFAULT_LIST) throw new ToolError("INVALID_PARAMS", `name: "${DEFAULT_LIST}" cannot be deleted; it takes the changes of deleted lists.`);
    this.lists.splice(this.lists.indexOf(name), 1);
    if (this.activeList === name) this.activeList = DEFAULT_LIST;
    for (const [rel, e] of this.entries) {
      e.marks = renameList(e.marks, name, DEFAULT_LIST);
      if (allIn(e.marks, this.activeList)) this.entries.delete(rel);
    }
    this.touched();
    await this.persistNow();
  }

  /**
   * Makes `name` the list new changes join. Changed files with no entry had their changes in the old active list:
   * each gets an entry first, so they stay there.
   */
  async activate(ctx: GitCtx, name: string): Promise<void> {
    this.require(name, "name");
    if (name === this.activeList) return;
    const old = this.activeList;
    for (const rel of await changedPaths(ctx)) {
      if (this.entries.has(rel)) continue;
      let file: LineFile;
      try {
        file = await this.files.load(ctx, rel, { mustExist: false });
      } catch (e) {
        if (e instanceof ToolError) continue; // binary, unmerged, a link: a whole-file change, in whatever list is active
        throw e;
      }
      await this.lock.file(rel, async () => {
        const marks = settleMarks(NO_MARKS, file.versions.headToWorktree, old);
        if (marks.lines.size || marks.deletions.size) this.entries.set(rel, entryOf(file, marks, file.bytes));
      });
    }
    this.activeList = name;
    for (const [rel, e] of this.entries) if (allIn(e.marks, name)) this.entries.delete(rel);
    this.touched();
    await this.persistNow();
  }

  private require(name: string, field: string): void {
    if (!this.has(name))
      throw new ToolError("NOT_FOUND", `${field}: there is no changelist "${name}" (lists: ${this.lists.join(", ")}); git_changelists shows them.`);
  }

  // ---- following the bus

  private onFiles(changes: readonly FsChange[]): void {
    if (!this.loaded || !this.entries.size) return; // the load catches up with the disk itself
    for (const c of changes) {
      const e = this.entries.get(c.path);
      if (e && c.hash !== e.baseHash) this.dirty.add(c.path);
    }
    if (this.dirty.size) this.drain();
  }

  private onGit(head: string | null): void {
    if (head === this.lastHead) return;
    this.lastHead = head;
    if (!this.loaded || !this.entries.size) return;
    this.headMoved = true;
    this.drain();
  }

  /** Resolves once the changes the bus reported so far are carried into the marks (tests and the benchmark wait on it). */
  idle(): Promise<void> {
    return this.draining ?? Promise.resolve();
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = (async () => {
      while (this.headMoved || this.dirty.size) {
        if (this.headMoved) {
          this.headMoved = false;
          await this.followHead().catch((e) => this.repo.log(`changelists: could not follow HEAD: ${e instanceof Error ? e.message : String(e)}`));
        }
        for (const rel of [...this.dirty]) {
          this.dirty.delete(rel);
          await this.lock
            .file(rel, () => this.followDisk(rel))
            .catch((e) => this.repo.log(`changelists: could not follow ${rel}: ${e instanceof Error ? e.message : String(e)}`));
        }
      }
    })().finally(() => (this.draining = undefined));
  }

  /** Carries the marks of `rel` to the file now on disk. */
  async followDisk(rel: string): Promise<void> {
    this.followedCount++;
    let bytes: Buffer | null;
    try {
      bytes = await readFile(path.join(this.repo.root, rel));
    } catch (e) {
      if (!isNodeError(e, "ENOENT") && !isNodeError(e, "ENOTDIR")) throw e;
      bytes = null;
    }
    const e = this.entries.get(rel);
    const hash = bytes ? fileHash(bytes) : null;
    if (!e || hash === e.baseHash) return;
    let seq: LineSeq = EMPTY;
    if (bytes) {
      try {
        if (bytes.length > this.repo.maxFileBytes) throw new ToolError("TOO_LARGE", "");
        seq = this.files.worktreeSeq(rel, bytes, hash!);
      } catch (err) {
        if (!(err instanceof ToolError)) throw err;
        this.entries.delete(rel); // no longer lines: its changes are one whole-file change, in the active list
        this.touched();
        return;
      }
    }
    const ids = this.files.idsOf(rel, seq.lines.length);
    const hw = diffLines(e.head, seq, { cr: e.cr, oldCr: "exact", ids });
    const marks = remapMarks(e.marks, diffLines(e.base, seq, { cr: e.cr, ids }), hw, this.activeList);
    this.replace(rel, { ...e, base: seq, baseHash: hash, baseBytes: bytes, marks });
  }

  /** Settles the marks of every entry whose HEAD blob changed on the new HEAD -> worktree diff. */
  private async followHead(): Promise<void> {
    const rels = [...this.entries.keys()];
    const objs = await readObjects(
      { repo: this.repo },
      rels.map((rel) => `HEAD:${this.entries.get(rel)!.gitPath}`),
      this.repo.maxFileBytes,
    );
    for (const [k, rel] of rels.entries()) {
      await this.lock.file(rel, async () => {
        const e = this.entries.get(rel);
        const obj = objs[k];
        const sha = obj?.type === "blob" ? obj.sha : null;
        if (!e || sha === e.headSha) return;
        let head: LineSeq = EMPTY;
        try {
          if (obj && sha) head = obj.bytes ? this.files.blobSeq(rel, sha, obj.bytes) : fail();
        } catch (err) {
          if (!(err instanceof ToolError)) throw err;
          this.entries.delete(rel);
          this.touched();
          return;
        }
        const hw = diffLines(head, e.base, { cr: e.cr, oldCr: "exact", ids: this.files.idsOf(rel, e.base.lines.length) });
        this.replace(rel, { ...e, head, headSha: sha, marks: settleMarks(e.marks, hw, this.activeList) });
      });
    }
  }

  private replace(rel: string, entry: Entry): void {
    if (allIn(entry.marks, this.activeList)) this.entries.delete(rel);
    else this.entries.set(rel, entry);
    this.touched();
  }

  // ---- persistence

  private async load(): Promise<void> {
    const repo = await this.repo.location();
    this.store = new ChangelistStore(repo.gitDir, this.repo.log);
    const { state, bases } = await this.store.load();
    this.lists = state.lists;
    this.activeList = state.active;
    const rels = Object.keys(state.files);
    const heads = await readObjects(
      { repo: this.repo },
      rels.map((rel) => `HEAD:${repo.prefix}${rel}`),
      this.repo.maxFileBytes,
    );
    for (const [k, rel] of rels.entries()) {
      const f = state.files[rel];
      try {
        const base = f.base === null ? EMPTY : this.files.worktreeSeq(rel, bases.get(f.base)!, f.base);
        const obj = heads[k];
        const headSha = obj?.type === "blob" ? obj.sha : null;
        const head = obj && headSha ? (obj.bytes ? this.files.blobSeq(rel, headSha, obj.bytes) : fail()) : EMPTY;
        let marks = decodeMarks(f.marks);
        // HEAD moved while no daemon watched: the marks (in the base's lines) settle on the new HEAD.
        if (headSha !== f.head)
          marks = settleMarks(marks, diffLines(head, base, { cr: f.cr, oldCr: "exact", ids: this.files.idsOf(rel, base.lines.length) }), this.activeList);
        if (!allIn(marks, this.activeList))
          this.entries.set(rel, { gitPath: repo.prefix + rel, base, baseHash: f.base, baseBytes: null, headSha, head, cr: f.cr, marks });
      } catch (e) {
        if (!(e instanceof ToolError)) throw e;
        this.repo.log(`changelists: ${rel} is no longer text; its marks are dropped`);
      }
    }
    this.loaded = true;
    // Whatever changed on disk while no daemon watched is carried over now.
    for (const rel of this.entries.keys()) this.dirty.add(rel);
    if (this.dirty.size) this.drain();
  }

  private touched(): void {
    this.changed = true;
    if (this.persistTimer || !this.store) return;
    this.persistTimer = setTimeout(
      () => void this.persistNow().catch((e) => this.repo.log(`changelists: could not save: ${e instanceof Error ? e.message : String(e)}`)),
      PERSIST_DELAY_MS,
    );
    this.persistTimer.unref();
  }

  /** Saves the state if it changed (one save at a time, in order). */
  persistNow(): Promise<void> {
    clearTimeout(this.persistTimer);
    this.persistTimer = undefined;
    this.saving = this.saving
      .catch(() => undefined)
      .then(async () => {
        if (!this.changed || !this.store) return;
        this.changed = false;
        const bases = new Map<string, Buffer>();
        const state: StoredState = { version: STORE_VERSION, active: this.activeList, lists: [...this.lists], files: {} };
        for (const [rel, e] of this.entries) {
          state.files[rel] = { base: e.baseHash, head: e.headSha, cr: e.cr, marks: encodeMarks(e.marks) };
          if (e.baseHash && e.baseBytes) bases.set(e.baseHash, e.baseBytes);
        }
        await this.store.save(state, bases);
        for (const e of this.entries.values()) if (e.baseHash && bases.has(e.baseHash)) e.baseBytes = null;
      });
    return this.saving;
  }

  /** Stops following the bus and saves what is pending. */
  async stop(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    await this.draining;
    await this.persistNow();
  }
}

function fail(): never {
  throw new ToolError("TOO_LARGE", "too large to follow");
}

export function hasList(marks: FileMarks, list: string): boolean {
  for (const l of marks.lines.values()) if (l === list) return true;
  for (const l of marks.deletions.values()) if (l === list) return true;
  return false;
}

function allIn(marks: FileMarks, list: string): boolean {
  for (const l of marks.lines.values()) if (l !== list) return false;
  for (const l of marks.deletions.values()) if (l !== list) return false;
  return true;
}

/** INVALID_PARAMS unless `name` can name a list: one line a person can read. */
function checkName(name: string, field: string): void {
  if (!name.trim() || name.length > MAX_LIST_NAME || /[\u0000-\u001f\u007f]/.test(name) || name !== name.trim()) {
    throw new ToolError(
      "INVALID_PARAMS",
      `${field}: a changelist name is 1 to ${MAX_LIST_NAME} characters, with no line breaks, control characters or surrounding spaces.`,
    );
  }
}
