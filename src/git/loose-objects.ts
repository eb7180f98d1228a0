/**
 * Blobs the line tools build, written by the daemon itself as `git hash-object -w` writes a loose object (zlib of
 * `blob <size>\0<bytes>` at objects/<2 hex>/<38 hex>, made under a temporary name and linked into place), instead of a
 * hash-object process per blob: a start costs the main thread a fork of the daemon (issue 23).
 *
 * Only where git would store the bytes unchanged: with `--no-filters`, or when no clean filter can apply to them (no
 * `\r`, so no line-ending rule changes them, and no attribute can be set for the path: no `.gitattributes` along it in
 * the worktree or the index, no info/attributes, no global or system attributes file). A configuration that could
 * change where attributes come from or how objects are stored (core.attributesFile, an include, core.sharedRepository,
 * another object format) sends every blob to git. The answer is the same id git gives: the property tests compare
 * against git.
 */
import { createHash, randomBytes } from "node:crypto";
import { type BigIntStats, accessSync, readFileSync, statSync } from "node:fs";
import { access, link, mkdir, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { deflateSync } from "node:zlib";
import { isNodeError } from "../errors.js";
import type { IndexEntry } from "./index-file.js";
import type { RepoLocation } from "./location.js";

/** git's default for loose objects (core.looseCompression): the id does not depend on it. */
const LOOSE_COMPRESSION = 1;

/** Writes `bytes` as a loose blob in `objectsDir` (nothing when it is there already) and returns its id. */
export async function writeLooseBlob(objectsDir: string, bytes: Buffer): Promise<string> {
  const header = Buffer.from(`blob ${bytes.length}\0`);
  const sha = createHash("sha1").update(header).update(bytes).digest("hex");
  const dir = path.join(objectsDir, sha.slice(0, 2));
  const file = path.join(dir, sha.slice(2));
  if (
    await access(file).then(
      () => true,
      () => false,
    )
  )
    return sha;
  const deflated = deflateSync(Buffer.concat([header, bytes]), { level: LOOSE_COMPRESSION });
  await mkdir(dir, { recursive: true });
  const temp = path.join(dir, `tmp_obj_${randomBytes(6).toString("hex")}`);
  await writeFile(temp, deflated, { mode: 0o444, flag: "wx" });
  try {
    await link(temp, file);
  } catch (e) {
    if (!isNodeError(e, "EEXIST")) throw e; // another writer made the same object
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  return sha;
}

/**
 * The variables read here as git sees them: childEnv (the environment git runs with) leaves these as the daemon has
 * them, and reading them alone costs less than copying the whole environment on every call.
 */
const gitEnv = (): Record<string, string | undefined> => process.env;

/** Configuration that could make git store a blob otherwise than writeLooseBlob does (see the header). */
const CONFIG_THAT_MATTERS = /attributesfile|include|sharedrepository|objectformat|compatobjectformat/i;

/**
 * Would `git hash-object -w --path=<gitPath>` store `bytes` as they are? `index` has the entries of the index for the
 * `.gitattributes` paths along gitPath (attributesAlong), which git reads where the worktree has none.
 */
export async function storedAsIs(
  repo: RepoLocation,
  configs: ConfigFiles,
  top: string,
  gitPath: string,
  bytes: Buffer,
  index: ReadonlyMap<string, IndexEntry[]>,
): Promise<boolean> {
  if (bytes.indexOf(13) !== -1) return false;
  if (attributesAlong(gitPath).some((p) => index.has(p))) return false;
  const env = gitEnv();
  const home = env.HOME ?? "";
  const xdg = env.XDG_CONFIG_HOME || path.join(home, ".config");
  const attributeFiles = [
    ...attributesAlong(gitPath).map((p) => path.join(top, p)),
    path.join(repo.gitDir, "info", "attributes"),
    ...(repo.commonDir !== repo.gitDir ? [path.join(repo.commonDir, "info", "attributes")] : []),
    path.join(xdg, "git", "attributes"),
    ...(env.GIT_ATTR_NOSYSTEM ? [] : ["/etc/gitattributes", "/usr/local/etc/gitattributes"]),
  ];
  if (attributeFiles.some(exists)) return false;
  return configs.free(repo, CONFIG_THAT_MATTERS);
}

/**
 * The configuration files git reads here (the repository's, the worktree's, the global and system ones), each kept as
 * last read while it is the same file: its device, inode, size and modification and change times in nanoseconds, as
 * IndexFiles tells an index (git writes a config by renaming a new file over it). A call asks twice (the blob, the
 * index), and a stat costs a fraction of a read. One per repository (GitRepo.configFiles).
 */
export class ConfigFiles {
  private readonly texts = new Map<string, { identity: string; text: string | null }>();

  /**
   * Whether no configuration file git reads here matches `pattern` (an unreadable one could hold anything; git runs
   * without GIT_CONFIG_PARAMETERS, see childEnv). Synchronous, as the attribute files are looked for: a few small
   * files, where each asynchronous step costs more than the step itself.
   */
  free(repo: RepoLocation, pattern: RegExp): boolean {
    const env = gitEnv();
    const home = env.HOME ?? "";
    const xdg = env.XDG_CONFIG_HOME || path.join(home, ".config");
    const configs = [
      path.join(repo.commonDir, "config"),
      path.join(repo.gitDir, "config.worktree"),
      env.GIT_CONFIG_GLOBAL ?? path.join(home, ".gitconfig"),
      path.join(xdg, "git", "config"),
      ...(env.GIT_CONFIG_NOSYSTEM ? [] : [env.GIT_CONFIG_SYSTEM ?? "/etc/gitconfig", "/usr/local/etc/gitconfig"]),
    ];
    return configs.every((f) => {
      const text = this.text(f);
      return text !== undefined && (text === null || !pattern.test(text));
    });
  }

  /** A file's text, null when there is none, undefined when it cannot be read. */
  private text(file: string): string | null | undefined {
    let st: BigIntStats;
    try {
      st = statSync(file, { bigint: true });
    } catch (e) {
      return isNodeError(e, "ENOENT") || isNodeError(e, "ENOTDIR") ? null : undefined;
    }
    const identity = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    const known = this.texts.get(file);
    if (known?.identity === identity) return known.text;
    let text: string | null;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      if (!(isNodeError(e, "ENOENT") || isNodeError(e, "ENOTDIR"))) return undefined;
      text = null;
    }
    this.texts.set(file, { identity, text });
    return text;
  }
}

/** The `.gitattributes` paths git reads for gitPath: the top's and each folder's on the way down. */
export function attributesAlong(gitPath: string): string[] {
  const parts = gitPath.split("/").slice(0, -1);
  return [".gitattributes", ...parts.map((_, k) => `${parts.slice(0, k + 1).join("/")}/.gitattributes`)];
}

/** Whether `file` may exist: an error other than its absence says yes. */
function exists(file: string): boolean {
  try {
    accessSync(file);
    return true;
  } catch (e) {
    return !(isNodeError(e, "ENOENT") || isNodeError(e, "ENOTDIR"));
  }
}

/** The top of the worktree from the root and its prefix in the repository ("" or "sub/dir/"). */
export function worktreeTop(root: string, prefix: string): string {
  return path.resolve(
    root,
    ...prefix
      .split("/")
      .filter(Boolean)
      .map(() => ".."),
  );
}
