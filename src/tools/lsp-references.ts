import { placesTool } from "./lsp-common.js";

export const lspReferencesTool = placesTool(
  "lsp_references",
  "references",
  "references",
  "Every use of the identifier at a place across the project, its declaration included, from the language server " +
    "(TypeScript/JavaScript or Python): exact, unlike a text search (an alias or a same-named other symbol is told apart). " +
    "Each place rendered `path:N|TAG content`. Point at it by line and symbol or column.",
);
