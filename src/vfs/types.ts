/**
 * The VFS's vocabulary, shared with the services around it. It lives here, not in workspace.ts, so the VFS never imports
 * the Workspace that owns it (no type cycle): the Workspace re-exports these names.
 */

export type WatcherEngine = "parcel" | "chokidar";

/** Who made a change: the session and the tool, for `fs.changed`'s `by` and `tool` (SPEC 7). */
export interface Actor {
  session: string;
  tool: string;
}

/** A write a tool is about to make: the versioned write (fs/) announces it, the VFS attributes the change by it. */
export type { ToolWrite } from "../fs/files-host.js";

/** The VFS's index of watched files, read by find_file. */
export interface FileIndexView {
  /** Bumped on every add or remove, so a consumer can cache what it derives from `paths()`. */
  readonly generation: number;
  /** Root-relative paths (with `/`) of every watched, not ignored, file. */
  paths(): readonly string[];
  /** Whether the index has this root-relative path. */
  has(rel: string): boolean;
}
