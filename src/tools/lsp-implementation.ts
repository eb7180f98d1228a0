import { placesTool } from "./lsp-common.js";

export const lspImplementationTool = placesTool(
  "lsp_implementation",
  "implementations",
  "implementation",
  "The implementations of an interface, abstract class or method at a place (the classes that implement it, the methods " +
    "that override it), from the TypeScript language server; pyright answers LSP_UNAVAILABLE (use lsp_references). " +
    "Each place rendered `path:N|TAG content`. Point at it by line and symbol or column.",
);
