/**
 * git as the oracle of the property tests: diffs of two byte strings (`git diff --no-index`, histogram and the indent
 * heuristic, nothing from the user's configuration that could change them), their change groups, word diffs, and
 * patches applied with `git apply`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A scratch folder for one test file's oracle runs, and its cleanup. */
export function scratch(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-prop-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** git with a clean configuration (no user or system file), as bytes; exit codes other than 0 and 1 throw. */
export function gitRun(cwd: string, args: readonly string[], input?: Buffer | string): { code: number; stdout: Buffer } {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", LC_ALL: "C" };
  const r = spawnSync("git", args, { cwd, input, env, maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  if (r.status !== 0 && r.status !== 1) throw new Error(`git ${args.join(" ")}: exit ${r.status}: ${r.stderr}`);
  return { code: r.status, stdout: r.stdout };
}

const DIFF = [
  "-c",
  "core.autocrlf=false",
  "-c",
  "core.quotePath=false",
  "diff",
  "--no-index",
  "--no-color",
  "--no-ext-diff",
  "--no-renames",
  "--histogram",
  "--indent-heuristic",
];

/** `git diff --histogram` of two byte strings (written to `dir/a` and `dir/b`), with `extra` options. */
export function gitDiff(dir: string, a: Buffer, b: Buffer, extra: readonly string[] = []): string {
  writeFileSync(path.join(dir, "a"), a);
  writeFileSync(path.join(dir, "b"), b);
  return gitRun(dir, [...DIFF, ...extra, "a", "b"]).stdout.toString("utf8");
}

/** A change of a diff: old lines [oldStart, oldEnd) became new lines [start, end), 0-based. */
export interface Change {
  oldStart: number;
  oldEnd: number;
  start: number;
  end: number;
}

/** The changes of a unified diff: each run of `-` and `+` lines between context lines. */
export function changesOf(patch: string): Change[] {
  const out: Change[] = [];
  let o = 0;
  let n = 0;
  let open: Change | undefined;
  for (const line of patch.split("\n")) {
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      open = undefined;
      o = Number(hunk[1]) - (hunk[2] === "0" ? 0 : 1);
      n = Number(hunk[3]) - (hunk[4] === "0" ? 0 : 1);
      continue;
    }
    const sign = line[0];
    if (sign === " ") {
      open = undefined;
      o++;
      n++;
    } else if (sign === "-" && !line.startsWith("--- ")) {
      if (!open) out.push((open = { oldStart: o, oldEnd: o, start: n, end: n }));
      open.oldEnd = ++o;
    } else if (sign === "+" && !line.startsWith("+++ ")) {
      if (!open) out.push((open = { oldStart: o, oldEnd: o, start: n, end: n }));
      open.end = ++n;
    }
  }
  return out;
}

/**
 * The words of `git diff --word-diff=porcelain` between two one-line files under `regex`: `=word`, `-word`, `+word` in
 * the order git prints them, split into words by `split` (porcelain keeps the whitespace between them).
 */
export function gitWordDiff(dir: string, a: string, b: string, regex: string, split: RegExp): string[] {
  const out = gitDiff(dir, Buffer.from(`${a}\n`), Buffer.from(`${b}\n`), ["--word-diff=porcelain", `--word-diff-regex=${regex}`]);
  const lines = out.split("\n");
  const body = lines.slice(lines.findIndex((l) => l.startsWith("@@")) + 1);
  const words: string[] = [];
  for (const l of body) {
    if (!l || l === "~") continue;
    const op = l[0] === " " ? "=" : l[0];
    for (const w of l.slice(1).match(split) ?? []) words.push(op + w);
  }
  return words;
}

/**
 * `git apply` of a patch of file `f` (headers `a/f`, `b/f`) to `before`, outside any repository: the bytes it leaves,
 * or null when git refuses the patch (its words in `refused`).
 */
export function applyPatch(
  dir: string,
  before: Buffer,
  patch: string,
  opts: { reverse?: boolean; zero?: boolean } = {},
): { after: Buffer | null; refused: string } {
  writeFileSync(path.join(dir, "f"), before);
  const args = ["apply", ...(opts.reverse ? ["-R"] : []), ...(opts.zero ? ["--unidiff-zero"] : []), "--whitespace=nowarn", "-"];
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
  const r = spawnSync("git", args, { cwd: dir, input: patch, env });
  return r.status === 0 ? { after: readFileSync(path.join(dir, "f")), refused: "" } : { after: null, refused: String(r.stderr) };
}
