/**
 * A file's three versions as the line-level tools see them (SPEC 8): HEAD (or a given commit), the index's stage 0, and
 * the worktree, read fresh on every call (the bus trails the disk; the disk is what an answer is about). One
 * `cat-file --batch` reads both blobs and tells an unmerged path (stages 1-3, no stage 0) from the others; the
 * worktree is read from disk. Parsed versions are cached by object id and file hash, and a file keeps one LineIds
 * table across calls, so asking twice about an unchanged file diffs nothing again and an edit rehashes only its lines.
 *
 * Line endings: when git converts this path's line endings on `git add` (core.autocrlf, `.gitattributes` text/eol),
 * `\r\n` and `\n` are one terminator for the diffs against the worktree (`cr: "ignore"`) and staged lines get git's
 * `\n`. This is asked of git only when some version has a `\r`: otherwise both policies give the same answer.
 */
import { lstatSync } from "node:fs";
import { LRUCache } from "lru-cache";
import { EMPTY, FileVersions } from "../core/file-versions.js";
import { type CrPolicy, LineIds, type LineSeq } from "../core/line-diff.js";
import { type Eol, decodeText, isBinary, lineStarts, splitText } from "../core/text.js";
import { ToolError } from "../errors.js";
import { readRaw } from "../fs/read-text.js";
import type { PathResolver, ResolvedPath } from "../paths.js";
import type { RepoLocation } from "./location.js";
import type { CatFile } from "./cat-file.js";
import { type IndexEntry, type IndexFiles, readIndexEntries } from "./index-file.js";
import type { GitObject } from "./objects.js";
import { type GitCtx, type GitHost, git } from "./run.js";

/** One version of the file: its object (or none), whether it had a BOM, its lines. */
export interface Version {
  /** The blob id, null when this version has no file (untracked, not in HEAD, deleted); always null for the worktree. */
  sha: string | null;
  bom: boolean;
  seq: LineSeq;
}

export interface LineFile {
  /** Root-relative, as every tool names it. */
  rel: string;
  /** From the top of the repository, as git names it. */
  gitPath: string;
  target: ResolvedPath;
  /** The worktree file's hash (SPEC 4); null when it does not exist. */
  hash: string | null;
  /** The worktree file's bytes, null when it does not exist. */
  bytes: Buffer | null;
  /** The worktree file's git mode (100644 or 100755), null when it does not exist. */
  worktreeMode: string | null;
  head: Version;
  index: Version;
  worktree: Version;
  versions: FileVersions;
  /** git converts this path's line endings on add: stage with `\n`, compare ignoring `\r`. */
  converts: boolean;
  /**
   * git's clean filter would convert, but `git add` would not (text=auto or autocrlf with a `\r` already in the index):
   * blobs are written as they are (`--no-filters`), as `git add` stores them.
   */
  rawBlobs: boolean;
}

export interface LoadOptions {
  /** Compare with this commit instead of HEAD (a full sha). */
  base?: string;
  /** A missing worktree file, index entry and base blob is NOT_FOUND unless this says it may be (a changelist sweep). */
  mustExist?: boolean;
}

/** Parsed versions kept across calls, bounded by their total characters (a few large files must not pin memory). */
const SEQ_CACHE_CHARS = 32 * 1024 * 1024;
/** Files whose LineIds and last FileVersions are kept: the files a session is working on. */
const FILES_KEPT = 64;
/** A file's LineIds is replaced when it holds this many times the file's lines (old versions' lines pile up). */
const IDS_GROWTH = 8;

/** What reading a file's versions needs of its repository (a GitRepo is one). */
export interface LineHost extends GitHost {
  /** The repository's long-lived object reader. */
  readonly catFile: Pick<CatFile, "info" | "contents">;
  /** The repository's parsed index files. */
  readonly indexFiles: IndexFiles;
  readonly paths: Pick<PathResolver, "resolve">;
  readonly maxFileBytes: number;
  location(): Promise<RepoLocation>;
}

interface ParsedVersion {
  seq: LineSeq;
  bom: boolean;
  /** The bytes had a `\r` (line endings then need git's rules). */
  cr: boolean;
}

interface KeptFile {
  ids: LineIds;
  key?: string;
  versions?: FileVersions;
}

