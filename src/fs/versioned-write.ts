import { type Stats, statSync } from "node:fs";
import { unlink } from "node:fs/promises";
import path from "node:path";
import { fileHash } from "../core/hash.js";
import { ToolError, isNodeError } from "../errors.js";
import type { ResolvedPath } from "../paths.js";
import type { ToolContext } from "../tools/tool.js";
import type { Workspace } from "../workspace.js";
import { type StagedWrite, atomicWrite, permissionBits, stageWrite } from "./atomic-write.js";
import { checkHash } from "./hash-check.js";
import { type TextFile, notFound, readText } from "./read-text.js";

/** The part of a call the write needs: who writes, whether for real, and the dispatcher's commit and file lock. */
export type WriteContext = Pick<ToolContext, "sessionId" | "toolId" | "dryRun" | "signal" | "commit" | "lockFile">;

export interface WriteRequest<N extends { bytes: Buffer }> {
  target: ResolvedPath;
  /** The hash the change was made against; undefined: the file must not exist yet (a create). */
  expected: string | undefined;
  /** Builds the new version from the current one (undefined for a create); throws ToolErrors for bad edits. */
  produce: (current: TextFile | undefined) => N;
  /** Checked before produce: whether `produce` needs an existing file (edits do; content does not). */
  needsExisting?: boolean;
}

export interface WriteOutcome<N> {
  current: TextFile | undefined;
  next: N;
  hash: string;
}

/** writeMany holds the whole worktree (ctx.exclusive) instead of one file's lock. */
export type MultiWriteContext = WriteContext & Pick<ToolContext, "exclusive">;

/**
 * The one versioned write (SPEC 5): under the file's lock, read the current version, check the caller's hash, build the
 * new version, refuse a no-op, then (for real) write it atomically, attribute the change to the session and tool, and
 * record that the session saw it. file_write, conflict resolution, line rollback and LSP rename all write through here.
 */
export class VersionedFiles {
  constructor(private readonly ws: Pick<Workspace, "maxFileBytes" | "history" | "views" | "paths" | "expectToolWrite" | "recordSeen">) {}

  write<N extends { bytes: Buffer }>(ctx: WriteContext, req: WriteRequest<N>): Promise<WriteOutcome<N>> {
    const { target } = req;
    return ctx.lockFile(target.real, async () => {
      const current = await this.readExisting(target);
      ctx.signal.throwIfAborted();
      if (!current) {
        if (req.expected !== undefined || req.needsExisting) throw notFound(target);
        checkParents(target.rel, target.real);
      } else if (req.expected === undefined) {
        throw new ToolError("ALREADY_EXISTS", `${target.rel} already exists; pass its hash (${current.hash}, or file_read it first) to change it.`, { current_hash: current.hash });
      } else {
        checkHash(this.ws, target, req.expected, current);
      }
      const next = req.produce(current);
      if (current && next.bytes.equals(current.bytes)) {
        throw new ToolError("NO_CHANGE", `The change leaves ${target.rel} byte-identical; nothing was written. Check the content you meant to change.`, { hash: current.hash });
      }
      const hash = fileHash(next.bytes);
      if (ctx.dryRun) return { current, next, hash };
      const rel = realRel(this.ws, target);
      await ctx.commit(async () => {
        this.ws.expectToolWrite({ session: ctx.sessionId, tool: ctx.toolId, rel, hash });
        await atomicWrite(target.real, next.bytes, current ? permissionBits(current.stats.mode) : undefined);
      });
      this.ws.recordSeen(ctx.sessionId, rel, hash, next.bytes);
      return { current, next, hash };
    });
  }

