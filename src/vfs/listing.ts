import { type Dirent, lstatSync } from "node:fs";
import { readFile, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { TEMP_FILE_PATTERN } from "../fs/atomic-write.js";
import type { Supervisor } from "../platform/supervisor.js";
import { linkTarget, readSmallText } from "./file-probe.js";
import { parentOf } from "./file-index.js";
import { trackedSymlinks } from "./git-index.js";
import { DEFAULT_IGNORES, IgnoreRules } from "./ignore-rules.js";

/**
 * A .gitignore (or info/exclude) above this is not read: real ones are a few KB (Linux's root one is 4 KB), and a bound
 * keeps a hostile one from costing memory. git itself ignores those over 100 MiB.
 */
export const IGNORE_FILE_MAX_BYTES = 1024 * 1024;
/** git's mode for a symlink, as ls-files prints it. */
const LINK_MODE = "120000";

/** git ls-files on a 100,000-file tree prints a few MB; this leaves room for far larger repositories. */
const GIT_MAX_BUFFER = 512 * 1024 * 1024;

export interface Listing {
  /** Root-relative paths (with `/`) of every file that is watched. */
  files: string[];
  rules: IgnoreRules;
  /** Absolute paths of ignored folders that exist now, so an engine need not watch them at all. */
  ignoredDirs: string[];
}

/**
 * What a new listing changes in the index after the ignore rules changed (a .gitignore or info/exclude was edited),
 * without events: the files themselves did not change. Only what the rules explain moves: a path the new rules ignore
 * and the listing leaves out is dropped, a listed path the old rules ignored is added. Anything else the listing and
 * the index disagree on is a change on disk whose own event is on its way (a file made or removed while git listed),
 * which the pipeline reports: taken in silently here, it would come out as `modified`, or its deletion never at all.
 */
export function ruleChanges(
  indexed: readonly string[],
  has: (rel: string) => boolean,
  listing: Pick<Listing, "files" | "rules">,
  oldRules: IgnoreRules,
): { added: string[]; removed: string[] } {
  const listed = new Set(listing.files);
  return {
    added: listing.files.filter((p) => !has(p) && oldRules.ignores(p, false)),
    removed: indexed.filter((p) => !listed.has(p) && listing.rules.ignores(p, false)),
  };
}

/** Runs a read-only git command in the root and returns its stdout; rejects when it fails. */
export type GitReader = (args: string[]) => Promise<string>;

/** A read-only git command in the root: no fsmonitor (a program the workspace names), no optional locks (a listing must not rewrite the index). */
function readOnlyGit(root: string, args: string[]) {
  return {
    cmd: "git",
    args: ["-c", "core.fsmonitor=false", "-c", "core.quotePath=false", ...args],
    cwd: root,
    env: { GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" },
    group: false,
    label: "git (vfs)",
  };
}

/** A GitReader through the daemon's supervisor. */
export function gitReader(processes: Pick<Supervisor, "run">, root: string): GitReader {
  return async (args) => {
    const r = await processes.run(readOnlyGit(root, args), { maxBytes: GIT_MAX_BUFFER, timeoutMs: LISTING_TIMEOUT_MS });
    if (r.code !== 0 || r.truncated) throw new Error(`git ${args[0]} failed (exit ${r.code}${r.truncated ? ", output cut" : ""}): ${r.stderr.trim()}`);
    return r.stdout;
  };
}

/**
 * Which of these root-relative files git's rules ignore (tracked files never), by git's own word and as the disk is
 * now (the VFS's rules may be a window behind a .gitignore just written); undefined when git cannot say.
 */
export async function gitIgnored(
  processes: Pick<Supervisor, "run">,
  root: string,
  rels: readonly string[],
  signal?: AbortSignal,
): Promise<Set<string> | undefined> {
  if (!rels.length) return new Set();
  const r = await processes.run(readOnlyGit(root, ["check-ignore", "-z", "--stdin"]), {
    input: `${rels.join("\0")}\0`,
    maxBytes: GIT_MAX_BUFFER,
    timeoutMs: LISTING_TIMEOUT_MS,
    signal,
  });
  if ((r.code !== 0 && r.code !== 1) || r.truncated) return undefined; // 1: none is ignored
  return new Set(r.stdout.split("\0").filter(Boolean));
}

/** A listing of a huge repository on a slow disk may take long; past this git is stuck, and the walk takes over. */
const LISTING_TIMEOUT_MS = 120_000;

/**
 * Everything git would show (tracked files and untracked, not ignored ones) from two git calls, and the rules to judge
 * paths that appear later. Nested .gitignore files count, as do .git/info/exclude and the global excludes file.
 */
export async function listGit(git: GitReader, root: string, gitDir: string, ignoredDirs?: Promise<string[]>): Promise<Listing> {
  // Tracked and untracked files from two calls that run side by side (git reads the index for one, walks the tree for
  // the other), and the tracked symlinks from the index itself (see git-index.ts).
  const [cached, others, ignored, global, exclude, ignoreCase, links] = await Promise.all([
    git(["ls-files", "-z", "--cached", "--deduplicate"]),
    git(["ls-files", "-z", "--others", "--exclude-standard"]),
    ignoredDirs ?? listIgnoredDirs(git, root),
    globalExcludes(git, root),
    readSmallText(path.join(gitDir, "info", "exclude"), IGNORE_FILE_MAX_BYTES),
    git(["config", "--bool", "--get", "core.ignoreCase"]).then(
      (v) => v.trim() === "true",
      () => false, // unset (exit 1): git matches case-sensitively
    ),
    readFile(path.join(gitDir, "index"))
      .then(trackedSymlinks, () => [] as string[])
      .then((found) => found ?? stagedSymlinks(git)),
  ]);
  const list = workspaceFiles(root, cached, others, new Set(links));
  // as --exclude-standard ranks them: info/exclude over the global file (in one matcher the later rule wins)
  const rules = new IgnoreRules([global, exclude].filter(Boolean), ignoreCase);
  const learn = async (dir: string) => {
    // Never through a link (git 2.32+ does not follow a symlinked .gitignore either).
    const text = await readSmallText(path.join(root, dir, ".gitignore"), IGNORE_FILE_MAX_BYTES);
    if (text) rules.addFile(dir, text);
  };
  const listedRules = new Set(list.filter((f) => f === ".gitignore" || f.endsWith("/.gitignore")).map((f) => parentOf(f)));
  await Promise.all([...listedRules].map(learn));
  await learnUnlisted(root, listedRules, ignored, rules, learn);
  return { files: list, rules, ignoredDirs: ignored };
}

/**
 * git reads the .gitignore of every folder it enters, but lists one only when it is tracked or not ignored: an
 * untracked one that ignores itself (`*`, as pytest, mypy, ruff and uv write into their caches) is read by git and left
 * out of the listing. The root's is read whatever git lists; in a folder git reports ignored that the rules do not
 * ignore (all its files ignored by such a file: .pytest_cache/), a walk reads those it meets. Not read: an untracked,
 * self-ignoring one in a folder that keeps other files (the probe of every listed folder cost a tenth of a 100k
 * listing), and one alone in its folder (git neither lists nor reports that folder).
 */
async function learnUnlisted(
  root: string,
  listedRules: ReadonlySet<string>,
  ignoredDirs: readonly string[],
  rules: IgnoreRules,
  learn: (dir: string) => Promise<void>,
): Promise<void> {
  if (!listedRules.has("")) await learn("");
  for (const abs of ignoredDirs) {
    const rel = path.relative(root, abs).split(path.sep).join("/");
    if (rel && !rel.startsWith("..") && !rules.ignores(rel, true)) await walk(root, rel, rules, []);
  }
}

/**
 * The text of git's global excludes file (core.excludesFile, else $XDG_CONFIG_HOME/git/ignore or ~/.config/git/ignore),
 * "" when there is none: `git ls-files --exclude-standard` applies it, so paths that appear later are judged by it too.
 * A user's own file outside the workspace: read through a link (dotfiles often are links), git does as much.
 */
export async function globalExcludes(git: GitReader, root: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const configured = (await git(["config", "--path", "--get", "core.excludesFile"]).catch(() => "")).trim();
  const fallback = env.XDG_CONFIG_HOME ? path.join(env.XDG_CONFIG_HOME, "git", "ignore") : env.HOME ? path.join(env.HOME, ".config", "git", "ignore") : "";
  const file = configured ? path.resolve(root, configured) : fallback;
  if (!file) return "";
  try {
    const st = await stat(file);
    return st.isFile() && st.size <= IGNORE_FILE_MAX_BYTES ? await readFile(file, "utf8") : "";
  } catch {
    return "";
  }
}

/** The tracked symlinks by git's own word, when the index is not one git-index.ts reads (a split index). */
async function stagedSymlinks(git: GitReader): Promise<string[]> {
  const out = await git(["ls-files", "-z", "--stage", "--cached"]);
  const links: string[] = [];
  for (const entry of out.split("\0")) if (entry.startsWith(`${LINK_MODE} `)) links.push(entry.slice(entry.indexOf("\t") + 1));
  return links;
}

/**
 * The listed paths without temp files and without links that are not a regular file inside the root (a link to
 * /proc/self/pagemap in a cloned repository is not a workspace file). Tracked links are known from the index; untracked
 * files are lstat'ed, and they are few in a repository.
 */
function workspaceFiles(root: string, cached: string, others: string, trackedLinks: Set<string>): string[] {
  const files: string[] = [];
  const keep = (rel: string, link: boolean) => {
    if (!rel || TEMP_FILE_PATTERN.test(rel)) return;
    if (link && !linkTarget(root, path.join(root, rel))) return;
    files.push(rel);
  };
  for (const rel of cached.split("\0")) keep(rel, trackedLinks.size > 0 && trackedLinks.has(rel));
  for (const rel of others.split("\0")) keep(rel, rel !== "" && isLink(path.join(root, rel)));
  return files;
}

function isLink(abs: string): boolean {
  try {
    return lstatSync(abs).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Absolute paths of the ignored folders git sees now (node_modules, build output): never watched. */
export async function listIgnoredDirs(git: GitReader, root: string): Promise<string[]> {
  const out = await git(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--no-empty-directory"]);
  return out
    .split("\0")
    .filter((p) => p.endsWith("/"))
    .map((p) => path.join(root, p.slice(0, -1)));
}

/**
 * Outside git: which of these root-relative files the VFS's rules ignore (the defaults, and the .gitignore files of
 * their folders), from the disk as it is now, as listPlain would judge them.
 */
export async function plainIgnored(root: string, rels: readonly string[]): Promise<Set<string>> {
  const rules = new IgnoreRules(DEFAULT_IGNORES);
  const dirs = new Set<string>();
  for (const rel of rels)
    for (let dir = parentOf(rel); !dirs.has(dir); dir = parentOf(dir)) {
      dirs.add(dir);
      if (dir === "") break;
    }
  for (const dir of dirs) {
    const text = await readSmallText(path.join(root, dir, ".gitignore"), IGNORE_FILE_MAX_BYTES);
    if (text) rules.addFile(dir, text);
  }
  return new Set(rels.filter((rel) => rules.ignores(rel, false)));
}

/** Outside git: a walk that skips DEFAULT_IGNORES and honours any .gitignore it meets on the way down. */
export async function listPlain(root: string): Promise<Listing> {
  const rules = new IgnoreRules(DEFAULT_IGNORES);
  const files: string[] = [];
  const ignoredDirs: string[] = [];
  await walk(root, "", rules, files, ignoredDirs);
  return { files, rules, ignoredDirs };
}

/**
 * Adds every watched file under `rel` (a folder, "" for the root) to `files`; also used for folders that appear later.
 * `skippedLinks`, when given, gets the links that are not watched (they leave the root, name a folder, or dangle).
 */
export async function walk(
  root: string,
  rel: string,
  rules: IgnoreRules,
  files: string[],
  ignoredDirs?: string[],
  learnRules = true,
  skippedLinks?: string[],
): Promise<string[]> {
  const dirs: string[] = [];
  let entries: Dirent[];
  try {
    entries = await readdir(path.join(root, rel), { withFileTypes: true });
  } catch {
    return dirs; // gone already, or unreadable: nothing to watch there
  }
  if (learnRules && entries.some((e) => e.name === ".gitignore" && e.isFile())) {
    rules.addFile(rel, await readSmallText(path.join(root, rel, ".gitignore"), IGNORE_FILE_MAX_BYTES));
  }
  const subdirs: string[] = [];
  for (const e of entries) {
    const child = rel ? `${rel}/${e.name}` : e.name;
    const isDir = e.isDirectory();
    if (rules.ignores(child, isDir)) {
      if (isDir) ignoredDirs?.push(path.join(root, child));
      continue;
    }
    if (isDir) subdirs.push(child);
    else if (TEMP_FILE_PATTERN.test(child))
      continue; // a file tool's temp file, left by a kill mid-write
    // A FIFO, socket or device is not a file to watch; nor is a link unless it names a regular file inside the root.
    else if (e.isFile() || (e.isSymbolicLink() && linkTarget(root, path.join(root, child)))) files.push(child);
    else if (e.isSymbolicLink()) skippedLinks?.push(child);
  }
  dirs.push(...subdirs);
  for (const d of subdirs) dirs.push(...(await walk(root, d, rules, files, ignoredDirs, learnRules, skippedLinks)));
  return dirs;
}
