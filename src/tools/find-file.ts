import { z } from "zod";
import { ToolError } from "../errors.js";
import { GlobSyntaxError, pathFilter } from "../search/glob.js";
import type { FileIndexView, Workspace } from "../workspace.js";
import { defineTool } from "../dispatch/tool.js";
import { plural } from "../core/text.js";

/** Paths returned unless `limit` says otherwise: a model picks from the first few. */
export const DEFAULT_FIND_LIMIT = 20;
/** A larger answer is a listing, which the glob form with a narrower pattern gives better. */
const MAX_FIND_LIMIT = 1000;
/** Matching is linear in the path for any glob, but its cost per character grows with the pattern: no real glob is longer. */
const MAX_GLOB_CHARS = 1000;

function indexOrFail(ws: Workspace): FileIndexView {
  if (!ws.fileIndex) throw new ToolError("NOT_AVAILABLE", "The file index is not ready (the workspace watcher has not started); retry shortly, or use search.");
  return ws.fileIndex;
}

export const findFileTool = defineTool({
  id: "find_file",
  description:
    "Finds files by name: a fuzzy match of query against every workspace path (gitignored files excluded), best first, one " +
    "path per line. A file whose name contains the query comes first, then path fragments (`auth/login`), then " +
    "abbreviations (`usrsvc` finds src/user/UserService.ts), then names one letter off (a typo: `dispatcehr`, `fiel_write`; " +
    "listed in `approximate` and named in text). `_`, `-`, `.` and spaces are alike (`file_write` finds file-write.ts). " +
    "With glob instead (or as well), the paths matching it, sorted; globs are search's (ripgrep's).",
  params: {
    query: z
      .string()
      .optional()
      .describe("What you remember of the path: a name, part of it, an abbreviation, a fragment like `user/serv`; space-separated terms must all match."),
    path: z.string().optional().describe("Only files under this folder, relative to the root."),
    limit: z.number().int().min(1).max(MAX_FIND_LIMIT).optional().describe(`Most paths to return (default ${DEFAULT_FIND_LIMIT}).`),
    glob: z
      .string()
      .min(1)
      .max(MAX_GLOB_CHARS)
      .optional()
      .describe('Only paths matching this glob, e.g. "*.test.ts" (any folder) or "src/**/*.ts"; "!" excludes: "!**/test/**"; alone, lists them sorted.'),
  },
  mutating: false,
  state: ({ workspace: ws }) => ({ file_index: ws.fileIndex ? `ready, ${plural(ws.fileIndex.paths().length, "path")}` : "not ready" }),
  async run(params, { ws }) {
    const query = params.query?.trim() ?? "";
    if (!query && !params.glob)
      throw new ToolError("INVALID_PARAMS", 'Invalid params: query or glob is required (query: part of a file\'s name or path; glob: a pattern like "*.ts").');
    const limit = params.limit ?? DEFAULT_FIND_LIMIT;
    const view = indexOrFail(ws);

    let under = "";
    if (params.path !== undefined) {
      const target = await ws.paths.resolve(params.path);
      if (!target.exists) throw new ToolError("NOT_FOUND", `${params.path} does not exist; give a folder that does, or omit path.`);
      under = target.rel;
    }
    const inFolder = under === "" ? undefined : (p: string) => p.startsWith(`${under}/`) || p === under;
    const matchesGlob = params.glob ? compiledGlob(params.glob) : undefined;
    const accept = inFolder && matchesGlob ? (p: string) => inFolder(p) && matchesGlob(p) : (inFolder ?? matchesGlob);

    let paths: string[];
    let total: number;
    let approximate: string[] = [];
    if (query) {
      const found = ws.search.fuzzyIndexOf(view).search(query, limit, accept, JSON.stringify([under, params.glob ?? null]));
      paths = found.hits.map((h) => h.path);
      total = found.total;
      approximate = found.approximate;
    } else {
      const all = accept ? view.paths().filter(accept) : [...view.paths()];
      all.sort();
      total = all.length;
      paths = all.slice(0, limit);
    }
    let text = paths.length ? paths.join("\n") : "No matching files.";
    if (approximate.length) text += `\n\n${typoNote(query, paths.length, approximate)}`;
    const result: Record<string, unknown> = { paths, total, truncated: total > paths.length, text };
    if (approximate.length) result.approximate = approximate;
    return result;
  },
});

/** Says which hits are typo matches: all of them (then the query matched nothing exactly), or those it names. */
function typoNote(query: string, shown: number, approximate: string[]): string {
  if (approximate.length < shown) return `(Close to "${query}" but not exact, a typo?: ${approximate.join(", ")}.)`;
  return `(No exact match for "${query}"; ${shown === 1 ? "the path above is" : "the paths above are"} close to it, a typo?)`;
}

/** The glob as a predicate; an invalid one is the caller's to fix, worded as search words rg's. */
function compiledGlob(glob: string): (path: string) => boolean {
  try {
    return pathFilter(glob);
  } catch (e) {
    if (e instanceof GlobSyntaxError)
      throw new ToolError("INVALID_PARAMS", `glob: ${e.message}. Fix the glob (e.g. "*.ts", "src/**/*.test.ts", "*.{ts,tsx}").`);
    throw e;
  }
}
