import { defineTool } from "./tool.js";
import { LSP_TIMEOUT_MS, lspState, openFile, positionOf, positionParams, whereText } from "./lsp-common.js";

export const lspHoverTool = defineTool({
  id: "lsp_hover",
  description:
    "The type and documentation of the identifier at a place, from the language server (TypeScript/JavaScript or Python): " +
    "a quick type check without compiling. Point at it by line and symbol (the identifier's text on that line) or column. " +
    "The answer is about the file as it is on disk now, and names its hash.",
  params: positionParams,
  mutating: false,
  timeoutMs: LSP_TIMEOUT_MS,
  state: lspState,
  async run(params, ctx) {
    const opened = await openFile(ctx, params.path);
    const at = positionOf(params, opened.lines);
    const hover = await opened.client.hover(opened.doc, at, ctx.signal);
    const header = `hover ${whereText(opened.doc.path, at)} · hash ${hover.hash}`;
    return {
      path: opened.doc.path,
      hash: hover.hash,
      line: at.line,
      hover: hover.text,
      ...(hover.place ? { range: hover.place } : {}),
      text: `${header}\n${hover.text || "No type information there (not an identifier, or the server has none for it)."}`,
    };
  },
});
