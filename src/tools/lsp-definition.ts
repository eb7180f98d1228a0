import { defineTool } from "./tool.js";
import { LSP_TIMEOUT_MS, lspState, openFile, placesResult, positionOf, positionParams } from "./lsp-common.js";

export const lspDefinitionTool = defineTool({
  id: "lsp_definition",
  description:
    "Where the identifier at a place is defined, from the language server (TypeScript/JavaScript or Python): each place " +
    "rendered `path:N|TAG content`, ready for file_read or file_write. Point at it by line and symbol or column; the answer " +
    "is about the file as it is on disk now.",
  params: positionParams,
  mutating: false,
  timeoutMs: LSP_TIMEOUT_MS,
  state: lspState,
  async run(params, ctx) {
    const opened = await openFile(ctx, params.path);
    const at = positionOf(params, opened.lines);
    const { hash, places } = await opened.client.definition(opened.doc, at, ctx.signal);
    return placesResult("definition", opened, at, hash, places);
  },
});
