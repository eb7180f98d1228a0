import { defineTool } from "./tool.js";
import { LSP_TIMEOUT_MS, lspState, openFile, placesResult, positionOf, positionParams } from "./lsp-common.js";

export const lspImplementationTool = defineTool({
  id: "lsp_implementation",
  description:
    "The implementations of an interface, abstract class or method at a place (the classes that implement it, the methods " +
    "that override it), from the TypeScript language server; pyright answers LSP_UNAVAILABLE (use lsp_references). " +
    "Each place rendered `path:N|TAG content`. Point at it by line and symbol or column.",
  params: positionParams,
  mutating: false,
  timeoutMs: LSP_TIMEOUT_MS,
  state: lspState,
  async run(params, ctx) {
    const opened = await openFile(ctx, params.path);
    const at = positionOf(params, opened.lines);
    const { hash, places } = await opened.client.implementation(opened.doc, at, ctx.signal);
    return placesResult("implementations", opened, at, hash, places);
  },
});
