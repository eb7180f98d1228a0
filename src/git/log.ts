/** Commits and changed files as structured data, and the lines a tool's `text` shows them in. */
import { plural } from "../core/text.js";
import { type GitCtx, NO_SUBMODULE_WORKTREES, git } from "./run.js";

export interface OneCommit {
  sha: string;
  short: string;
  author: string;
  email: string;
  date: string;
  subject: string;
}

const LOG_FORMAT = "--format=%H%x00%h%x00%an%x00%ae%x00%aI%x00%s%x1e";

/** Commits as structured data; `args` are extra rev-list arguments (ranges, -n, `-- path`). */
export async function logCommits(ctx: GitCtx, args: string[]): Promise<OneCommit[]> {
  const r = await git(ctx, ["log", LOG_FORMAT, ...args]);
  return r.stdout
    .split("\x1e")
    .map((s) => s.replace(/^\n/, ""))
    .filter(Boolean)
    .map((rec) => {
      const [sha, short, author, email, date, subject] = rec.split("\0");
      return { sha, short, author, email, date, subject };
    });
}

export function commitLine(c: OneCommit): string {
  return `${c.short} ${c.date.slice(0, 10)} ${c.author}: ${c.subject}`;
}

/** `git diff --stat`-like summary lines and numbers, from `--numstat -z`. */
export interface FileStat {
  path: string;
  added: number | null;
  deleted: number | null;
}

/** `git diff --numstat` (or `git show`'s) of `args`, on the index of the context (withTempIndex's, else the real one). */
export async function numstat(ctx: GitCtx, args: string[], command: "diff" | "show" = "diff"): Promise<FileStat[]> {
  const extra = command === "show" ? ["--format="] : [NO_SUBMODULE_WORKTREES];
  const r = await git(ctx, [command, "--numstat", "-z", "--no-renames", ...extra, ...args]);
  const parts = r.stdout
    .split("\0")
    .map((p) => p.replace(/^\n+/, ""))
    .filter(Boolean);
  return parts.map((p) => {
    const [a, d, ...rest] = p.split("\t");
    return { path: rest.join("\t"), added: a === "-" ? null : Number(a), deleted: d === "-" ? null : Number(d) };
  });
}

export function statText(files: FileStat[], max = MAX_LISTED): string {
  const lines = files.slice(0, max).map((f) => `  ${f.path} ${f.added === null ? "(binary)" : `+${f.added} -${f.deleted}`}`);
  if (files.length > max) lines.push(`  … and ${plural(files.length - max, "more file", "more files")}`);
  return lines.join("\n");
}

/** Files listed in a `text` before the rest is summarised as a count: enough to judge, short enough for a model. */
export const MAX_LISTED = 100;
