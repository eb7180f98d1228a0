import { rgPath } from "@vscode/ripgrep";
import type { Supervisor } from "../platform/supervisor.js";
import { type SearchOptions, patternArgs } from "./ripgrep.js";

/**
 * Where the first match of a long line is, so its shown window can be centred on it. rg's `--column` would say, but to
 * print it rg collects every match of the line first (290 MB and 2 s for a 12 MB line of `a`). Instead the line is cut
 * into overlapping chunks, one per input line, and rg reads them with `--max-count=1`: it stops at the first chunk that
 * matches, and holds one chunk's matches at most. A match longer than the overlap, or an anchor (`^`, `$`, `\b`) at a
 * chunk's edge, can put the window a little off: it only decides what part of the line is shown.
 */

/** Bytes per chunk, and how much consecutive chunks overlap. */
const CHUNK_BYTES = 4096;
const OVERLAP_BYTES = 256;
/** How far into a line the first match is looked for; beyond it the line is shown from its start. */
export const MATCH_SCAN_BYTES = 1024 * 1024;
/** A short-lived process per long line; a minified bundle is one line, so few searches come near this. */
export const MAX_LOCATED_LINES = 16;
/** Each lookup reads at most MATCH_SCAN_BYTES from memory: this only stops a stuck process. */
const LOCATE_TIMEOUT_MS = 10_000;

/** The byte offset of the first match in `line` (content without terminator), or -1 when none is found. */
export async function findMatchStart(
  processes: Supervisor,
  cwd: string,
  o: Pick<SearchOptions, "pattern" | "caseSensitive" | "fixedStrings">,
  line: Buffer,
  signal: AbortSignal,
): Promise<number> {
  const step = CHUNK_BYTES - OVERLAP_BYTES;
  const scan = Math.min(line.length, MATCH_SCAN_BYTES);
  const parts: Buffer[] = [];
  for (let start = 0; start < scan; start += step) {
    parts.push(line.subarray(start, Math.min(line.length, start + CHUNK_BYTES)), NEWLINE);
    if (start + CHUNK_BYTES >= line.length) break;
  }
  const args = [...patternArgs(o), "--line-number", "--column", "--max-columns=1", "--max-count=1", "-e", o.pattern, "-"];
  const r = await processes.run(
    { cmd: rgPath, args, cwd, group: false, label: "rg (match position)" },
    { input: Buffer.concat(parts), maxBytes: 4096, signal, timeoutMs: LOCATE_TIMEOUT_MS },
  );
  const found = /^(\d+):(\d+):/.exec(r.stdout);
  if (!found) return -1;
  return (Number(found[1]) - 1) * step + Number(found[2]) - 1;
}

const NEWLINE = Buffer.from("\n");
