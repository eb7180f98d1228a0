import path from "node:path";
import { accessSync, constants } from "node:fs";
import { unlink } from "node:fs/promises";
import { fileHash } from "../core/hash.js";
import type { LineIds } from "../core/line-diff.js";
import type { TextDoc } from "../core/text.js";
import { ToolError, isNodeError } from "../errors.js";
import type { ResolvedPath } from "../paths.js";
import { type StagedWrite, atomicWriteConfined, permissionBits, stageWriteConfined } from "./atomic-write.js";
import { checkDirConfined } from "./confined.js";
import type { FilesHost, MultiWriteContext, WriteContext } from "./files-host.js";
import { checkHash } from "./hash-check.js";
import { type RawFile, type TextFile, fileError, notFound, readRaw, tooLarge, withText } from "./read-text.js";
import { type MoveOutcome, type MoveRequest, moveEntry } from "./versioned-move.js";
import { tidyTempFiles } from "./temp-files.js";

export type { FilesHost, MultiWriteContext, ToolWrite, WriteContext } from "./files-host.js";

/** A current version that is not UTF-8 text: only a whole-content overwrite may replace it (SPEC 5). */
export interface RawCurrent extends RawFile {
  doc?: undefined;
  notText: "BINARY_FILE" | "ENCODING";
}

export type CurrentFile = TextFile | RawCurrent;

export interface WriteRequest<N extends { bytes: Buffer }, C extends CurrentFile = TextFile> {
  target: ResolvedPath;
  /** The hash the change was made against; undefined: the file must not exist yet (a create). */
  expected: string | undefined;
  /** Builds the new version from the current one (undefined for a create); throws ToolErrors for bad edits. */
  produce: (current: C | undefined) => N;
  /** Checked before produce: whether `produce` needs an existing file (edits do; content does not). */
  needsExisting?: boolean;
  /**
   * The current version may be binary or non-UTF-8 (a whole-content overwrite converts it): `produce` then gets a
   * RawCurrent for it. Otherwise such a file is refused (BINARY_FILE, ENCODING) and `produce` always gets text.
   */
  acceptsRaw?: boolean;
  /** Replace a read-only file (no write permission bit) on purpose; without it that is PERMISSION_DENIED. */
  forceReadonly?: boolean;
}

export interface WriteOutcome<N, C extends CurrentFile = TextFile> {
  current: C | undefined;
  next: N;
  hash: string;
}

/**
 * The one versioned write (SPEC 5): under the file's lock, read the current version, check the caller's hash, build the
 * new version, refuse a no-op or a file over the size limit, then (for real) write it atomically, attribute the change
 * to the session and tool, and record that the session saw it. file_write, conflict resolution, line rollback and LSP
 * rename all write through here; file_move moves through `move`.
 */
export class VersionedFiles {
  private readonly recent = new RecentDocs();

  constructor(private readonly ws: FilesHost) {}

  /**
   * Keeps the version a write just made of `real`, parsed, with the line table its diff hashed it into: the next write
   * of that version neither splits the file again nor hashes its lines again for the diff (on a 10,000-line file that
   * is about 3 ms of a 10-edit write, measured). Only a version with that very hash is ever taken from here.
   */
  rememberDoc(real: string, hash: string, doc: TextDoc, ids: LineIds): void {
    this.recent.set(real, hash, doc, ids);
  }

  /** The line table a remembered version's lines are in (see rememberDoc), for its next diff. */
  lineIdsOf(doc: TextDoc): LineIds | undefined {
    return this.recent.idsOf(doc);
  }

  /** At start: temp files a killed daemon left are removed, and all are kept out of git (temp-files.ts). */
  async init(): Promise<void> {
    await tidyTempFiles({ root: this.ws.root, processes: this.ws.processes, log: this.ws.log });
  }

  write<N extends { bytes: Buffer }>(ctx: WriteContext, req: WriteRequest<N> & { acceptsRaw?: false }): Promise<WriteOutcome<N>>;
  write<N extends { bytes: Buffer }>(ctx: WriteContext, req: WriteRequest<N, CurrentFile>): Promise<WriteOutcome<N, CurrentFile>>;
  write<N extends { bytes: Buffer }>(ctx: WriteContext, req: WriteRequest<N> | WriteRequest<N, CurrentFile>): Promise<WriteOutcome<N, CurrentFile>> {
    const { target } = req;
    // Without acceptsRaw the read refuses what is not text, so a produce that takes TextFile only ever gets one.
    const produce = req.produce as (current: CurrentFile | undefined) => N;
    return ctx.lockFile(target.real, async () => {
      const { current, next, hash } = await this.checkAndProduce(ctx, { ...req, produce }, req.acceptsRaw ?? false);
      if (current && next.bytes.equals(current.bytes)) {
        throw new ToolError("NO_CHANGE", `The change leaves ${target.rel} byte-identical; nothing was written. Check the content you meant to change.`, {
          hash: current.hash,
        });
      }
      if (ctx.dryRun) return { current, next, hash };
      const rel = target.realRel;
      await ctx.commit(async () => {
        this.ws.expectToolWrite({ session: ctx.sessionId, tool: ctx.toolId, rel, hash });
        try {
          await atomicWriteConfined(target.root, target.real, next.bytes, current ? permissionBits(current.stats.mode) : undefined, target.rel);
        } catch (e) {
          throw fileError(e, target, "write");
        }
      });
      this.ws.recordSeen(ctx.sessionId, rel, hash, next.bytes);
      return { current, next, hash };
    });
  }

