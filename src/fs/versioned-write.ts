import { type Stats, statSync } from "node:fs";
import path from "node:path";
import { fileHash } from "../core/hash.js";
import { ToolError, isNodeError } from "../errors.js";
import type { ResolvedPath } from "../paths.js";
import type { Workspace } from "../workspace.js";
import { atomicWrite, permissionBits } from "./atomic-write.js";
import { checkHash } from "./hash-check.js";
import { type TextFile, notFound, readText } from "./read-text.js";

/** The part of a call the write needs: who writes, whether for real, and the dispatcher's commit and file lock. */
export interface WriteContext {
  sessionId: string;
  toolId: string;
  dryRun: boolean;
  signal: AbortSignal;
  commit<T>(step: () => Promise<T>): Promise<T>;
  lockFile<T>(real: string, work: () => Promise<T>): Promise<T>;
}

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
