import { createInterface } from "node:readline";
import { rgPath } from "@vscode/ripgrep";
import { ToolError } from "../errors.js";
import type { ManagedChild, Supervisor } from "../platform/supervisor.js";
import { type SearchFile, toSearchLine, trimAfterCap } from "./render.js";
import { parseRgLine } from "./rg-json.js";

/** A search that runs this long is stopped (the call's own timeout is shorter; this is the process's backstop). */
const RG_TIMEOUT_MS = 60_000;
/** stderr kept from rg: enough for its error messages, bounded against a flood of per-file warnings. */
const MAX_STDERR_CHARS = 4000;

export interface SearchOptions {
  pattern: string;
  /** Root-relative path to search ("" for the root). */
  rel: string;
  glob?: string[];
  caseSensitive?: boolean;
  fixedStrings?: boolean;
  context: number;
  hidden?: boolean;
}

export interface SearchOutcome {
  files: SearchFile[];
  /** Matching lines returned. */
  total: number;
  /** More matches existed than the cap. */
  capped: boolean;
  /** Some line was cut to MAX_SEARCH_LINE_CHARS. */
  linesCut: boolean;
  /** rg's complaints about individual files (unreadable, ...), which did not stop the search. */
  warnings: string[];
}

/** The rg command line: an argument array, the pattern after `-e` so a leading dash is a pattern, paths after `--`. */
export function ripgrepArgs(o: SearchOptions): string[] {
  const args = ["--json", "--no-require-git", "--engine=auto"];
  if (o.caseSensitive === undefined) args.push("--smart-case");
  else args.push(o.caseSensitive ? "--case-sensitive" : "--ignore-case");
  if (o.fixedStrings) args.push("--fixed-strings");
  if (o.hidden) args.push("--hidden");
  if (o.context > 0) args.push(`--context=${o.context}`);
  for (const g of o.glob ?? []) args.push(`--glob=${g}`);
  args.push("--glob=!.git"); // last, so it wins: .git/ is the git tools' business even with hidden:true
  args.push("--glob=!.*.tl-????????????.tmp"); // the file tools' temp files (TEMP_FILE_GLOB, fs/atomic-write.ts), also outside git
  args.push("-e", o.pattern, "--", o.rel === "" ? "./" : o.rel);
  return args;
}

/**
 * Runs rg in `cwd`, streaming its JSON: each line is tagged as it arrives, and rg is killed as soon as one match more
 * than `maxMatches` shows there is more (so `capped` is exact) or when `signal` aborts.
 */
export async function runRipgrep(processes: Supervisor, cwd: string, o: SearchOptions, maxMatches: number, signal: AbortSignal): Promise<SearchOutcome> {
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
    const files: SearchFile[] = [];
    let current: SearchFile | undefined;
    let total = 0;
    let capped = false;
    let linesCut = false;
    let stderr = "";
    let failure: unknown;

    const stop = () => managed.stop();
    signal.addEventListener("abort", stop, { once: true });
    if (signal.aborted) stop();

    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d: string) => {
      if (stderr.length < MAX_STDERR_CHARS) stderr += d;
    });
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on("line", (json) => {
      if (capped || failure) return;
      try {
        const rg = parseRgLine(json);
        if (!rg) return;
        if (rg.match && total === maxMatches) {
          capped = true;
          stop();
          lines.close();
          child.stdout.destroy(); // what rg wrote before it died is not needed, and unread data would hold "close" back
          return;
        }
        if (rg.match) total++;
        const { line, cut } = toSearchLine(rg);
        linesCut ||= cut;
        if (current?.path !== stripped(rg.path)) {
          current = { path: stripped(rg.path), lines: [] };
          files.push(current);
        }
        current.lines.push(line);
      } catch (e) {
        failure = e;
        stop();
      }
    });

    child.on("close", (code) => {
      signal.removeEventListener("abort", stop);
      if (failure) return reject(failure);
      if (signal.aborted) return reject(signal.reason);
      if (code === 2 && total === 0) {
        const error = fatalError(stderr);
        if (error) return reject(error);
      }
      const kept = capped ? trimAfterCap(files, o.context) : files;
      kept.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      resolve({ files: kept, total, capped, linesCut, warnings: warningsOf(stderr) });
    });
  });
}

/** rg names paths as given: the root is searched as `./`, which results do not show. */
function stripped(path: string): string {
  return path.startsWith("./") ? path.slice(2) : path;
}

/** Errors that mean the request itself is wrong, worded for the field to fix. */
function fatalError(stderr: string): ToolError | undefined {
  const text = stderr.replace(/^rg: /gm, "").trim();
  if (/regex parse error|error parsing regex|could not be compiled|PCRE2/i.test(text)) {
    return new ToolError("INVALID_PARAMS", `pattern: not a valid regular expression (${regexProblem(text)}). Fix the pattern, or pass fixed_strings:true to search for the text literally.`, { rg_error: text });
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
  return text.split("\n").filter((l) => l.trim() && !/^~+$/.test(l.trim())).slice(-1)[0] ?? text;
}

function warningsOf(stderr: string): string[] {
  return stderr.split("\n").map((l) => l.replace(/^rg: /, "").trim()).filter(Boolean).slice(0, 10);
}
