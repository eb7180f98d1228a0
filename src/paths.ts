import { mkdirSync, realpathSync, statSync } from "node:fs";
import { lstat } from "node:fs/promises";
import path from "node:path";
import { ToolError, isNodeError, toolErrorOf } from "./errors.js";

/** Where a caller's path lands, checked once here for every tool (SPEC 3). */
export interface ResolvedPath {
  /** The workspace root (a real path) the path was checked against. */
  root: string;
  /** Root-relative, with `/` separators; "" for the root itself. Used in results and events. */
  rel: string;
  /** Absolute path as named (a symlink stays a symlink here: delete removes the link). */
  abs: string;
  /** Absolute real path (symlinks followed; for a missing file, its real parent joined with the rest). Reads and writes go here. */
  real: string;
  /** `real` root-relative (with `/`): what views, attribution and staleness are keyed by (SPEC 3: a file reached through a symlink is one file). */
  realRel: string;
  exists: boolean;
}

/** The directory entry a path names itself (a symlink is the link, not its target): what a delete or a move acts on. */
export interface Entry {
  /** Real path of the folder that holds the entry. */
  dir: string;
  name: string;
}

export interface ResolveOptions {
  /** Only the git tools may touch `.git`. */
  allowGitDir?: boolean;
}

/** `.git` as a path component at any depth: the root's git folder, a nested repository's, or a gitdir file (SPEC 3). */
export function hasGitComponent(rel: string): boolean {
  return rel === ".git" || rel.startsWith(".git/") || rel.endsWith("/.git") || rel.includes("/.git/");
}

/**
 * Whether `abs` is `root` or under it. Only a `..` component leads out: a name that merely starts with two dots
 * (`..notes.txt`, `...`) is inside.
 */
export function isInside(root: string, abs: string): boolean {
  const rel = path.relative(root, abs);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The real path of `p`, missing or not: its nearest existing parent's real path joined with the rest. */
function realPathOf(p: string): string {
  let rest = "";
  for (let probe = path.resolve(p); ; probe = path.dirname(probe)) {
    try {
      return path.join(realpathSync.native(probe), rest);
    } catch (e) {
      if (!isNodeError(e, "ENOENT") || path.dirname(probe) === probe) throw e;
      rest = path.join(path.basename(probe), rest);
    }
  }
}

/**
 * The daemon's state folder (approvals, output files) as a real path, made (only the daemon's user may enter it) if it
 * is missing. Refused, with a sentence for stderr, when it lies inside the workspace or holds it: a repository could
 * arrive with approvals of its own there (HOME or XDG_STATE_HOME at or under the root), and every command could write
 * them (SPEC 12). Refused rather than moved: an approvals file that silently lived elsewhere would be one a person
 * cannot find, and the one variable that fixes it is named in the message.
 */
export function prepareStateDir(dir: string, root: string): string {
  const real = realPathOf(dir);
  const shown = real === path.resolve(dir) ? dir : `${dir} (really ${real})`;
  if (isInside(root, real)) {
    throw new Error(
      `the state folder ${shown} is inside the workspace ${root}, where a repository could bring approvals of its own; set XDG_STATE_HOME to a folder outside the workspace`,
    );
  }
  if (isInside(real, root)) throw new Error(`the workspace ${root} is inside the state folder ${shown}; set XDG_STATE_HOME to a folder outside the workspace`);
  try {
    mkdirSync(real, { recursive: true, mode: 0o700 });
  } catch {
    /* a read-only home: approvals cannot be kept, output files go to the system temp folder (OutputStore) */
  }
  return real;
}

export class PathResolver {
  readonly root: string;

  constructor(root: string) {
    this.root = realpathSync(path.resolve(root));
    if (!statSync(this.root).isDirectory()) throw new Error(`--root ${root} is not a directory`);
  }

  isInside(abs: string): boolean {
    return isInside(this.root, abs);
  }

  toRel(abs: string): string {
    return path.relative(this.root, abs).split(path.sep).join("/");
  }

  /** A root-relative name for a message: what a model can pass back (absolute only when it is outside). */
  describe(abs: string): string {
    return this.isInside(abs) ? this.toRel(abs) || "." : abs;
  }

  async resolve(input: string, options: ResolveOptions = {}): Promise<ResolvedPath> {
    if (input.includes("\0")) throw new ToolError("INVALID_PARAMS", "path: contains a NUL byte.");
    const abs = path.resolve(this.root, input);
    if (!this.isInside(abs)) throw outside(input);
    const rel = this.toRel(abs);
    if (!options.allowGitDir) forbidGit(rel, input);

    const { real, exists } = await realOf(abs, rel).catch((e: unknown) => {
      throw toolErrorOf(e, () => rel || ".") ?? e;
    });
    if (real !== abs && !this.isInside(real)) throw outside(input, real);
    const realRel = real === abs ? rel : this.toRel(real);
    if (!options.allowGitDir) forbidGit(realRel, input);
    return { root: this.root, rel, abs, real, realRel, exists };
  }

  /**
   * The entry `target` names itself, in its folder's real path: for `link.txt` the link, for `dir-link/a.txt` the file in
   * the folder the link leads to. Checked like resolve (inside the root, not in `.git`).
   */
  entryOf(target: ResolvedPath): Entry {
    const name = path.basename(target.abs);
    let dir: string;
    try {
      dir = realpathSync.native(path.dirname(target.abs));
    } catch (e) {
      throw toolErrorOf(e, () => target.rel) ?? e;
    }
    if (!this.isInside(dir)) throw outside(target.rel, dir);
    forbidGit(this.toRel(path.join(dir, name)), target.rel);
    return { dir, name };
  }
}

function outside(input: string, real?: string): ToolError {
  const via = real ? ` (it resolves to ${real})` : "";
  return new ToolError("PATH_OUTSIDE_ROOT", `${input} is outside the workspace root${via}; use a path inside the root.`);
}

function forbidGit(rel: string, input: string): void {
  if (hasGitComponent(rel)) {
    throw new ToolError("PATH_FORBIDDEN", `${input} is in a .git folder (or is a .git file), which only the git tools manage.`);
  }
}

/** The real path of `abs`; a missing file is checked through its nearest existing parent. */
async function realOf(abs: string, rel: string): Promise<{ real: string; exists: boolean }> {
  let missing = "";
  let probe = abs;
  for (;;) {
    try {
      // Synchronous on purpose: a realpath of cached directory entries takes microseconds, while the async call's
      // thread-pool round trip was the largest single cost of a file_read (profiled: ~19% of the daemon's CPU).
      const real = realpathSync.native(probe);
      return { real: missing ? path.join(real, missing) : real, exists: missing === "" };
    } catch (e) {
      if (isNodeError(e, "ENOENT") || isNodeError(e, "ENOTDIR")) {
        // A dangling symlink: its target is what a write would create, so check where it points.
        const link = await lstat(probe).catch(() => undefined);
        if (link?.isSymbolicLink()) throw new ToolError("NOT_FOUND", `${rel} is a symlink to a missing target; fix the link or name its target.`);
        const parent = path.dirname(probe);
        if (parent === probe) throw e;
        missing = missing ? path.join(path.basename(probe), missing) : path.basename(probe);
        probe = parent;
        continue;
      }
      throw e;
    }
  }
}
