import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { rgPath } from "@vscode/ripgrep";
import { ToolError } from "../errors.js";
import type { ManagedChild, Supervisor } from "../platform/supervisor.js";
import { DEFAULT_IGNORES } from "../vfs/ignore-rules.js";
import { LineSplitter, RG_PREVIEW_BYTES, parseRecord } from "./rg-output.js";

/** A search that runs this long is stopped (the call's own timeout is shorter; this is the process's backstop). */
const RG_TIMEOUT_MS = 60_000;
/** stderr kept from rg: enough for its error messages, bounded against a flood of per-file warnings. */
const MAX_STDERR_CHARS = 4000;
/** Bytes of a line's start kept to check it against the file when it is read: enough to tell an edited line. */
export const HEAD_KEPT_BYTES = 64;
/** The temp files of file writes (`.NAME.tl-HEX.tmp`, fs/atomic-write.ts) are never search results, hidden:true or not. */
const TEMP_FILE_GLOB = "!.*.tl-????????????.tmp";

export interface SearchOptions {
  pattern: string;
  /** Root-relative path to search ("" for the root). */
  rel: string;
  glob?: string[];
  caseSensitive?: boolean;
  fixedStrings?: boolean;
  context: number;
  hidden?: boolean;
  /**
   * The root is in a git repository: git's rules decide, as they do for the VFS listing (and so find_file, list_dir and
   * fs.changed). Else the VFS's own: its DEFAULT_IGNORES and the .gitignore files inside the root.
   */
  git: boolean;
  /**
   * Outside git: DEFAULT_IGNORES (node_modules/, dist/, ...) as an ignore file (defaultIgnoreFile()), below any
   * .gitignore, as the VFS applies them.
   */
  defaultIgnores?: string;
}

/**
 * One ignore policy with the VFS. Never ripgrep's own .ignore and .rgignore files (git and the VFS do not know them).
 * In a repository rg stops at its top as git does (with --no-require-git it would also read a .gitignore above it);
 * outside one only the root's .gitignore files count: none above the root, no global gitignore.
 */
export function ignoreArgs(o: Pick<SearchOptions, "git" | "defaultIgnores">): string[] {
  if (o.git) return ["--no-ignore-dot"];
  const args = ["--no-ignore-dot", "--no-require-git", "--no-ignore-parent", "--no-ignore-global"];
  if (o.defaultIgnores) args.push(`--ignore-file=${o.defaultIgnores}`);
  return args;
}

/** A line rg reported, without its file (RgFile holds that). */
export interface RgLine {
  line: number;
  /** Byte offset of the line in what rg searched (rg strips a UTF-8 BOM first). */
  offset: number;
  match: boolean;
  /** The line's first bytes as rg saw them (at most HEAD_KEPT_BYTES); `whole` when that is the entire line. */
  head: Buffer;
  whole: boolean;
}

export interface RgFile {
  /** The path as rg printed it, raw (relative to the root, `./` kept): what the file is opened by. */
  pathBytes: Buffer;
  lines: RgLine[];
}

export interface RipgrepOutcome {
  /** Matching lines reported. */
  total: number;
  /** More matches existed than the cap. */
  capped: boolean;
  /** `until` stopped rg before it had searched everything. */
  stoppedEarly: boolean;
  /** rg's complaints about individual files (unreadable, ...), which did not stop the search. */
  warnings: string[];
}

/** Where runRipgrep's results go as they arrive, and what may stop it before its end. */
export interface RipgrepSink {
  /** Each file once all its lines are in (rg writes one file's lines together), in rg's order. */
  onFile(file: RgFile): void;
  /** Aborted: rg is stopped and the search answers what it reported so far (a deadline, a full answer). */
  until?: AbortSignal;
}

/** The flags that decide what matches: shared by the search and the pass that finds a match inside a long line. */
export function patternArgs(o: Pick<SearchOptions, "caseSensitive" | "fixedStrings">): string[] {
  const args = ["--no-config", "--engine=auto", "--color=never"];
  if (o.caseSensitive === undefined) args.push("--smart-case");
  else args.push(o.caseSensitive ? "--case-sensitive" : "--ignore-case");
  if (o.fixedStrings) args.push("--fixed-strings");
  return args;
}