  /**
   * The versioned write of several files, all or none (an LSP rename): with the worktree to itself, every file is read
   * and checked as `write` checks one, and every new version built, before anything is written; then every file is
   * staged (written beside its target and flushed: where a full disk shows) and only then renamed into place, and a
   * rename that fails puts back the files already renamed. Files `produce` leaves byte-identical are left alone;
   * NO_CHANGE only when that is all of them. Outcomes are in the order of `reqs`.
   */
  writeMany<N extends { bytes: Buffer }>(ctx: MultiWriteContext, reqs: readonly WriteRequest<N>[]): Promise<WriteOutcome<N>[]> {
    const reals = new Set(reqs.map((r) => r.target.real));
    if (reals.size !== reqs.length) throw new Error("writeMany: the same file twice in one batch");
    // Every write (and put-back) is announced by its hash in commitAll, as `write` does: no attribution window, which
    // would also claim an outside edit landing just after the answer.
    return ctx.exclusive(
      async () => {
        const outcomes: (WriteOutcome<N> & { req: WriteRequest<N>; changed: boolean })[] = [];
        for (const req of reqs) {
          // Without acceptsRaw the read refuses what is not text: `current` is a TextFile.
          const { current, next, hash } = (await this.checkAndProduce(ctx, req as WriteRequest<N, CurrentFile>, false)) as WriteOutcome<N>;
          outcomes.push({ req, current, next, hash, changed: !current || !next.bytes.equals(current.bytes) });
        }
        const changed = outcomes.filter((o) => o.changed);
        if (changed.length === 0) {
          throw new ToolError("NO_CHANGE", `The change leaves every file byte-identical (${reqs.map((r) => r.target.rel).join(", ")}); nothing was written.`);
        }
        if (ctx.dryRun) return outcomes.map(({ current, next, hash }) => ({ current, next, hash }));
        await ctx.commit(() => this.commitAll(ctx, changed));
        for (const o of changed) this.ws.recordSeen(ctx.sessionId, o.req.target.realRel, o.hash, o.next.bytes);
        return outcomes.map(({ current, next, hash }) => ({ current, next, hash }));
      },
      { announced: true },
    );
  }

  /**
   * What `write` and `writeMany` check of each file, under its lock: the current version (read here, so two racing
   * creations cannot both pass) exists as `expected` says, has that hash and may be written; then the new version is
   * built and must fit the size limit.
   */
  private async checkAndProduce<N extends { bytes: Buffer }>(
    ctx: WriteContext,
    req: WriteRequest<N, CurrentFile>,
    acceptsRaw: boolean,
  ): Promise<WriteOutcome<N, CurrentFile>> {
    const { target } = req;
    const current = await this.readExisting(target, acceptsRaw);
    ctx.signal.throwIfAborted();
    if (!current) {
      if (req.expected !== undefined || req.needsExisting) throw notFound(target);
      checkDirConfined(target.root, path.dirname(target.real), target.rel);
    } else if (req.expected === undefined) {
      throw new ToolError("ALREADY_EXISTS", `${target.rel} already exists; pass its hash (${current.hash}, or file_read it first) to change it.`, {
        current_hash: current.hash,
        path: target.rel,
      });
    } else {
      checkHash(this.ws, target, req.expected, current);
      checkWritable(target, current, req.forceReadonly ?? false);
    }
    const next = req.produce(current);
    if (next.bytes.length > this.ws.maxFileBytes) throw tooLarge(target, next.bytes.length, this.ws.maxFileBytes, true);
    return { current, next, hash: fileHash(next.bytes) };
  }

  private async commitAll(ctx: WriteContext, files: readonly (WriteOutcome<{ bytes: Buffer }> & { req: WriteRequest<{ bytes: Buffer }> })[]): Promise<void> {
    const staged: StagedWrite[] = [];
    try {
      for (const { req, next, current } of files) {
        const { target } = req;
        staged.push(await stageWriteConfined(target.root, target.real, next.bytes, current ? permissionBits(current.stats.mode) : undefined, target.rel));
      }
    } catch (e) {
      await Promise.all(staged.map((s) => s.discard()));
      throw e instanceof ToolError ? e : fileError(e, files[staged.length].req.target, "write");
    }
    for (const f of files) this.ws.expectToolWrite({ session: ctx.sessionId, tool: ctx.toolId, rel: f.req.target.realRel, hash: f.hash });
    let placed = 0;
    try {
      for (; placed < staged.length; placed++) await staged[placed].commit();
    } catch (e) {
      await Promise.all(staged.slice(placed + 1).map((s) => s.discard()));
      // Back to what they were: a rename that fails half-way must not leave half a rename.
      for (const { req, current } of files.slice(0, placed)) {
        const { target } = req;
        this.ws.expectToolWrite({ session: ctx.sessionId, tool: ctx.toolId, rel: target.realRel, hash: current?.hash ?? null });
        if (current) await atomicWriteConfined(target.root, target.real, current.bytes, permissionBits(current.stats.mode), target.rel);
        else await unlink(target.real).catch(() => undefined);
      }
      throw fileError(e, files[placed].req.target, "write");
    }
  }

