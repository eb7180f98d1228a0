import type { PathResolver } from "../paths.js";
import type { Supervisor } from "../platform/supervisor.js";

/** The part of a call the write needs: who writes, whether for real, and the dispatcher's commit and file lock. */
export interface WriteContext {
  sessionId: string;
  toolId: string;
  dryRun: boolean;
  signal: AbortSignal;
  commit<T>(step: () => Promise<T>): Promise<T>;
  lockFile<T>(real: string, work: () => Promise<T>): Promise<T>;
}

/** A move (a folder's files, two paths) and a write of several files need the worktree to itself: the dispatcher's exclusive. */
export interface MultiWriteContext extends WriteContext {
  exclusive<T>(work: () => Promise<T>, opts?: { announced?: boolean }): Promise<T>;
}

/** A write a tool is about to make (hash null: a delete), so the watcher can attribute the change to its session. */
export interface ToolWrite {
  session: string;
  tool: string;
  /** Root-relative real path (SPEC 3: one file, however it was named). */
  rel: string;
  hash: string | null;
}

/** What the versioned write needs from the workspace around it (the Workspace is one; fs/ never imports it). */
export interface FilesHost {
  readonly root: string;
  readonly maxFileBytes: number;
  readonly paths: PathResolver;
  readonly processes: Supervisor;
  /** Versions sessions saw, by hash (for the diff a HASH_MISMATCH shows). */
  readonly history: { get(hash: string): Buffer | undefined };
  /** What each session saw of each path (a move carries it to the new path). */
  readonly views: {
    record(session: string, rel: string, hash: string | null): void;
    seen(session: string, rel: string): string | null | undefined;
    staleSessions(rel: string, newHash: string | null, exclude?: string | null): string[];
  };
  expectToolWrite(write: ToolWrite): void;
  recordSeen(session: string, rel: string, hash: string, content: Buffer): void;
  log(message: string): void;
}
