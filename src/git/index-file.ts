/**
 * The index's entries read from the index file itself (git's index-format.txt, versions 2 to 4), so the line tools
 * learn a path's stages, blob ids and modes without starting `git ls-files` on every call. A parse is kept while the
 * file is the same one (device, inode, size, modification and change times in nanoseconds): git replaces the index by
 * renaming a new file over it, so any write gives another identity.
 *
 * What this does not read answers null, and the caller asks git (`ls-files -s`): a split index (the `link`
 * extension), a sparse index (`sdir`), an index whose checksum is not SHA-1's (a SHA-256 repository, or
 * index.skipHash), or one that does not parse.
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { indexEntries } from "./objects.js";
import type { GitCtx } from "./run.js";

export interface IndexEntry {
  mode: string;
  sha: string;
  stage: number;
}

const SHA1_BYTES = 20;
/** ctime, mtime, dev, ino, mode, uid, gid, size: ten 32-bit fields before the id. */
const STAT_BYTES = 40;
/** The flags' bit saying a second flags word follows (version 3 and later). */
const EXTENDED = 0x4000;

interface Parsed {
  identity: string;
  entries: Map<string, IndexEntry[]> | null;
}

/** Index files kept parsed at once: the real one and the temporary ones of the calls in progress. */
const FILES_KEPT = 4;

/** The last parse of each index file (the repository's, and a few temporary ones): one per repository (GitRepo.indexFiles). */
export class IndexFiles {
  private readonly parsed = new Map<string, Parsed>();
  /** Reads under way, by file: callers that find the same new identity meanwhile share one (a staging call asks twice at once). */
  private readonly reading = new Map<string, { identity: string; entries: Promise<Map<string, IndexEntry[]> | null> }>();

  /** Entries of the index file `file` for `paths` (git paths), or null when git must be asked (see the header). */
  async entries(file: string, paths: readonly string[]): Promise<Map<string, IndexEntry[]> | null> {
    const st = await stat(file, { bigint: true }).catch(() => null);
    if (!st) return new Map(); // no index yet: git reads it as empty
    const identity = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    let known = this.parsed.get(file);
    if (known?.identity !== identity) {
      known = { identity, entries: await this.read(file, identity) };
      this.parsed.delete(file);
      this.parsed.set(file, known);
      if (this.parsed.size > FILES_KEPT) this.parsed.delete(this.parsed.keys().next().value!);
    }
    if (!known.entries) return null;
    const out = new Map<string, IndexEntry[]>();
    for (const p of paths) {
      const list = known.entries.get(p);
      if (list) out.set(p, list);
    }
    return out;
  }

  /** The parse of `file` as it is at `identity`: one read however many ask while it is under way. */
  private read(file: string, identity: string): Promise<Map<string, IndexEntry[]> | null> {
    const under = this.reading.get(file);
    if (under?.identity === identity) return under.entries;
    const entries = readFile(file).then(parseIndex);
    const mine = { identity, entries };
    this.reading.set(file, mine);
    const done = () => void (this.reading.get(file) === mine && this.reading.delete(file));
    entries.then(done, done);
    return entries;
  }
}

/** Every entry by path, or null for what is not read here. */
export function parseIndex(bytes: Buffer): Map<string, IndexEntry[]> | null {
  if (bytes.length < 12 + SHA1_BYTES) return null;
  const body = bytes.subarray(0, bytes.length - SHA1_BYTES);
  // The trailer is SHA-1 of everything before it: anything else is another format.
  if (!createHash("sha1").update(body).digest().equals(bytes.subarray(body.length))) return null;
  const entries = new Map<string, IndexEntry[]>();
  const read = walkIndex(bytes, (start, mode, flags, name) => {
    const path = name.toString("utf8");
    const list = entries.get(path) ?? [];
    const sha = bytes.toString("hex", start + STAT_BYTES, start + STAT_BYTES + SHA1_BYTES);
    list.push({ mode: mode.toString(8).padStart(6, "0"), sha, stage: (flags >> 12) & 3 });
    entries.set(path, list);
  });
  return read !== null ? entries : null;
}

/**
 * What of the index a `git status` answer depends on, as one digest: each entry's mode, blob id, flags (stage,
 * assume-unchanged, skip-worktree, intent-to-add) and path, without its stat data. `git status`, `update-index
 * --refresh` and the daemon's own refresh rewrite the index with new stat data only: the digest stays, so a kept
 * status stays true. null for what is not read here (see the header).
 */
export function indexContentKey(bytes: Buffer): string | null {
  const digest = createHash("sha1").update(bytes.subarray(0, 12));
  // Gathered in a small buffer and hashed a chunk at a time: one update per entry costs more than the copy.
  const chunk = Buffer.allocUnsafe(KEY_CHUNK_BYTES);
  let o = 0;
  const read = walkIndex(bytes, (start, _mode, _flags, _name, end) => {
    if (o + 4 + (end - start) > chunk.length) {
      digest.update(chunk.subarray(0, o));
      o = 0;
    }
    const from = start + STAT_BYTES;
    if (4 + end - from > chunk.length) {
      digest.update(bytes.subarray(start + 24, start + 28)).update(bytes.subarray(from, end)); // a path longer than the chunk
      return;
    }
    o += bytes.copy(chunk, o, start + 24, start + 28); // mode
    o += bytes.copy(chunk, o, from, end); // id, flags, the path as stored (v4: its prefix count), its NUL
  });
  return read !== null ? digest.update(chunk.subarray(0, o)).digest("hex") : null;
}

