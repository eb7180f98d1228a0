import { defineTool } from "./tool.js";
import { LSP_TIMEOUT_MS, lspState, openFile, placesResult, positionOf, positionParams } from "./lsp-common.js";

export const lspReferencesTool = defineTool({
  id: "lsp_references",
  description:
    "Every use of the identifier at a place across the project, its declaration included, from the language server " +
    "(TypeScript/JavaScript or Python): exact, unlike a text search (an alias or a same-named other symbol is told apart). " +
    "Each place rendered `path:N|TAG content`. Point at it by line and symbol or column.",
  params: positionParams,
  mutating: false,
  timeoutMs: LSP_TIMEOUT_MS,
  state: lspState,
  async run(params, ctx) {
    const opened = await openFile(ctx, params.path);
    const at = positionOf(params, opened.lines);
    const { hash, places } = await opened.client.references(opened.doc, at, ctx.signal);
    return placesResult("references", opened, at, hash, places);
  },
});