/** The per-repository cache of parsed versions and per-file line tables. */
export class LineFiles {
  /** Sized by characters; a version larger than the whole bound is parsed each time, not kept. */
  private readonly seqs = new LRUCache<string, ParsedVersion>({ maxSize: SEQ_CACHE_CHARS });
  private readonly files = new LRUCache<string, KeptFile>({ max: FILES_KEPT });
  /** Byte offsets of the lines of worktree versions, kept with their lines (lineStarts). */
  private readonly starts = new WeakMap<LineSeq, Int32Array>();

  constructor(private readonly repo: LineHost) {}

  /** Reads the three versions of `path` (see the header); BINARY_FILE, ENCODING, TOO_LARGE, CONFLICT, NOT_FOUND. */
  async load(ctx: GitCtx, path: string, opts: LoadOptions = {}): Promise<LineFile> {
    const target = await this.repo.paths.resolve(path, { allowGitDir: false });
    return this.loadResolved(ctx, target, opts);
  }

  async loadResolved(ctx: GitCtx, target: ResolvedPath, opts: LoadOptions = {}): Promise<LineFile> {
    const repo = await this.repo.location();
    const rel = target.rel;
    if (!rel) throw new ToolError("NOT_A_FILE", "path: the workspace root is a folder; name a file.");
    refuseLinks(target, target.realRel);
    const gitPath = repo.prefix + rel;
    const base = opts.base ?? "HEAD";
    const max = this.repo.maxFileBytes;
    const [[headInfo], stages, disk] = await Promise.all([
      this.repo.catFile.info(repo.gitDir, [`${base}:${gitPath}`]),
      this.stagesOf(ctx, repo, gitPath),
      readWorktree(target, max),
    ]);
    const indexEntry = stages.find((e) => e.stage === 0);
    if (!indexEntry && stages.length) {
      throw new ToolError(
        "CONFLICT",
        `${rel} is unmerged (a merge, rebase or stash left conflicts in it); resolve it first (section 9 conflict tools, or edit and git_add it), then stage its lines.`,
        { path: rel },
      );
    }
    // A gitlink's id is a commit's: the file is a submodule.
    const indexInfo: GitObject | null = indexEntry ? { sha: indexEntry.sha, type: indexEntry.mode === "160000" ? "commit" : "blob", size: 0 } : null;
    const [head, index] = await this.blobVersions(rel, repo.gitDir, [
      { sha: blobId(rel, headInfo, max), where: opts.base ? "the commit" : "HEAD" },
      { sha: blobId(rel, indexInfo, max), where: "the index" },
    ]);
    if (opts.mustExist !== false && !disk && !head.sha && !index.sha) {
      throw new ToolError("NOT_FOUND", `${rel} is not in the worktree, the index or ${opts.base ? "that commit" : "HEAD"}; check the path with git_status.`);
    }
    const hash = disk?.hash ?? null;
    // The worktree's id is its file hash (`hash`), not a blob id.
    const worktree = disk ? { ...this.parsed(`w:${hash}`, rel, disk.bytes, "the worktree"), sha: null } : { sha: null, bom: false, seq: EMPTY };
    // A native scan of the bytes (memchr), not of 15,000 lines; a cached blob's answer was kept with its lines.
    const anyCr = head.cr || index.cr || (disk !== null && disk.bytes.indexOf(13) !== -1);
    const eol = anyCr ? await eolPolicy(ctx, rel, index.seq, worktree.seq) : { converts: false, rawBlobs: false };
    const cr: CrPolicy = eol.converts ? "ignore" : "exact";
    const versions = this.versionsOf(rel, head, index, worktree, hash, cr);
    const worktreeMode = disk ? ((disk.mode & 0o111) !== 0 ? "100755" : "100644") : null;
    return { rel, gitPath, target, hash, bytes: disk?.bytes ?? null, worktreeMode, head, index, worktree, versions, ...eol };
  }

  /** Byte offsets of the worktree version's lines in its bytes (lineStarts), worked out once per version. */
  worktreeStarts(file: LineFile & { bytes: Buffer }): Int32Array {
    const seq = file.worktree.seq;
    let starts = this.starts.get(seq);
    if (!starts) this.starts.set(seq, (starts = lineStarts({ bom: file.worktree.bom, ...seq }, file.bytes)));
    return starts;
  }

