import type { ChangeKind } from "./coalesce.js";

/** One change of `fs.changed` (SPEC 7). */
export interface FsChange {
  path: string;
  kind: ChangeKind;
  hash: string | null;
  /** Who made it (attribution.ts): a tool's call (session `by`, `tool`), or something outside the daemon. */
  origin: "external" | "tool";
  by: string | null;
  tool: string | null;
  /** Sessions that had read an older version; the first STALE_SESSIONS_MAX of them, sorted (see attribution.ts). */
  stale_sessions: string[];
  /** How many stale sessions were left out of `stale_sessions`; present only when some were. */
  stale_sessions_omitted?: number;
}

export interface GitChanged {
  head: string | null;
  branch: string | null;
  index: boolean;
  refs: boolean;
  operation: string | null;
}

declare module "../platform/bus.js" {
  interface BusEvents {
    "fs.changed": { changes: FsChange[] };
    "git.changed": GitChanged;
  }
}
