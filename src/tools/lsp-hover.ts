import { positionTool, whereText } from "./lsp-common.js";

export const lspHoverTool = positionTool(
  "lsp_hover",
  "The type and documentation of the identifier at a place, from the language server (TypeScript/JavaScript or Python): " +
    "a quick type check without compiling. Point at it by line and symbol (the identifier's text on that line) or column. " +
    "The answer is about the file as it is on disk now, and names its hash.",
  async (opened, at, ctx) => {
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
);
