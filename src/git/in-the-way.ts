import { lstat } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../errors.js";
import { pathspec } from "./params.js";
import { EMPTY_TREE } from "./refs.js";
import { git, type GitCtx } from "./run.js";

/** Paths per git argument list: far below any argv limit, and one process per thousand files is cheap. */
const ARGS_PER_CALL = 1000;
/** lstat calls in flight at once: enough to hide the thread pool's latency, few enough to leave it to others. */
const LSTAT_BATCH = 64;

/**
 * Files on disk that git does not track and that moving the worktree from `from` to `to` would replace: what `to` adds
 * lands where an untracked or ignored file (or folder) is. git overwrites ignored files silently on checkout and merge,
 * and every such file on reset --hard, and no object keeps their content; so the caller names them and backs them up.
 * A folder that stands where `to` needs a file is listed with a trailing `/`.
 */
export interface InTheWay {
  /** Ignored by .gitignore: checkout and merge overwrite them without a word. */
  ignored: string[];
  /** Neither tracked nor ignored: checkout and merge refuse, reset --hard overwrites them. */
  untracked: string[];
}

export async function filesInTheWay(ctx: GitCtx, from: string | null, to: string): Promise<InTheWay> {
  const r = await git(ctx, ["diff", "--name-only", "-z", "--no-renames", "--diff-filter=A", from ?? EMPTY_TREE, to, "--"]);
  const added = r.stdout.split("\0").filter(Boolean);
  const onDisk = await occupied(ctx.repo.root, added);
  if (!onDisk.length) return { ignored: [], untracked: [] };
  const tracked = new Set<string>();
  for (let i = 0; i < onDisk.length; i += ARGS_PER_CALL) {
    const chunk = onDisk.slice(i, i + ARGS_PER_CALL).map((p) => pathspec(p.replace(/\/$/, "")));
    const t = await git(ctx, ["ls-files", "-z", "--", ...chunk]);
    for (const p of t.stdout.split("\0")) if (p) tracked.add(p);
  }
  // A staged new file is in the index, so the backup of the index keeps it; only what git does not know is at risk.
  const risky = onDisk.filter((p) => !tracked.has(p.replace(/\/$/, "")));
  if (!risky.length) return { ignored: [], untracked: [] };
  const ign = await git(ctx, ["check-ignore", "-z", "--stdin"], { ok: [0, 1], input: risky.map((p) => `${p.replace(/\/$/, "")}\0`).join("") });
  const ignoredSet = new Set(ign.stdout.split("\0").filter(Boolean));
  return {
    ignored: risky.filter((p) => ignoredSet.has(p.replace(/\/$/, ""))),
    untracked: risky.filter((p) => !ignoredSet.has(p.replace(/\/$/, ""))),
  };
}

/** Of the paths a tree adds, those whose place on disk is taken: by the path itself, or by a file where a folder must go. */
async function occupied(root: string, added: string[]): Promise<string[]> {
  const kinds = new Map<string, "dir" | "other" | "none">();
  const kindOf = async (rel: string) => {
    let k = kinds.get(rel);
    if (!k) {
      const s = await lstat(path.join(root, rel)).catch(() => null);
      k = !s ? "none" : s.isDirectory() ? "dir" : "other";
      kinds.set(rel, k);
    }
    return k;
  };
  const hits = new Set<string>();
  const check = async (p: string) => {
    const parts = p.split("/");
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join("/");
      const k = await kindOf(parent);
      if (k === "none") return;
      if (k === "other") {
        hits.add(parent);
        return;
      }
    }
    const k = await kindOf(p);
    if (k === "dir") hits.add(`${p}/`);
    else if (k === "other") hits.add(p);
  };
  for (let i = 0; i < added.length; i += LSTAT_BATCH) await Promise.all(added.slice(i, i + LSTAT_BATCH).map(check));
  return [...hits].sort();
}

/** Every file under the listed paths that git does not track (ignored ones included), for a backup to hold them. */
export async function expandUntracked(ctx: GitCtx, paths: string[]): Promise<string[]> {
  const files = paths.filter((p) => !p.endsWith("/"));
  const dirs = paths.filter((p) => p.endsWith("/"));
  for (let i = 0; i < dirs.length; i += ARGS_PER_CALL) {
    const chunk = dirs.slice(i, i + ARGS_PER_CALL).map((d) => pathspec(d.slice(0, -1)));
    const r = await git(ctx, ["ls-files", "-z", "--others", "--", ...chunk]);
    files.push(...r.stdout.split("\0").filter(Boolean));
  }
  return files;
}

export function inTheWayText(w: InTheWay, verb: string): string {
  const all = [...w.ignored, ...w.untracked];
  if (!all.length) return "";
  const shown = all.slice(0, 50).join(", ");
  return `untracked or ignored files that ${verb} overwritten (saved to the backup ref first): ${shown}${all.length > 50 ? `, … (${all.length - 50} more)` : ""}`;
}

/** checkout and merge stop on untracked (not ignored) files in the way; say so before anything starts. */
export function refuseUntracked(w: InTheWay, what: string): void {
  if (!w.untracked.length) return;
  throw new ToolError(
    "CONFLICT",
    `The ${what} would overwrite untracked files ${w.untracked.slice(0, 20).join(", ")}${w.untracked.length > 20 ? ", …" : ""}; move them away, or add and commit them (git_add, git_commit), first.`,
    { files: w.untracked },
  );
}
