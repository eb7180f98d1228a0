import ignore, { type Ignore } from "ignore";

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
 * Git's ignore rules for a tree: one `ignore` matcher per folder that has a .gitignore (the root one also holds
 * .git/info/exclude or the defaults). Like git, the deepest file with a matching rule decides, and a path under an ignored
 * folder is ignored whatever its own rules say. `.git` folders are never watched.
 */
export class IgnoreRules {
  private readonly bases = new Map<string, OwnVerdict>();
  /** Decisions for folders, by root-relative path: every event under a folder asks about it again. */
  private readonly dirCache = new Map<string, boolean>();

  /**
   * `rootRules`: patterns, or whole files of them (the global excludes file, then info/exclude), that apply from the
   * root with the lowest priority. One text: the package takes each string of an array as one pattern, newlines and all.
   * `ignoreCase`: git's core.ignoreCase, which git sets only where the disk folds case; git matches case-sensitively
   * without it (the package folds case unless told not to, so `a` ignored `A`).
   */
  constructor(
    rootRules: readonly string[] = [],
    private readonly ignoreCase = false,
  ) {
    if (rootRules.length) this.bases.set("", ownVerdict(this.matcher().add(rootRules.join("\n"))));
  }

  private matcher(): Ignore {
    return ignore({ ignorecase: this.ignoreCase });
  }

  /** Adds the rules of `<dir>/.gitignore` (dir root-relative, "" for the root). */
  addFile(dir: string, text: string): void {
    const existing = this.bases.get(dir);
    if (existing) existing.add(text);
    else this.bases.set(dir, ownVerdict(this.matcher().add(text)));
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
      const ig = this.bases.get(base);
      if (ig) {
        const sub = (base ? rel.slice(base.length + 1) : rel) + (isDir ? "/" : "");
        const r = ig.test(sub); // the path's own rules only: its folders were judged by every file's rules first
        if (r.ignored) return true;
        if (r.unignored) return false;
      }
      if (base === "") return false;
    }
  }
}

/** A rules file's verdict on one path, its folders aside (see ownVerdict). */
interface OwnVerdict {
  add(text: string): void;
  test(path: string): { ignored: boolean; unignored: boolean };
}

/**
 * The `ignore` package's test() also applies a file's rules to the path's folders, and an ignored folder settles it;
 * but a deeper .gitignore may re-include that folder (`!dist` under the defaults' `dist/`), and git then judges the
 * files inside by their own names. IgnoreRules judges the folders first with every file's rules, so each file's verdict
 * on the path itself is wanted: the package's rule list test (ignore 7.0.17, pinned), "one single path without
 * recursively checking parent directories".
 */
function ownVerdict(ig: Ignore): OwnVerdict {
  type RuleList = { test(path: string, mode: string): { ignored: boolean; unignored: boolean } };
  const rules = (ig as unknown as { _rules?: RuleList })._rules;
  if (typeof rules?.test !== "function") throw new Error("the ignore package lacks its rule list's test (ignore 7.0.17 is pinned)");
  return {
    add: (text) => void ig.add(text),
    test: (path) => rules.test(path, "regex"),
  };
}
