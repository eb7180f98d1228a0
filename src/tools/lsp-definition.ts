import { placesTool } from "./lsp-common.js";

export const lspDefinitionTool = placesTool(
  "lsp_definition",
  "definition",
  "definition",
  "Where the identifier at a place is defined, from the language server (TypeScript/JavaScript or Python): each place " +
    "rendered `path:N|TAG content`, ready for file_read or file_write. Point at it by line and symbol or column; the answer " +
    "is about the file as it is on disk now.",
);