const KEY_CHUNK_BYTES = 64 * 1024;

/**
 * Visits every entry of an index file in order (`end`: the offset past the path's NUL) and checks the extensions;
 * answers where the extensions start, or null for what is not read here (see the header). The checksum is the
 * caller's to check.
 */
function walkIndex(bytes: Buffer, visit: (start: number, mode: number, flags: number, name: Buffer, end: number) => void): number | null {
  if (bytes.length < 12 + SHA1_BYTES || bytes.toString("latin1", 0, 4) !== "DIRC") return null;
  const version = bytes.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const bodyEnd = bytes.length - SHA1_BYTES;
  const count = bytes.readUInt32BE(8);
  let at = 12;
  let previous: Buffer = Buffer.alloc(0);
  for (let k = 0; k < count; k++) {
    const start = at;
    if (start + STAT_BYTES + SHA1_BYTES + 2 > bodyEnd) return null;
    const mode = bytes.readUInt32BE(start + 24);
    const flags = bytes.readUInt16BE(start + STAT_BYTES + SHA1_BYTES);
    at = start + STAT_BYTES + SHA1_BYTES + 2;
    if (flags & EXTENDED) {
      if (version < 3) return null;
      at += 2;
    }
    let name: Buffer;
    let end: number;
    if (version === 4) {
      // The number of bytes to drop from the previous path, as a varint (index-format.txt's offset encoding), then the rest.
      let strip = bytes[at] & 0x7f;
      while (bytes[at++] & 0x80) strip = ((strip + 1) << 7) | (bytes[at] & 0x7f);
      const nul = bytes.indexOf(0, at);
      if (nul < 0 || nul >= bodyEnd || strip > previous.length) return null;
      name = Buffer.concat([previous.subarray(0, previous.length - strip), bytes.subarray(at, nul)]);
      end = nul + 1;
      at = end;
    } else {
      const nul = bytes.indexOf(0, at);
      if (nul < 0 || nul >= bodyEnd) return null;
      name = bytes.subarray(at, nul);
      const length = flags & 0xfff;
      if (length !== 0xfff && length !== name.length) return null;
      end = nul + 1;
      // Entries are padded with 1 to 8 NULs to a multiple of eight bytes.
      at = start + ((nul - start + 8) & ~7);
    }
    previous = name;
    // A sparse index's folder entry: this parse does not expand it.
    if ((mode & 0o170000) === 0o040000) return null;
    visit(start, mode, flags, name, end);
  }
  // Extensions: four-byte name, four-byte size. A split index keeps its entries elsewhere.
  const extensions = at;
  while (at + 8 <= bodyEnd) {
    const name = bytes.toString("latin1", at, at + 4);
    if (name === "link" || name === "sdir") return null;
    at += 8 + bytes.readUInt32BE(at + 4);
  }
  return extensions;
}

/**
 * Entries of the context's index (a temporary index's when its environment names one) for these git paths: from the
 * file, or from `git ls-files -s` where this module cannot read it.
 */
export async function readIndexEntries(ctx: GitCtx, files: IndexFiles, gitDir: string, gitPaths: readonly string[]): Promise<Map<string, IndexEntry[]>> {
  const file = ctx.env?.GIT_INDEX_FILE ?? path.join(gitDir, "index");
  return (await files.entries(file, gitPaths)) ?? (await indexEntries(ctx, gitPaths));
}

/** A stage-0 entry's new mode and blob id, by git path. */
export type EntryWrites = ReadonlyMap<string, { mode: string; sha: string }>;

/**
 * The index file `bytes` with these entries replaced as `git update-index --index-info` replaces them, or null where
 * that takes more than a replacement here (git is asked then): each path must have exactly one entry, at stage 0,
 * without extended flags (git's new entry drops skip-worktree and intent-to-add), with a regular file's mode.
 * `indexMtimeSec` is the file's modification time.
 *
 * What git's write does besides, done here too: the new entry has zeroed stat data and flags (the path's length only);
 * every other entry that is racy against the old index (modified in its second or later) gets its size smudged to 0
 * so git checks its content (git does this only after seeing the content differ: zeroing a clean one costs git one
 * read, never a wrong answer); the cache tree (TREE) loses the ids of the paths' folders; the resolve-undo record
 * (REUC) is kept. Other optional extensions are dropped (the untracked cache, the fsmonitor token, the offset tables:
 * each only speeds git up, and git rebuilds it); a required (lowercase) one sends the write to git. A version 3 index
 * keeps its version (git writes 2 when no entry needs the extended flags: then git is asked).
 */
