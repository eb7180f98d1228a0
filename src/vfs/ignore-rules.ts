import { IgnorePatterns } from "./ignore-patterns.js";

/** Outside a git repository there is no .gitignore to ask, so these (dependencies, build output, caches) stay unwatched. */
export const DEFAULT_IGNORES = [
  ".git/",
  "node_modules/",
  "dist/",
  "build/",
  "out/",
  "target/",
  "coverage/",
  ".cache/",
  ".next/",
  ".venv/",
  "venv/",
  "__pycache__/",
  ".tox/",
  ".idea/",
  ".DS_Store",
];

/**
 * Folders at the root that tools the daemon runs keep for themselves (CodeGraph's index): never watched or reported,
 * whatever the ignore files say, as `.git` folders are not.
 */
export const DAEMON_FOLDERS = new Set([".codegraph"]);

/**
 * Git's ignore rules for a tree: one IgnorePatterns per folder that has a .gitignore (the root one also holds
 * .git/info/exclude or the defaults). Like git, the deepest file with a matching rule decides, and a path under an ignored
 * folder is ignored whatever its own rules say. `.git` folders are never watched.
 */
export class IgnoreRules {
  private readonly bases = new Map<string, IgnorePatterns>();
  /** Decisions for folders, by root-relative path: every event under a folder asks about it again. */
  private readonly dirCache = new Map<string, boolean>();

  /**
   * `rootRules`: patterns, or whole files of them (the global excludes file, then info/exclude), that apply from the
   * root with the lowest priority. `ignoreCase`: git's core.ignoreCase, which git sets only where the disk folds case;
   * git matches case-sensitively without it.
   */
  constructor(
    rootRules: readonly string[] = [],
    private readonly ignoreCase = false,
  ) {
    if (rootRules.length) {
      const root = new IgnorePatterns(ignoreCase);
      for (const text of rootRules) root.add(text);
      this.bases.set("", root);
    }
  }

  /** Adds the rules of `<dir>/.gitignore` (dir root-relative, "" for the root). */
  addFile(dir: string, text: string): void {
    const existing = this.bases.get(dir);
    if (existing) existing.add(text);
    else this.bases.set(dir, new IgnorePatterns(this.ignoreCase).add(text));
    this.dirCache.clear();
  }

  get ruleFiles(): number {
    return this.bases.size;
  }

  /** Is this root-relative path (with `/`) ignored? `isDir` matters for rules like `build/`. */
  ignores(rel: string, isDir: boolean): boolean {
    if (rel === "" || rel === ".") return false;
    const parts = rel.split("/");
    let dir = "";
    for (let i = 0; i < parts.length - 1; i++) {
      dir = dir ? `${dir}/${parts[i]}` : parts[i];
      if (this.dirIgnored(dir)) return true;
    }
    return isDir ? this.dirIgnored(rel) : this.decide(rel, false);
  }

  private dirIgnored(dir: string): boolean {
    let v = this.dirCache.get(dir);
    if (v === undefined) {
      v = this.decide(dir, true);
      this.dirCache.set(dir, v);
    }
    return v;
  }

  /** The path's own verdict, ancestors aside: the deepest rules file with an opinion wins. */
  private decide(rel: string, isDir: boolean): boolean {
    const name = rel.slice(rel.lastIndexOf("/") + 1);
    if (name === ".git" || DAEMON_FOLDERS.has(rel)) return true;
    if (this.bases.size === 0) return false;
    let base = rel;
    for (;;) {
      const cut = base.lastIndexOf("/");
      base = cut < 0 ? "" : base.slice(0, cut);
      const rules = this.bases.get(base);
      if (rules) {
        // the path's own name only: its folders were judged by every file's rules first
        const v = rules.verdict(base ? rel.slice(base.length + 1) : rel, isDir);
        if (v !== undefined) return v;
      }
      if (base === "") return false;
    }
  }
}