  /**
   * The versioned write of several files, all or none (an LSP rename): with the worktree to itself, every file is read
   * and checked against its hash and every new version built before anything is written; then every file is staged
   * (written beside its target and flushed: where a full disk shows) and only then renamed into place, and a rename
   * that fails puts back the files already renamed. Files `produce` leaves byte-identical are left alone; NO_CHANGE only
   * when that is all of them. Outcomes are in the order of `reqs`.
   */
  writeMany<N extends { bytes: Buffer }>(ctx: MultiWriteContext, reqs: readonly WriteRequest<N>[]): Promise<WriteOutcome<N>[]> {
    const reals = new Set(reqs.map((r) => r.target.real));
    if (reals.size !== reqs.length) throw new Error("writeMany: the same file twice in one batch");
    return ctx.exclusive(async () => {
      const outcomes: (WriteOutcome<N> & { req: WriteRequest<N>; changed: boolean })[] = [];
      for (const req of reqs) {
        const { target } = req;
        const current = await this.readExisting(target);
        ctx.signal.throwIfAborted();
        if (!current) {
          if (req.expected !== undefined || req.needsExisting) throw notFound(target);
          checkParents(target.rel, target.real);
        } else if (req.expected === undefined) {
          throw new ToolError("ALREADY_EXISTS", `${target.rel} already exists; pass its hash (${current.hash}, or file_read it first) to change it.`, { current_hash: current.hash, path: target.rel });
        } else {
          checkHash(this.ws, target, req.expected, current);
        }
        const next = req.produce(current);
        outcomes.push({ req, current, next, hash: fileHash(next.bytes), changed: !current || !next.bytes.equals(current.bytes) });
      }
      const changed = outcomes.filter((o) => o.changed);
      if (changed.length === 0) {
        throw new ToolError("NO_CHANGE", `The change leaves every file byte-identical (${reqs.map((r) => r.target.rel).join(", ")}); nothing was written.`);
      }
      if (ctx.dryRun) return outcomes.map(({ current, next, hash }) => ({ current, next, hash }));
      await ctx.commit(() => this.commitAll(ctx, changed));
      for (const o of changed) this.ws.recordSeen(ctx.sessionId, realRel(this.ws, o.req.target), o.hash, o.next.bytes);
      return outcomes.map(({ current, next, hash }) => ({ current, next, hash }));
    });
  }

  private async commitAll(ctx: WriteContext, files: readonly (WriteOutcome<{ bytes: Buffer }> & { req: WriteRequest<{ bytes: Buffer }> })[]): Promise<void> {
    const staged: StagedWrite[] = [];
    try {
      for (const f of files) staged.push(await stageWrite(f.req.target.real, f.next.bytes, f.current ? permissionBits(f.current.stats.mode) : undefined));
    } catch (e) {
      await Promise.all(staged.map((s) => s.discard()));
      throw e;
    }
    for (const f of files) this.ws.expectToolWrite({ session: ctx.sessionId, tool: ctx.toolId, rel: realRel(this.ws, f.req.target), hash: f.hash });
    let placed = 0;
    try {
      for (; placed < staged.length; placed++) await staged[placed].commit();
    } catch (e) {
      await Promise.all(staged.slice(placed + 1).map((s) => s.discard()));
      // Back to what they were: a rename that fails half-way must not leave half a rename.
      for (const f of files.slice(0, placed)) {
        if (f.current) await atomicWrite(f.req.target.real, f.current.bytes, permissionBits(f.current.stats.mode));
        else await unlink(f.req.target.real).catch(() => undefined);
      }
      throw e;
    }
  }

  private async readExisting(target: ResolvedPath): Promise<TextFile | undefined> {
    // Decided here, under the write lock, not by the path check before it: two racing creations must not both pass.
    try {
      return await readText(target, this.ws.maxFileBytes);
    } catch (e) {
      // Deleted between the path check and the read: it does not exist.
      if (e instanceof ToolError && e.code === "NOT_FOUND") return undefined;
      if (isNodeError(e, "ENOENT")) return undefined;
      throw e;
    }
  }
}

/** The root-relative real path: what views, attribution and staleness are keyed by (SPEC 3). */
export function realRel(ws: Pick<Workspace, "paths">, target: ResolvedPath): string {
  return ws.paths.toRel(target.real);
}

/** A new file's nearest existing ancestor must be a folder: `a.txt/x.txt` under a file `a.txt` cannot be created (dry runs check it too). */
function checkParents(rel: string, real: string): void {
  for (let dir = path.dirname(real); ; dir = path.dirname(dir)) {
    let stats: Stats;
    try {
      stats = statSync(dir);
    } catch (e) {
      if ((isNodeError(e, "ENOENT") || isNodeError(e, "ENOTDIR")) && dir !== path.dirname(dir)) continue;
      throw e;
    }
    if (!stats.isDirectory()) throw new ToolError("NOT_A_FILE", `${rel} cannot be created: ${path.basename(dir)} on its path is a file, not a folder.`);
    return;
  }
}