/**
 * The rg command line: an argument array, the pattern after `-e` so a leading dash is a pattern, paths after `--`.
 * `--no-config`: a ripgreprc must not change the output this parses (child-env.ts also drops RIPGREP_CONFIG_PATH). No `--column`: to print it rg collects every
 * match of a line first, 290 MB for a 12 MB line of `a`; where a long line's match is, findMatchStart asks separately.
 */
export function ripgrepArgs(o: SearchOptions): string[] {
  const args = [...patternArgs(o), ...ignoreArgs(o), "--no-heading", "--with-filename", "--null", "--line-number", "--byte-offset"];
  args.push(`--max-columns=${RG_PREVIEW_BYTES}`, "--max-columns-preview");
  if (o.hidden) args.push("--hidden");
  if (o.context > 0) args.push(`--context=${o.context}`);
  for (const g of o.glob ?? []) args.push(`--glob=${g}`);
  args.push(`--glob=${TEMP_FILE_GLOB}`);
  args.push("--glob=!.git"); // last, so it wins: .git/ is the git tools' business even with hidden:true
  args.push("-e", o.pattern, "--", o.rel === "" ? "./" : o.rel);
  return args;
}

/**
 * Runs rg in `cwd`, reading its output as it arrives, every line bounded, and hands each file over as soon as its lines
 * are in; rg is killed as soon as one match more than `maxMatches` shows there is more (so `capped` is exact), when
 * `sink.until` aborts (the answer is what came before), or when `signal` aborts (the call is rejected).
 */
export async function runRipgrep(
  processes: Supervisor,
  cwd: string,
  o: SearchOptions,
  maxMatches: number,
  signal: AbortSignal,
  sink: RipgrepSink,
): Promise<RipgrepOutcome> {
  let managed: ManagedChild;
  try {
    // rg starts no children: no process group of its own (see ProcessSpec.group).
    managed = await processes.spawn({ cmd: rgPath, args: ripgrepArgs(o), cwd, group: false, label: "rg" }, { signal, timeoutMs: RG_TIMEOUT_MS });
  } catch (e) {
    if (signal.aborted) throw signal.reason;
    throw new ToolError("NOT_AVAILABLE", `search cannot run ripgrep (${rgPath}): ${(e as Error).message}. Reinstall @vscode/ripgrep.`);
  }
  const { child } = managed;
  return new Promise((resolve, reject) => {
    let current: RgFile | undefined;
    let total = 0;
    let capped = false;
    let stoppedEarly = false;
    let stderr = "";
    const done = () => capped || stoppedEarly;
    /** What rg wrote after this is not needed, and unread data would hold "close" back. */
    const stop = () => {
      managed.stop();
      child.stdout.destroy();
    };
    const handOver = (file: RgFile | undefined) => {
      if (file?.lines.some((l) => l.match)) sink.onFile(file);
    };
    const stopEarly = () => {
      if (done()) return;
      stoppedEarly = true;
      stop();
      // rg writes a file's lines together: what came of the last one is likely all of it, and all of it is true
      handOver(current);
      current = undefined;
    };
    signal.addEventListener("abort", stop, { once: true });
    sink.until?.addEventListener("abort", stopEarly, { once: true });
    if (signal.aborted) stop();
    else if (sink.until?.aborted) stopEarly();

    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d: string) => {
      if (stderr.length < MAX_STDERR_CHARS) stderr += d;
    });
    const splitter = new LineSplitter((line, overlong) => {
      if (done() || overlong) return;
      const record = parseRecord(line);
      if (!record) return;
      if (record.match && total === maxMatches) {
        capped = true;
        stop();
        if (current) handOver(trimAfterCap([current], o.context)[0]);
        current = undefined;
        return;
      }
      if (record.match) total++;
      if (!current?.pathBytes.equals(record.pathBytes)) {
        handOver(current);
        current = { pathBytes: Buffer.from(record.pathBytes), lines: [] };
      }
      const whole = !record.cut && record.head.length <= HEAD_KEPT_BYTES;
      const head = Buffer.from(record.head.subarray(0, HEAD_KEPT_BYTES));
      current.lines.push({ line: record.line, offset: record.offset, match: record.match, head, whole });
    });
    child.stdout.on("data", (d: Buffer) => splitter.push(d));

    child.on("close", (code) => {
      signal.removeEventListener("abort", stop);
      sink.until?.removeEventListener("abort", stopEarly);
      if (signal.aborted) return reject(signal.reason);
      if (!done()) {
        splitter.end();
        handOver(current);
      }
      if (code === 2 && total === 0 && !stoppedEarly) {
        const error = fatalError(stderr);
        if (error) return reject(error);
      }
      resolve({ total, capped, stoppedEarly, warnings: warningsOf(stderr) });
    });
  });
}