  /** A worktree file's lines from its bytes (BINARY_FILE, ENCODING), cached by its hash like every version. */
  worktreeSeq(rel: string, bytes: Buffer, hash: string): LineSeq {
    return this.parsed(`w:${hash}`, rel, bytes, "the worktree").seq;
  }

  /** A blob's lines (BINARY_FILE, ENCODING), cached by its id. */
  blobSeq(rel: string, sha: string, bytes: Buffer): LineSeq {
    return this.parsed(`b:${sha}`, rel, bytes, "git").seq;
  }

  /**
   * The index entries of a path (stage 0, or the stages of a conflict), from the context's index file (a temporary
   * index's when it has one); `git ls-files -s` where index-file.ts cannot read it.
   */
  private async stagesOf(ctx: GitCtx, repo: RepoLocation, gitPath: string): Promise<IndexEntry[]> {
    return (await readIndexEntries(ctx, this.repo.indexFiles, repo.gitDir, [gitPath])).get(gitPath) ?? [];
  }

  /** The table of a file's lines, shared by every diff of its versions (LineIds). */
  idsOf(rel: string, lines: number): LineIds {
    let f = this.files.get(rel);
    if (!f || f.ids.size > IDS_GROWTH * Math.max(lines, 1000)) {
      f = { ids: new LineIds() };
      this.files.set(rel, f);
    }
    return f.ids;
  }

  private versionsOf(rel: string, head: Version, index: Version, worktree: Version, hash: string | null, cr: CrPolicy): FileVersions {
    const key = `${head.sha}|${index.sha}|${hash}|${cr}`;
    const ids = this.idsOf(rel, worktree.seq.lines.length);
    const f = this.files.get(rel)!;
    if (f.key === key && f.versions) return f.versions;
    // Same HEAD and index as last time (the usual edit): keep their diff and hashed lines.
    const sameBase = f.versions && f.key?.startsWith(`${head.sha}|${index.sha}|`) && f.key.endsWith(`|${cr}`) && f.versions.ids === ids;
    const versions = sameBase ? f.versions!.withWorktree(worktree.seq) : new FileVersions(head.seq, index.seq, worktree.seq, cr, ids);
    f.key = key;
    f.versions = versions;
    return versions;
  }

  /**
   * Versions of these blobs (sha null: none): parsed ones from the cache, the others read through the repository's
   * cat-file and parsed (BINARY_FILE, ENCODING, TOO_LARGE).
   */
  private async blobVersions(rel: string, gitDir: string, wanted: readonly { sha: string | null; where: string }[]): Promise<(Version & { cr: boolean })[]> {
    // Held now: a parse of another version may evict them from the cache before they are used.
    const known = wanted.map((w) => (w.sha ? this.seqs.get(`b:${w.sha}`) : undefined));
    const missing = [...new Set(wanted.filter((w, k) => w.sha && !known[k]).map((w) => w.sha!))];
    const max = this.repo.maxFileBytes;
    const read = new Map<string, Buffer>();
    const objects = await this.repo.catFile.contents(gitDir, missing, max);
    objects.forEach((obj, k) => {
      if (!obj) throw new ToolError("GIT_FAILED", `git has no object ${missing[k]} for ${rel}; the repository may be damaged (git fsck says more).`);
      if (!obj.bytes) throw tooLarge(rel, obj.size, max);
      read.set(missing[k], obj.bytes);
    });
    // One parse per blob: an index at HEAD's blob is then the same LineSeq as HEAD, which FileVersions and the
    // staging answer take for one version (one diff serves both, see FileVersions.indexToWorktree).
    const parsedNow = new Map<string, ParsedVersion>();
    return wanted.map((w, k) => {
      if (!w.sha) return { sha: null, bom: false, seq: EMPTY, cr: false };
      let v = known[k] ?? parsedNow.get(w.sha);
      if (!v) parsedNow.set(w.sha, (v = this.parse(`b:${w.sha}`, rel, read.get(w.sha)!, w.where)));
      return { sha: w.sha, bom: v.bom, seq: v.seq, cr: v.cr };
    });
  }

  /** Lines of a version, by its key (`b:sha` or `w:hash`): the same object each time, so diffs and tables reuse it. */
  private parsed(key: string, rel: string, bytes: Buffer, where: string): Version {
    const v = this.seqs.get(key) ?? this.parse(key, rel, bytes, where);
    return { sha: key.slice(2), bom: v.bom, seq: v.seq };
  }