  /** Moves a file or folder (file_move): see versioned-move.ts. */
  move(ctx: MultiWriteContext, req: MoveRequest): Promise<MoveOutcome> {
    return moveEntry(this.ws, ctx, req);
  }

  private async readExisting(target: ResolvedPath, acceptsRaw: boolean): Promise<CurrentFile | undefined> {
    // Decided here, under the write lock, not by the path check before it: two racing creations must not both pass.
    let raw: RawFile;
    try {
      raw = await readRaw(target, this.ws.maxFileBytes);
    } catch (e) {
      // Deleted between the path check and the read: it does not exist.
      if (e instanceof ToolError && e.code === "NOT_FOUND") return undefined;
      if (isNodeError(e, "ENOENT")) return undefined;
      throw e;
    }
    const known = this.recent.get(target.real, raw.hash);
    if (known) return { ...raw, doc: known };
    try {
      return withText(raw, target.rel);
    } catch (e) {
      if (acceptsRaw && e instanceof ToolError && (e.code === "BINARY_FILE" || e.code === "ENCODING")) return { ...raw, notText: e.code };
      throw e;
    }
  }
}

/**
 * A file nobody may write (mode 0444) is refused unless the caller says it overwrites on purpose: the atomic rename needs
 * only the folder's permission (and root ignores mode bits), so without this check a read-only file would be replaced
 * silently. A file the daemon's user may not write for other reasons (another owner) is refused the same way.
 */
export function checkWritable(target: ResolvedPath, current: RawFile, force: boolean, doing = "write"): void {
  if (force) return;
  const bits = permissionBits(current.stats.mode);
  const mode = bits.toString(8).padStart(4, "0");
  if ((bits & 0o222) === 0) {
    throw new ToolError(
      "PERMISSION_DENIED",
      `${target.rel} is read-only (mode ${mode}); pass force_readonly: true to ${doing} it anyway (its mode is kept), or leave it.`,
      { mode },
    );
  }
  try {
    accessSync(target.real, constants.W_OK);
  } catch (e) {
    if (isNodeError(e, "EACCES") || isNodeError(e, "EPERM")) {
      throw new ToolError(
        "PERMISSION_DENIED",
        `${target.rel} is not writable by the daemon's user (mode ${mode}, owner uid ${current.stats.uid}); change its permissions, or pass force_readonly: true to replace it anyway.`,
        { mode, errno: e.code },
      );
    }
  }
}

/** Versions kept at most, and their characters at most: the files a session is editing, not a copy of the tree. */
const RECENT_DOCS = 8;
const RECENT_DOC_CHARS = 16 * 1024 * 1024;

/** The last version written of a few files (VersionedFiles.rememberDoc), least recently used out first. */
class RecentDocs {
  private readonly byPath = new Map<string, { hash: string; doc: TextDoc; chars: number }>();
  private readonly ids = new WeakMap<TextDoc, LineIds>();
  private chars = 0;

  /** A copy of the remembered version (a writer may do what it likes with the arrays it gets), in the same table. */
  get(real: string, hash: string): TextDoc | undefined {
    const e = this.byPath.get(real);
    if (e?.hash !== hash) return undefined;
    const doc = { bom: e.doc.bom, lines: e.doc.lines.slice(), eols: e.doc.eols.slice() };
    const ids = this.ids.get(e.doc)!;
    // The same line strings: the copy's ids are one comparison each.
    ids.of(doc, e.doc);
    this.ids.set(doc, ids);
    return doc;
  }

  idsOf(doc: TextDoc): LineIds | undefined {
    return this.ids.get(doc);
  }

  set(real: string, hash: string, doc: TextDoc, ids: LineIds): void {
    this.drop(real);
    // A table only grows: past several times the file's lines, old versions' lines are most of it.
    if (ids.size > 8 * Math.max(doc.lines.length, 1000)) return;
    const chars = doc.lines.reduce((n, l) => n + l.length + 2, 0);
    this.byPath.set(real, { hash, doc, chars });
    this.ids.set(doc, ids);
    this.chars += chars;
    while (this.byPath.size > RECENT_DOCS || (this.chars > RECENT_DOC_CHARS && this.byPath.size > 1)) this.drop(this.byPath.keys().next().value!);
  }

  private drop(real: string): void {
    const e = this.byPath.get(real);
    if (!e) return;
    this.byPath.delete(real);
    this.chars -= e.chars;
  }
}