/**
 * DEFAULT_IGNORES as a gitignore file rg can read with `--ignore-file` (the same semantics as the VFS's: lowest
 * priority, so a .gitignore can take a folder back), in a private temp folder (mkdtemp makes it 0700); `remove` takes it
 * away (also done at exit). Not through stdin: node gives a child a socket there, which /dev/stdin cannot open.
 * Null when no temp folder can be written: the search then runs without the defaults rather than not at all.
 */
export function writeDefaultIgnoreFile(): { file: string; remove: () => void } | null {
  try {
    const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-rg-"));
    const file = path.join(dir, "default-ignores");
    const remove = () => {
      process.off("exit", remove);
      rmSync(dir, { recursive: true, force: true });
    };
    process.once("exit", remove);
    writeFileSync(file, `${DEFAULT_IGNORES.join("\n")}\n`);
    return { file, remove };
  } catch {
    return null;
  }
}

/** Drops what follows the last kept match once the match cap stopped rg: its after-context stays, the next match's before-context goes. */
export function trimAfterCap<F extends { lines: { line: number; match: boolean }[] }>(files: F[], context: number): F[] {
  const last = files[files.length - 1];
  if (last) {
    let lastMatch = -1;
    for (const l of last.lines) if (l.match) lastMatch = l.line;
    last.lines = last.lines.filter((l) => l.line <= lastMatch + context);
  }
  return files.filter((f) => f.lines.some((l) => l.match));
}

/** Errors that mean the request itself is wrong, worded for the field to fix. */
function fatalError(stderr: string): ToolError | undefined {
  const text = stderr.replace(/^rg: /gm, "").trim();
  if (/regex parse error|error parsing regex|could not be compiled|PCRE2/i.test(text)) {
    return new ToolError(
      "INVALID_PARAMS",
      `pattern: not a valid regular expression (${regexProblem(text)}). Fix the pattern, or pass fixed_strings:true to search for the text literally.`,
      { rg_error: text },
    );
  }
  if (/error parsing glob|glob/i.test(text)) {
    return new ToolError("INVALID_PARAMS", `glob: ${text}. Fix the glob (e.g. "*.ts", "src/**", "!**/test/**").`, { rg_error: text });
  }
  return undefined;
}

/**
 * The gist of rg's regex error. With `--engine=auto` it reports both engines' errors (the default engine's, then
 * PCRE2's, which also handles look-around and backreferences); each is reduced to its one line saying what is wrong.
 */
export function regexProblem(text: string): string {
  const [own, pcre] = text.split(/PCRE2 regex engine error:/);
  const ownError = /^error: (.+)$/m.exec(own)?.[1]?.trim();
  const pcreError = pcre ? /PCRE2: (.+)$/m.exec(pcre)?.[1]?.trim() : undefined;
  if (ownError && pcreError) return `${ownError}; with PCRE2: ${pcreError}`;
  if (ownError ?? pcreError) return (ownError ?? pcreError) as string;
  return (
    text
      .split("\n")
      .filter((l) => l.trim() && !/^~+$/.test(l.trim()))
      .slice(-1)[0] ?? text
  );
}

function warningsOf(stderr: string): string[] {
  return stderr
    .split("\n")
    .map((l) => l.replace(/^rg: /, "").trim())
    .filter(Boolean)
    .slice(0, 10);
}
