import { stat } from "node:fs/promises";
import path from "node:path";
import { GIT_MARKER_SIZE } from "../core/merge/markers.js";
import { readObjects } from "./objects.js";
import { type GitCtx, git } from "./run.js";

/**
 * The index stages of conflicted paths (1 base, 2 ours, 3 theirs), their blobs, and the attributes that decide how a
 * path is merged. Reads only: `ls-files`, `cat-file` and `check-attr` write nothing and start nothing.
 */

export interface StageEntry {
  mode: string;
  oid: string;
}

export interface UnmergedPath {
  path: string;
  base?: StageEntry;
  ours?: StageEntry;
  theirs?: StageEntry;
}

/** What the attributes say about merging a path (gitattributes(5)). */
export interface MergeAttributes {
  /** `conflict-marker-size`, else git's 7. */
  markerSize: number;
  /** The `merge` attribute: "" when unspecified or set (git's text merge), "binary", "union", a driver name, or "unset". */
  merge: string;
  /** A `filter` (clean/smudge, such as git-lfs): the worktree is not what the blobs say, so no block is rewritten. */
  filter: boolean;
}

const STAGE_NAMES = { "1": "base", "2": "ours", "3": "theirs" } as const;

/** Every unmerged path of the context's index, in index order. */
export async function unmergedPaths(ctx: GitCtx): Promise<UnmergedPath[]> {
  const r = await git(ctx, ["ls-files", "-u", "-z"]);
  return parseUnmerged(r.stdout);
}

/** `ls-files -u -z` and `merge-tree`'s conflicted-file section: `MODE OID STAGE\tPATH`, NUL-terminated. */
export function parseUnmerged(out: string): UnmergedPath[] {
  const byPath = new Map<string, UnmergedPath>();
  for (const rec of out.split("\0")) {
    const m = /^([0-7]{6}) ([0-9a-f]{40,64}) ([123])\t(.*)$/s.exec(rec);
    if (!m) continue;
    const [, mode, oid, stage, p] = m;
    let entry = byPath.get(p);
    if (!entry) byPath.set(p, (entry = { path: p }));
    entry[STAGE_NAMES[stage as "1" | "2" | "3"]] = { mode, oid };
  }
  return [...byPath.values()];
}

/** Blobs bigger than the file tools' limit are not merged here; the file is listed as a whole-file conflict. */
export async function readBlobs(ctx: GitCtx, oids: readonly string[], maxBytes: number): Promise<Map<string, Buffer | null>> {
  const wanted = [...new Set(oids)];
  const objects = await readObjects(ctx, wanted, maxBytes);
  return new Map(wanted.map((oid, i) => [oid, objects[i]?.type === "blob" ? (objects[i]!.bytes ?? null) : null]));
}

/** The merge-related attributes of each path, read as git reads them (the worktree's and the index's .gitattributes). */
export async function mergeAttributes(ctx: GitCtx, paths: readonly string[]): Promise<Map<string, MergeAttributes>> {
  const out = new Map<string, MergeAttributes>();
  for (const p of paths) out.set(p, { markerSize: GIT_MARKER_SIZE, merge: "", filter: false });
  if (!paths.length) return out;
  const r = await git(ctx, ["check-attr", "-z", "--stdin", "conflict-marker-size", "merge", "filter"], { input: paths.map((p) => `${p}\0`).join("") });
  const parts = r.stdout.split("\0");
  for (let i = 0; i + 2 < parts.length; i += 3) {
    const [p, attr, value] = [parts[i], parts[i + 1], parts[i + 2]];
    const a = out.get(p);
    if (!a || value === "unspecified") continue;
    if (attr === "conflict-marker-size") {
      const n = Number(value);
      if (Number.isInteger(n) && n > 0) a.markerSize = n;
    } else if (attr === "merge") a.merge = value === "set" || value === "text" ? "" : value;
    else if (attr === "filter") a.filter = value !== "unset";
  }
  return out;
}

/** The stage listing and attributes of the index as it was at `key` (its file's identity: a rewrite renames a new file in). */
interface IndexListing {
  gitDir: string;
  key: string;
  entries: UnmergedPath[];
  attrs: Map<string, MergeAttributes>;
}

/**
 * unmergedPaths and mergeAttributes of one repository, remembered while the index file stays the same one: git writes
 * the index by renaming index.lock over it, so a new inode (or size, or change time) means a new listing. One
 * git_conflict_resolve then runs no git process at all.
 */
export class ConflictListing {
  private last?: IndexListing;

  async read(ctx: GitCtx, gitDir: string): Promise<{ entries: UnmergedPath[]; attrs: Map<string, MergeAttributes> }> {
    const key = await indexKey(gitDir);
    const known = this.last;
    if (key && known?.gitDir === gitDir && known.key === key) return known;
    const entries = await unmergedPaths(ctx);
    const attrs = await mergeAttributes(
      ctx,
      entries.map((e) => e.path),
    );
    const listing = { gitDir, key: key ?? "", entries, attrs };
    if (key) this.last = listing;
    return listing;
  }
}

async function indexKey(gitDir: string): Promise<string | null> {
  const st = await stat(path.join(gitDir, "index"), { bigint: true }).catch(() => null);
  return st ? `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : null;
}
