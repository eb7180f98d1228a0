import { existsSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { rgPath } from "@vscode/ripgrep";
import { z } from "zod";
import { BINARY_SNIFF_BYTES, isBinary } from "../core/text.js";
import { ToolError } from "../errors.js";
import { MAX_SEARCH_LINE_CHARS, renderSearch } from "../search/render.js";
import { runRipgrep } from "../search/ripgrep.js";
import { defineTool } from "./tool.js";

/** Matching lines returned unless max_results says otherwise: enough to see a pattern's spread, small for a model's context. */
export const DEFAULT_MAX_RESULTS = 100;
/** A hard ceiling on max_results: beyond it the answer is cut by the dispatcher's text cap anyway. */
const MAX_MAX_RESULTS = 2000;
/** Context lines per side; more is a file_read. */
const MAX_CONTEXT = 20;
/** A search of a large tree takes well under a second; this only stops a runaway (a FIFO, a network mount). */
const SEARCH_TIMEOUT_MS = 30_000;

export const searchTool = defineTool({
  id: "search",
  description:
    "Searches file contents with ripgrep and returns matching lines grouped by file, each rendered `N|TAG content` with its " +
    "real line tag, so you can edit straight from the result. Respects .gitignore; skips binary files, and hidden files unless hidden:true; " +
    "smart case (case-insensitive unless the pattern has an upper-case letter) unless case_sensitive is given. " +
    "At most max_results matching lines (default 100); long lines are cut around the match. truncated:true says a cap was hit.",
  params: {
    pattern: z.string()
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
  },
  mutating: false,
  timeoutMs: SEARCH_TIMEOUT_MS,
  state: () => ({ ripgrep: existsSync(rgPath) ? rgPath : `missing: ${rgPath}` }),
  async run(params, { ws, signal }) {
    const target = await ws.paths.resolve(params.path ?? "");
    if (!target.exists) throw new ToolError("NOT_FOUND", `${params.path} does not exist; search a folder or file that does, or omit path to search everything.`);
    const empty = { matches: [], total: 0, truncated: false };
    if (await isBinaryFile(target.real)) {
      return { ...empty, text: `No matches: ${target.rel} is a binary file, and search skips binary files.` };
    }
    const maxResults = params.max_results ?? DEFAULT_MAX_RESULTS;
    const context = params.context ?? 0;
    const outcome = await runRipgrep(ws.processes, ws.root, {
      pattern: params.pattern,
      rel: target.rel,
      glob: params.glob,
      caseSensitive: params.case_sensitive,
      fixedStrings: params.fixed_strings,
      context,
      hidden: params.hidden,
    }, maxResults, signal);

    const notes: string[] = [];
    if (outcome.capped) {
      notes.push(`Showing the first ${maxResults} matching line${maxResults === 1 ? "" : "s"}; there are more. Narrow the search with path, glob or a more specific pattern, or raise max_results.`);
    }
    if (outcome.linesCut) {
      notes.push(`Lines longer than ${MAX_SEARCH_LINE_CHARS} characters were cut around their first match; read them with file_read, or exclude minified files with glob (e.g. "!*.min.js").`);
    }
    const result: Record<string, unknown> = {
      matches: outcome.files,
      total: outcome.total,
      truncated: outcome.capped || outcome.linesCut,
      text: renderSearch(outcome.files, outcome.total, notes),
    };
    if (outcome.warnings.length) result.warnings = outcome.warnings;
    return result;
  },
});

/** SPEC 4's rule (a NUL in the first 8 KiB), for a file named explicitly: rg would search it, a directory walk would not. */
async function isBinaryFile(real: string): Promise<boolean> {
  // stat first: opening a FIFO would block until someone writes to it
  if (!(await stat(real).catch(() => undefined))?.isFile()) return false;
  const handle = await open(real, "r").catch(() => undefined);
  if (!handle) return false;
  try {
    const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0);
    return isBinary(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}
