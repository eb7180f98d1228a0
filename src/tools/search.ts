import { type Stats, constants, existsSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { rgPath } from "@vscode/ripgrep";
import { z } from "zod";
import { BINARY_SNIFF_BYTES, isBinary } from "../core/text.js";
import { ToolError } from "../errors.js";
import { MAX_LOCATED_LINES, findMatchStart } from "../search/match-start.js";
import { MatchCollector } from "../search/collect.js";
import type { MatchSource } from "../search/read-matches.js";
import { MAX_SEARCH_LINE_CHARS, renderSearch } from "../search/render.js";
import { shownPath } from "../search/rg-output.js";
import { type RgFile, type SearchOptions, runRipgrep } from "../search/ripgrep.js";
import { gitIgnored, plainIgnored } from "../vfs/listing.js";
import type { Workspace } from "../workspace.js";
import { defineTool } from "../dispatch/tool.js";

/** Matching lines returned unless max_results says otherwise: enough to see a pattern's spread, small for a model's context. */
export const DEFAULT_MAX_RESULTS = 100;
/** A hard ceiling on max_results: beyond it the answer is cut by the dispatcher's text cap anyway. */
const MAX_MAX_RESULTS = 2000;
/** Context lines per side; more is a file_read. */
const MAX_CONTEXT = 20;
/**
 * A search answers what it found by this long (rg stopped, `timed_out` and a note), unless timeout_ms says otherwise:
 * a cold million-file tree takes rg alone about 18 s here. Under SEARCH_TIMEOUT_MS, so the answer beats the TIMEOUT.
 */
const DEFAULT_DEADLINE_MS = 25_000;
const MIN_DEADLINE_MS = 100;
/** After the deadline, the files rg had reported are still read for this long at most (each read is bounded). */
const READ_GRACE_MS = 1_000;
/** The dispatcher's bound: reached only when the answer cannot be made after the deadline (a stuck file read). */
const SEARCH_TIMEOUT_MS = 30_000;
/**
 * Characters of `text` the lines and file headers of one answer may take (each line charged with its `N|TAG ` prefix):
 * under the dispatcher's 100,000-character cut of `text`, so the notes at its end are never cut off, and a bound on
 * `matches` too (2,000 matches with 20 lines of context each could be 40 MB of JSON). Past it the rest is left out.
 */
const MAX_SHOWN_CHARS = 90_000;
/**
 * Bytes of matching files read (once each, for hash and tags) in one search: 2,000 matches in 2,000 files of 10 MiB
 * would read 20 GB. Past this the files that follow are left out, as past MAX_SHOWN_CHARS.
 */
const MAX_READ_BYTES = 256 * 1024 * 1024;
/** Files named in notes (left out because they changed, ...); the rest are counted. */
const MAX_NOTED_FILES = 5;

export const searchTool = defineTool({
  id: "search",
  description:
    "Searches file contents with ripgrep and returns matching lines grouped by file, each rendered `N|TAG content` with its " +
    "real line tag under a header `file PATH · hash HASH`: edit straight from the result with file_write {path, hash: HASH, " +
    "edits} anchored on `N:TAG`, no file_read needed (hash and tags are of the same read of the file). " +
    "Respects .gitignore (outside a git repository, skips node_modules/, dist/ and the like, as find_file does); skips binary " +
    "files, and hidden files unless hidden:true; smart case (case-insensitive unless the pattern has an upper-case letter) " +
    "unless case_sensitive is given. At most max_results matching lines (default 100); long lines are cut around the match; " +
    "a line that is not UTF-8 says so. truncated:true says a cap was hit.",
  params: {
    pattern: z
      .string()
      .refine((p) => p.trim() !== "", { message: "must not be blank; give the text or regular expression to search for" })
      .refine((p) => !p.includes("\n"), { message: "has a line break, but search matches one line at a time; search for one line of it" })
      .describe("A regular expression (Rust regex syntax; look-around and backreferences also work), or the literal text with fixed_strings."),
    path: z.string().optional().describe("A folder or file to search, relative to the root (default: the whole workspace)."),
    glob: z.array(z.string().min(1)).optional().describe('Only files matching these globs, e.g. ["*.ts"], ["src/**"]; "!" excludes: ["!**/test/**"].'),
    case_sensitive: z.boolean().optional().describe("true: exact case; false: ignore case; omitted: smart case."),
    fixed_strings: z.boolean().optional().describe("Treat pattern as literal text, not a regular expression."),
    context: z.number().int().min(0).max(MAX_CONTEXT).optional().describe(`Lines of context before and after each match (0-${MAX_CONTEXT}).`),
    max_results: z.number().int().min(1).max(MAX_MAX_RESULTS).optional().describe(`Most matching lines to return (default ${DEFAULT_MAX_RESULTS}).`),
    hidden: z.boolean().optional().describe("Also search hidden files and folders (names starting with a dot); .git/ never."),
    timeout_ms: z
      .number()
      .int()
      .min(MIN_DEADLINE_MS)
      .max(DEFAULT_DEADLINE_MS)
      .optional()
      .describe(`Answer by then with the matches found so far, timed_out:true (default ${DEFAULT_DEADLINE_MS}).`),
  },
  mutating: false,
  // The answer depends on the params and the files only: identical searches at once share one rg.
  shareable: true,
  timeoutMs: SEARCH_TIMEOUT_MS,
  state: () => ({ ripgrep: existsSync(rgPath) ? rgPath : `missing: ${rgPath}` }),
  async run(params, { ws, signal }) {
    const target = await ws.paths.resolve(params.path ?? "");
    if (!target.exists)
      throw new ToolError("NOT_FOUND", `${params.path} does not exist; search a folder or file that does, or omit path to search everything.`);
    const kind = await stat(target.real).catch(() => undefined);
    if (kind && !kind.isFile() && !kind.isDirectory()) {
      // rg would read a FIFO or a device until the timeout; a walk never opens them (rg skips what is not a file)
      throw new ToolError("NOT_A_FILE", `${target.rel} is ${specialKind(kind)}, not a file or folder; search reads files only: give a file or a folder.`);
    }
    const empty = { matches: [], total: 0, truncated: false };
    if (kind?.isFile() && (await isBinaryFile(target.real))) {
      return { ...empty, text: `No matches: ${target.rel} is a binary file, and search skips binary files.` };
    }
    const maxResults = params.max_results ?? DEFAULT_MAX_RESULTS;
    const git = ws.vfsState().git === true;
    const options: SearchOptions = {
      pattern: params.pattern,
      rel: target.rel,
      glob: params.glob,
      caseSensitive: params.case_sensitive,
      fixedStrings: params.fixed_strings,
      context: params.context ?? 0,
      hidden: params.hidden,
      // One ignore policy with the VFS listing that find_file serves from: its defaults apply where git's rules do not.
      git,
      defaultIgnores: git ? undefined : ws.search.defaultIgnoreFile(),
    };
    const deadlineMs = params.timeout_ms ?? DEFAULT_DEADLINE_MS;
    const deadline = AbortSignal.timeout(deadlineMs);
    const cutoff = AbortSignal.timeout(deadlineMs + READ_GRACE_MS);
    const named = { rel: target.rel, isDir: kind?.isDirectory() === true };
    const filter = params.glob?.length ? (found: RgFile[]) => withoutGlobbedIn(ws, named, found, options, signal) : async (found: RgFile[]) => found;
    const collector = new MatchCollector(
      matchSource(ws, options, signal),
      { chars: MAX_SHOWN_CHARS, readBytes: MAX_READ_BYTES, maxFileBytes: ws.maxFileBytes },
      filter,
      cutoff,
      signal,
    );
    const until = AbortSignal.any([deadline, collector.full.signal]);
    const outcome = await runRipgrep(ws.processes, ws.root, options, maxResults, signal, { onFile: (f) => collector.add(f), until });
    const { files, leftOut, linesCut, sizeCapped, unread } = await collector.done();
    const timedOut = (outcome.stoppedEarly && !collector.full.signal.aborted) || unread > 0;
    let total = 0;
    for (const f of files) for (const l of f.lines) if (l.match) total++;

    const notes: string[] = [];
    if (outcome.capped) {
      notes.push(
        `Showing the first ${maxResults} matching line${maxResults === 1 ? "" : "s"}; there are more. Narrow the search with path, glob or a more specific pattern, or raise max_results.`,
      );
    }
    if (timedOut) {
      const unreadNote = unread ? ` (${unread} more matching file${unread === 1 ? "" : "s"} were found but not read in time)` : "";
      notes.push(
        `The search stopped at its ${deadlineMs} ms deadline; these are the matches found by then${unreadNote}. Narrow it with path or glob, or search again (the files are cached now).`,
      );
    }
    if (sizeCapped)
      notes.push(
        `The answer's size cap (${MAX_SHOWN_CHARS} characters of text, or ${MAX_READ_BYTES} bytes of files read) was reached; the lines after these are left out. Narrow the search with path, glob or a more specific pattern.`,
      );
    if (linesCut) {
      notes.push(
        `Lines longer than ${MAX_SEARCH_LINE_CHARS} characters were cut around their first match; read them with file_read, or exclude minified files with glob (e.g. "!*.min.js").`,
      );
    }
    notes.push(...leftOut.slice(0, MAX_NOTED_FILES));
    if (leftOut.length > MAX_NOTED_FILES) notes.push(`${leftOut.length - MAX_NOTED_FILES} more files were left out for the same reasons.`);
    const result: Record<string, unknown> = {
      matches: files,
      total,
      truncated: outcome.capped || sizeCapped || linesCut || timedOut,
      ...(timedOut ? { timed_out: true } : {}),
      text: renderSearch(files, total, notes, ws.maxFileBytes),
    };
    if (outcome.warnings.length) result.warnings = outcome.warnings;
    return result;
  },
});

/** Where the hits are read from; a long line's match is located by a small rg run, MAX_LOCATED_LINES at most. */
function matchSource(ws: Workspace, options: SearchOptions, signal: AbortSignal): Omit<MatchSource, "budget"> {
  let located = 0;
  return {
    root: ws.root,
    maxFileBytes: ws.maxFileBytes,
    isInside: (abs) => ws.paths.isInside(abs),
    matchStart: (line) => (located++ < MAX_LOCATED_LINES ? findMatchStart(ws.processes, ws.root, options, line, signal) : Promise.resolve(-1)),
  };
}

/**
 * Without the files rg took in only because a glob matched them: rg's -g overrides its other filters (`*.log` takes in
 * a gitignored debug.log, `.*` hidden files). Ignored files (as find_file never shows them) and hidden ones without
 * hidden:true stay out, as without a glob. Below a path named explicitly rg's rules apply as ever: an ignored folder
 * named is searched. What is ignored is judged as the disk is now (the VFS may be a window behind a .gitignore just
 * written): by git in a repository, else by the VFS's rules read afresh.
 */
async function withoutGlobbedIn(
  ws: Workspace,
  named: { rel: string; isDir: boolean },
  files: RgFile[],
  o: SearchOptions,
  signal: AbortSignal,
): Promise<RgFile[]> {
  const rels = files.map((f) => shownPath(f.pathBytes));
  const below = (rel: string) => (named.rel === "" ? rel : rel.slice(named.rel.length + 1));
  const shown = (rel: string) =>
    o.hidden === true ||
    !below(rel)
      .split("/")
      .some((part) => part.startsWith("."));
  const candidates = rels.filter(shown);
  const judged = candidates.length > 0 && !(named.rel !== "" && ws.isIgnored(named.rel, named.isDir));
  const ignored = judged ? await ignoredNow(ws, o.git, candidates, signal) : new Set<string>();
  return files.filter((_, i) => shown(rels[i]) && !ignored.has(rels[i]));
}

async function ignoredNow(ws: Workspace, git: boolean, rels: string[], signal: AbortSignal): Promise<Set<string>> {
  if (!git) return plainIgnored(ws.root, rels);
  return (await gitIgnored(ws.processes, ws.root, rels, signal)) ?? new Set(rels.filter((rel) => ws.isIgnored(rel))); // git could not say: the VFS's word
}

function specialKind(s: Stats): string {
  if (s.isFIFO()) return "a FIFO (named pipe)";
  if (s.isCharacterDevice()) return "a character device";
  if (s.isBlockDevice()) return "a block device";
  if (s.isSocket()) return "a socket";
  return "not a regular file";
}

/** SPEC 4's rule (a NUL in the first 8 KiB), for a file named explicitly: rg would search it, a directory walk would not. */
async function isBinaryFile(real: string): Promise<boolean> {
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => undefined); // never blocks on a swapped-in FIFO
  if (!handle) return false;
  try {
    const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0);
    return isBinary(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}
