/**
 * git objects as bytes (the line-level tools of SPEC 8, the conflict tools of SPEC 9): objects read with one `cat-file --batch` (HEAD's blob, the
 * index stages and their sizes in one process), blobs written with `hash-object -w` from bytes we built, index entries
 * written with `update-index --index-info`. No patch is ever applied, so neither `apply.whitespace` nor any other
 * patch setting can change what is staged.
 *
 * Objects come back as raw bytes (a blob's size is in bytes) and blobs go in as bytes, through run.ts's gitBytes: the
 * same protective config and process rules as every git call.
 */
import { ToolError } from "../errors.js";
import { type GitCtx, gitBytes } from "./run.js";

/** A read or write of one file's objects: seconds would mean a broken repository, not a slow one. */
const OBJECT_TIMEOUT_MS = 30_000;

/** gitBytes (stdout as bytes; a failure is a ToolError with git's words) bounded by OBJECT_TIMEOUT_MS. */
export function gitRaw(ctx: GitCtx, args: readonly string[], opts: Omit<Parameters<typeof gitBytes>[2], "timeoutMs"> = {}) {
  return gitBytes(ctx, args, { ...opts, timeoutMs: OBJECT_TIMEOUT_MS });
}

export interface GitObject {
  sha: string;
  type: string;
  size: number;
  /** The content, unless it was over the size limit the read was given. */
  bytes?: Buffer;
}

/**
 * Objects by name (`HEAD:path`, `:0:path`, a sha), in one `cat-file --batch`; null for a name that resolves to nothing.
 * Contents larger than `maxBytes` are not kept (the caller answers TOO_LARGE from `size`).
 */
export async function readObjects(ctx: GitCtx, names: readonly string[], maxBytes = Infinity): Promise<(GitObject | null)[]> {
  if (!names.length) return [];
  const r = await gitRaw(ctx, ["cat-file", "--batch"], { input: names.map((n) => `${n}\n`).join("") });
  return parseBatch(r.stdout, names.length, maxBytes);
}

/** `cat-file --batch` output: `<sha> <type> <size>\n<content>\n` per found object, `<name> missing\n` (or ambiguous) otherwise. */
export function parseBatch(out: Buffer, count: number, maxBytes = Infinity): (GitObject | null)[] {
  const found: (GitObject | null)[] = [];
  let at = 0;
  for (let k = 0; k < count; k++) {
    const nl = out.indexOf(10, at);
    if (nl < 0) throw new ToolError("GIT_FAILED", "git cat-file --batch ended early; the repository may be damaged.");
    const header = out.toString("utf8", at, nl);
    const m = /^([0-9a-f]{40,64}) (\S+) (\d+)$/.exec(header);
    if (!m) {
      found.push(null); // "<name> missing" or "<name> ambiguous"
      at = nl + 1;
      continue;
    }
    const size = Number(m[3]);
    const start = nl + 1;
    found.push({ sha: m[1], type: m[2], size, ...(size <= maxBytes ? { bytes: out.subarray(start, start + size) } : {}) });
    at = start + size + 1;
  }
  return found;
}

export interface WriteBlobOptions {
  /** Write it to the object store (-w); without, only compute the id. */
  write: boolean;
  /**
   * Apply this path's clean filters as `git add` would (attributes, eol conversion; external filter drivers too),
   * or store the bytes as they are. A dry run never filters: a filter driver is a program the repository chooses.
   */
  filters: boolean;
}

/**
 * A blob from bytes we built: `hash-object --stdin [--path=P | --no-filters]`. core.safecrlf is off because the
 * content is already in git's form (line-objects' callers build it so): the check guards worktree files whose line
 * endings a checkout would not restore, which is not what these bytes are.
 */
export async function writeBlob(ctx: GitCtx, gitPath: string, bytes: Buffer, opts: WriteBlobOptions): Promise<string> {
  const args = ["hash-object", ...(opts.write ? ["-w"] : []), "--stdin", opts.filters ? `--path=${gitPath}` : "--no-filters"];
  // A filter driver is a program: it gets a process group like any command that may start children.
  const r = await gitRaw(ctx, args, { input: bytes, config: ["-c", "core.safecrlf=false"] });
  return r.stdout.toString("utf8").trim();
}

/** `--index-info` removes a path given mode 0 and the null id (a SHA-1 repository's; SHA-256 ones are not handled yet). */
const ZERO_SHA = "0000000000000000000000000000000000000000";

export interface IndexWrite {
  /** The path as git names it (from the top of the repository). */
  gitPath: string;
  /** null: remove the entry. */
  entry: { mode: string; sha: string } | null;
}

/**
 * Sets index entries (stage 0) in one `update-index -z --index-info`: the blob and the mode given, nothing else read
 * from the worktree, into the context's index. `hooks:false` runs no post-index-change hook (a temporary index is our
 * own bookkeeping).
 */
export async function writeIndex(ctx: GitCtx, writes: readonly IndexWrite[], opts: { hooks?: boolean } = {}): Promise<void> {
  if (!writes.length) return;
  const input = writes.map((w) => (w.entry ? `${w.entry.mode} ${w.entry.sha}\t${w.gitPath}\0` : `0 ${ZERO_SHA}\t${w.gitPath}\0`)).join("");
  const config = opts.hooks === false ? ["-c", "core.hooksPath=/dev/null"] : [];
  await gitRaw(ctx, ["update-index", "-z", "--index-info"], { input, config });
}

/** Entries of the context's index for these paths: mode, sha and stage of each (`ls-files -s -z`), by git path. */
export async function indexEntries(ctx: GitCtx, gitPaths: readonly string[]): Promise<Map<string, { mode: string; sha: string; stage: number }[]>> {
  const out = new Map<string, { mode: string; sha: string; stage: number }[]>();
  if (!gitPaths.length) return out;
  const r = await gitRaw(ctx, ["ls-files", "-s", "-z", "--full-name", "--", ...gitPaths.map((p) => `:(top,literal)${p}`)]);
  for (const rec of r.stdout.toString("utf8").split("\0")) {
    const m = /^(\d{6}) ([0-9a-f]{40,64}) (\d)\t(.*)$/s.exec(rec);
    if (!m) continue;
    const list = out.get(m[4]) ?? [];
    list.push({ mode: m[1], sha: m[2], stage: Number(m[3]) });
    out.set(m[4], list);
  }
  return out;
}