  /** Parses and keeps a version's lines (BINARY_FILE, ENCODING). */
  private parse(key: string, rel: string, bytes: Buffer, where: string): ParsedVersion {
    if (isBinary(bytes)) {
      throw new ToolError("BINARY_FILE", `${rel} is binary in ${where} (it has a NUL byte); line-level git works on text files. Stage it whole with git_add.`, {
        path: rel,
      });
    }
    let decoded: ReturnType<typeof decodeText>;
    try {
      decoded = decodeText(bytes, rel);
    } catch (e) {
      if (e instanceof ToolError) throw new ToolError(e.code, `${rel} in ${where}: ${e.message} Stage it whole with git_add.`, { path: rel });
      throw e;
    }
    const v = { seq: splitText(decoded.text), bom: decoded.bom, cr: bytes.indexOf(13) !== -1 };
    this.seqs.set(key, v, { size: Math.max(1, decoded.text.length) });
    return v;
  }
}

/** A symlink (or a path through a symlinked folder) is a link to git, not lines: NOT_A_FILE. */
function refuseLinks(target: ResolvedPath, realRel: string): void {
  const link = lstatSync(target.abs, { throwIfNoEntry: false });
  if (link?.isSymbolicLink() || (target.exists && realRel !== target.rel)) {
    throw new ToolError(
      "NOT_A_FILE",
      `${target.rel} is (or goes through) a symbolic link; git stores a link as its target's name, not as lines. Use git_add for it.`,
    );
  }
  if (link?.isDirectory()) throw new ToolError("NOT_A_FILE", `${target.rel} is a folder; line-level git works on one file at a time.`);
}

/** The worktree file's bytes, its hash (readRaw's: the bytes are hashed once) and mode; null when it does not exist. */
async function readWorktree(target: ResolvedPath, max: number): Promise<{ bytes: Buffer; hash: string; mode: number } | null> {
  try {
    const raw = await readRaw(target, max);
    return { bytes: raw.bytes, hash: raw.hash, mode: raw.stats.mode };
  } catch (e) {
    if (e instanceof ToolError && e.code === "NOT_FOUND") return null;
    throw e;
  }
}

/** The blob id of a version (null: no file there); a submodule is NOT_A_FILE, a blob over the limit TOO_LARGE. */
function blobId(rel: string, obj: GitObject | null, max: number): string | null {
  if (!obj) return null;
  if (obj.type === "tree") return null; // a folder of that name there: no file
  if (obj.type !== "blob") throw new ToolError("NOT_A_FILE", `${rel} is a submodule; line-level git works on files. Use git_add for it.`);
  if (obj.size > max) throw tooLarge(rel, obj.size, max);
  return obj.sha;
}

const tooLarge = (rel: string, size: number, max: number) =>
  new ToolError("TOO_LARGE", `${rel} is ${size} bytes in git, over the ${max}-byte limit of the file tools.`, { size, max_bytes: max });

type AttrValue = "set" | "unset" | "unspecified" | string;

/** What decides a path's line-ending conversion (convert.c's convert_attrs): its attributes and core.autocrlf / core.eol. */
interface EolSettings {
  mode: "binary" | "text" | "auto" | "none";
  /** The `eol` attribute. */
  eol: "lf" | "crlf" | null;
  autocrlf: "true" | "input" | "false";
  coreEol: "crlf" | "lf";
}