export function withEntriesReplaced(bytes: Buffer, indexMtimeSec: number, writes: EntryWrites): Buffer | null {
  if (bytes.length < 12 + SHA1_BYTES) return null;
  const body = bytes.subarray(0, bytes.length - SHA1_BYTES);
  if (!createHash("sha1").update(body).digest().equals(bytes.subarray(body.length))) return null;
  // Index paths are bytes; a latin1 string is one character per byte.
  const byName = new Map([...writes].map(([p, w]) => [Buffer.from(p, "utf8").toString("latin1"), w]));
  const out = Buffer.from(body);
  let replaced = 0;
  let refused = false;
  let extended = false;
  const extensions = walkIndex(bytes, (start, mode, flags, name) => {
    if (flags & EXTENDED) extended = true;
    const w = byName.get(name.toString("latin1"));
    if (!w) {
      if ((mode & 0o170000) !== GITLINK && indexMtimeSec > 0 && out.readUInt32BE(start + MTIME_SEC) >= indexMtimeSec) out.writeUInt32BE(0, start + SIZE);
      return;
    }
    replaced++;
    if ((flags & (EXTENDED | STAGE_MASK)) !== 0 || !(w.mode === "100644" || w.mode === "100755")) refused = true;
    out.fill(0, start, start + STAT_BYTES);
    out.writeUInt32BE(Number.parseInt(w.mode, 8), start + MODE);
    out.write(w.sha, start + STAT_BYTES, SHA1_BYTES, "hex");
    out.writeUInt16BE(Math.min(name.length, NAME_MASK), start + STAT_BYTES + SHA1_BYTES);
  });
  if (extensions === null || refused || replaced !== byName.size || (bytes.readUInt32BE(4) === 3 && !extended)) return null;
  const kept: Buffer[] = [];
  let reuc: Buffer | null = null;
  for (let at = extensions; at + 8 <= body.length; ) {
    const name = body.toString("latin1", at, at + 4);
    const end = at + 8 + body.readUInt32BE(at + 4);
    if (end > body.length) return null;
    if (name === "TREE") {
      const tree = parseCacheTree(body.subarray(at + 8, end));
      if (!tree) return null;
      for (const p of byName.keys()) invalidate(tree, p.split("/"));
      const data = Buffer.concat(serializeCacheTree(tree));
      kept.push(Buffer.from("TREE"), u32(data.length), data);
    } else if (name === "REUC") reuc = body.subarray(at, end);
    else if (name[0] < "A" || name[0] > "Z") return null;
    at = end;
  }
  if (reuc) kept.push(reuc); // git writes REUC after TREE
  const next = Buffer.concat([out.subarray(0, extensions), ...kept]);
  return Buffer.concat([next, createHash("sha1").update(next).digest()]);
}

/** Offsets in an entry, and its flags' fields (index-format.txt). */
const MTIME_SEC = 8;
const MODE = 24;
const SIZE = 36;
const STAGE_MASK = 0x3000;
const NAME_MASK = 0xfff;
const GITLINK = 0o160000;

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

/** One node of the cache tree: its path component, entry count (-1: invalid, no id), id, and subtrees in git's order. */
interface CacheTree {
  name: string;
  count: number;
  id: Buffer | null;
  subtrees: CacheTree[];
}

/** The TREE extension's data as nodes (`<name>\0<count> <subtrees>\n[<id>]`, depth first), or null when malformed. */
function parseCacheTree(data: Buffer): CacheTree | null {
  let at = 0;
  const node = (depth: number): CacheTree | null => {
    const nul = data.indexOf(0, at);
    const nl = nul < 0 ? -1 : data.indexOf(10, nul);
    if (nl < 0 || depth > 4096) return null;
    const m = /^(-?\d+) (\d+)$/.exec(data.toString("latin1", nul + 1, nl));
    if (!m) return null;
    const name = data.toString("latin1", at, nul);
    const count = Number(m[1]);
    at = nl + 1;
    let id: Buffer | null = null;
    if (count >= 0) {
      if (at + SHA1_BYTES > data.length) return null;
      id = data.subarray(at, at + SHA1_BYTES);
      at += SHA1_BYTES;
    }
    const subtrees: CacheTree[] = [];
    for (let k = 0; k < Number(m[2]); k++) {
      const sub = node(depth + 1);
      if (!sub) return null;
      subtrees.push(sub);
    }
    return { name, count, id, subtrees };
  };
  const root = node(0);
  return root && at === data.length ? root : null;
}

/** git's cache_tree_invalidate_path for a file entry's path: every folder on the way to it loses its id. */
function invalidate(tree: CacheTree, parts: string[]): void {
  tree.count = -1;
  tree.id = null;
  const down = parts.length > 1 ? tree.subtrees.find((t) => t.name === parts[0]) : undefined;
  if (down) invalidate(down, parts.slice(1));
}

function serializeCacheTree(tree: CacheTree, out: Buffer[] = []): Buffer[] {
  out.push(Buffer.from(`${tree.name}\0${tree.count} ${tree.subtrees.length}\n`, "latin1"));
  if (tree.id) out.push(tree.id);
  for (const t of tree.subtrees) serializeCacheTree(t, out);
  return out;
}
