import { z } from "zod";
import { ToolError } from "../errors.js";
import type { SymbolItem } from "../lsp/convert.js";
import type { LspService } from "../lsp/service.js";
import { type Language, languageOf } from "../lsp/servers.js";
import { renderSymbols, wirePlace } from "../lsp/render.js";
import type { LspClient } from "../lsp/client.js";
import type { Workspace } from "../workspace.js";
import { defineTool } from "../dispatch/tool.js";
import { LSP_TIMEOUT_MS, lspState, openFile, pathParam, serviceOf } from "./lsp-common.js";

/** Workspace symbols returned at most: a short query matches thousands in a large project, and a model reads them all. */
const MAX_WORKSPACE_SYMBOLS = 200;

export const lspSymbolsTool = defineTool({
  id: "lsp_symbols",
  description:
    "Symbols from the language servers (TypeScript/JavaScript and Python). With path: the file's outline (classes, functions, " +
    "methods, variables, nested by depth). With query: the project's symbols whose name matches it (fuzzy, as an editor's " +
    `"go to symbol"), at most ${MAX_WORKSPACE_SYMBOLS}. Each symbol with its place, rendered \`path:N|TAG content\`. Give exactly one of path and query.`,
  params: {
    path: pathParam.optional().describe("A source file (.ts .tsx .js .jsx .mts .cts .mjs .cjs .py .pyi) to outline, instead of query."),
    query: z.string().min(1).optional().describe("A symbol name or part of one, to search the whole project for."),
  },
  mutating: false,
  timeoutMs: LSP_TIMEOUT_MS,
  state: lspState,
  async run(params, ctx) {
    if ((params.path === undefined) === (params.query === undefined)) {
      throw new ToolError("INVALID_PARAMS", "path, query: give exactly one of them (path for a file's outline, query to search the project).");
    }
    if (params.path !== undefined) {
      const opened = await openFile(ctx, params.path);
      const { hash, symbols } = await opened.client.documentSymbols(opened.doc, ctx.signal);
      const header = `symbols of ${opened.doc.path} · hash ${hash} · ${symbols.length}`;
      return {
        path: opened.doc.path,
        hash,
        symbols: wire(opened.client, symbols),
        text: renderSymbols(header, symbols, (p) => opened.client.lines(p), "No symbols in this file."),
      };
    }
    const query = params.query!;
    const lsp = serviceOf(ctx.services);
    const found: { client: LspClient; symbol: SymbolItem }[] = [];
    for (const client of await clientsForQuery(ctx.ws, lsp)) {
      lsp.refresh(client);
      for (const symbol of await client.workspaceSymbols(query, ctx.signal)) found.push({ client, symbol });
    }
    const shown = found.slice(0, MAX_WORKSPACE_SYMBOLS);
    const more = found.length > shown.length ? ` (showing ${shown.length}; narrow the query)` : "";
    const header = `symbols matching ${JSON.stringify(query)} · ${found.length}${more}`;
    const linesOf = (p: string) => shown.find((f) => f.symbol.place.path === p)?.client.lines(p);
    return {
      query,
      symbols: shown.flatMap((f) => wire(f.client, [f.symbol])),
      truncated: found.length > shown.length,
      text: renderSymbols(
        header,
        shown.map((f) => f.symbol),
        linesOf,
        "No symbol matches.",
      ),
    };
  },
});

function wire(client: LspClient, symbols: readonly SymbolItem[]) {
  return symbols.map((s) => ({
    name: s.name,
    kind: s.kind,
    ...(s.detail ? { detail: s.detail } : {}),
    ...(s.container ? { container: s.container } : {}),
    depth: s.depth,
    ...wirePlace(s.place, client.lines(s.place.path)),
  }));
}

/**
 * A server per language the workspace has files of. tsserver searches the projects of its open files, so a server
 * with none open first opens one (the first such file by path, outside node_modules).
 */
async function clientsForQuery(ws: Workspace, lsp: LspService): Promise<LspClient[]> {
  const firsts = firstFiles(ws.fileIndex?.paths() ?? []);
  const clients: LspClient[] = [];
  for (const language of lsp.installed()) {
    const first = firsts.get(language);
    if (!first) continue;
    const client = await lsp.clientFor(first);
    if (client.openFiles().length === 0) {
      const doc = await lsp.current(await ws.paths.resolve(first));
      await client.documentSymbols(doc);
    }
    clients.push(client);
  }
  if (clients.length === 0)
    throw new ToolError("LSP_UNAVAILABLE", "The workspace has no TypeScript, JavaScript or Python file for a language server to search.");
  return clients;
}

/** Per language, its first file by path outside node_modules: one pass, no sort of a 100,000-file index per query. */
function firstFiles(paths: Iterable<string>): Map<Language, string> {
  const first = new Map<Language, string>();
  for (const p of paths) {
    const language = languageOf(p)?.language;
    if (!language || p.split("/").includes("node_modules")) continue;
    const known = first.get(language);
    if (known === undefined || p < known) first.set(language, p);
  }
  return first;
}