async function eolSettings(ctx: GitCtx, rel: string): Promise<EolSettings> {
  const [attrs, config] = await Promise.all([
    git(ctx, ["check-attr", "-z", "text", "eol", "crlf", "--", rel]),
    git(ctx, ["config", "-z", "--get-regexp", "^core\\.(autocrlf|eol)$"], { ok: [0, 1] }),
  ]);
  const values = new Map<string, AttrValue>();
  const parts = attrs.stdout.split("\0");
  for (let i = 0; i + 2 < parts.length; i += 3) values.set(parts[i + 1], parts[i + 2]);
  const text = values.get("text") ?? "unspecified";
  const eolAttr = values.get("eol") ?? "unspecified";
  const crlf = values.get("crlf") ?? "unspecified";
  const attr = text !== "unspecified" ? text : crlf;
  let mode: EolSettings["mode"] = attr === "set" || attr === "input" ? "text" : attr === "unset" ? "binary" : attr === "auto" ? "auto" : "none";
  // The old `crlf=input` is text with LF in the worktree.
  const eol = eolAttr === "lf" || eolAttr === "crlf" ? eolAttr : attr === "input" ? "lf" : null;
  if (mode === "none" && eol) mode = "text";
  const config0 = new Map<string, string>();
  for (const rec of config.stdout.split("\0")) {
    const nl = rec.indexOf("\n");
    if (nl > 0)
      config0.set(
        rec.slice(0, nl).toLowerCase(),
        rec
          .slice(nl + 1)
          .trim()
          .toLowerCase(),
      );
  }
  const auto = config0.get("core.autocrlf") ?? "false";
  const autocrlf = ["true", "yes", "on", "1"].includes(auto) ? "true" : auto === "input" ? "input" : "false";
  return { mode, eol, autocrlf, coreEol: config0.get("core.eol") === "crlf" ? "crlf" : "lf" };
}

/**
 * Does `git add` convert this path's line endings (see convert.c's convert_attrs and crlf_to_git)? `text` (or `eol`, or
 * the old `crlf`) set: always. text=auto, or no attribute and core.autocrlf true/input: unless the index already has a
 * `\r` in this file (git's "safer autocrlf") or the file has a lone `\r` (git then calls it binary).
 */
export async function eolPolicy(ctx: GitCtx, rel: string, index: LineSeq, worktree: LineSeq): Promise<{ converts: boolean; rawBlobs: boolean }> {
  const { mode, autocrlf } = await eolSettings(ctx, rel);
  const effective = mode === "none" && autocrlf !== "false" ? "auto" : mode;
  if (effective === "text") return { converts: true, rawBlobs: false };
  if (effective !== "auto") return { converts: false, rawBlobs: false };
  const indexHasCr = hasCr(index);
  const loneCr = worktree.lines.some((l) => l.includes("\r"));
  return { converts: !indexHasCr && !loneCr, rawBlobs: indexHasCr };
}

const hasCr = (seq: LineSeq) => seq.eols.some((e) => e === "\r\n") || seq.lines.some((l) => l.includes("\r"));

/**
 * The terminator `git checkout` gives the lines of blob `blob` at this path (convert.c's output_eol and crlf_to_worktree):
 * CRLF under eol=crlf, or a text path under core.autocrlf=true or core.eol=crlf; null where it writes the blob's own
 * (no conversion, LF output, or text=auto / core.autocrlf over a blob that already has a `\r`).
 */
export async function checkoutEol(ctx: GitCtx, rel: string, blob: LineSeq): Promise<Eol | null> {
  const { mode, eol, autocrlf, coreEol } = await eolSettings(ctx, rel);
  if (mode === "binary") return null;
  const auto = mode === "auto" || (mode === "none" && autocrlf === "true");
  if (mode === "none" && !auto) return null;
  if (auto && hasCr(blob)) return null;
  const crlf = eol ? eol === "crlf" : autocrlf === "true" || (autocrlf === "false" && coreEol === "crlf");
  return crlf ? "\r\n" : null;
}

/**
 * Root-relative paths of every file that differs in the worktree (tracked or not, deleted too) from HEAD, or with
 * `against: "index"` from the index (what `git add -A` stages).
 */
export async function changedPaths(ctx: GitCtx, against: "HEAD" | "index" = "HEAD"): Promise<string[]> {
  const head = against === "index" || (await git(ctx, ["rev-parse", "--verify", "--quiet", "HEAD"], { ok: [0, 1, 128] })).code === 0;
  const [tracked, untracked] = await Promise.all([
    head
      ? git(ctx, ["diff", ...(against === "HEAD" ? ["HEAD"] : []), "--name-only", "-z", "--no-renames", "--relative", "--no-ext-diff", "--", "."])
      : git(ctx, ["ls-files", "-z", "--cached", "--", "."]),
    git(ctx, ["ls-files", "-z", "--others", "--exclude-standard", "--", "."]),
  ]);
  return [...new Set([...tracked.stdout.split("\0"), ...untracked.stdout.split("\0")].filter(Boolean))].sort();
}
