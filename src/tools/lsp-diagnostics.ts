import { z } from "zod";
import { ToolError } from "../errors.js";
import { DEFAULT_DIAGNOSTICS_WAIT_MS as DEFAULT_WAIT_MS, type DiagnosticsAnswer, type DocRef, type LspClient } from "../lsp/client.js";
import { renderDiagnostics, renderUnknown, wireDiagnostics } from "../lsp/render.js";
import { defineTool } from "../dispatch/tool.js";
import { LSP_TIMEOUT_MS, lspState, openFile, serviceOf } from "./lsp-common.js";

/** A wait longer than this is better spent calling again; it also stays under the call's own timeout. */
const MAX_WAIT_MS = 100_000;

const DESCRIPTION = `Errors and warnings of a source file for its current content, from the language server (TypeScript/JavaScript
or Python), without compiling or running anything. The answer waits for the server's diagnostics of exactly the content
on disk now (its hash is in the answer): status "current" with the list (empty: the file is clean), or status "unknown"
when they did not come within wait_ms (default ${DEFAULT_WAIT_MS / 1000} s) or the file changed again meanwhile: then it
is not known to be clean, call again. Without path: every file the language servers have open, each the same way.`;

export const lspDiagnosticsTool = defineTool({
  id: "lsp_diagnostics",
  description: DESCRIPTION,
  params: {
    path: z.string().optional().describe("A source file (.ts .tsx .js .jsx .mts .cts .mjs .cjs .py .pyi); omit for every file the servers have open."),
    wait_ms: z
      .number()
      .int()
      .min(0)
      .max(MAX_WAIT_MS)
      .optional()
      .describe(`How long to wait for the server's diagnostics of the current content, in ms (default ${DEFAULT_WAIT_MS}); past it, status "unknown".`),
  },
  mutating: false,
  timeoutMs: LSP_TIMEOUT_MS,
  state: lspState,
  async run(params, ctx) {
    const waitMs = params.wait_ms ?? DEFAULT_WAIT_MS;
    if (params.path !== undefined) {
      const { client, doc, lines } = await openFile(ctx, params.path);
      return fileResult(doc, lines, await client.diagnostics(doc, waitMs));
    }
    const lsp = serviceOf(ctx.services);
    const asked: Promise<Record<string, unknown>>[] = [];
    for (const client of lsp.clients()) {
      lsp.refresh(client);
      for (const doc of client.openDocuments()) asked.push(answerFor(client, doc, waitMs));
    }
    const files = (await Promise.all(asked)).sort((a, b) => String(a.path).localeCompare(String(b.path)));
    const text = files.length ? files.map((f) => f.text).join("\n\n") : "No file is open in a language server yet: give path to check one.";
    return { files: files.map(({ text: _t, ...f }) => f), text };
  },
});

/** One open file of many: a server that cannot answer leaves its files unknown, not the whole call failed. */
async function answerFor(client: LspClient, doc: DocRef & { lines: readonly string[] }, waitMs: number): Promise<Record<string, unknown>> {
  const answer = await client.diagnostics(doc, waitMs).catch((e: unknown): DiagnosticsAnswer => {
    if (!(e instanceof ToolError)) throw e;
    return { status: "unknown", hash: doc.hash, reason: e.message };
  });
  return fileResult(doc, doc.lines, answer);
}

function fileResult(doc: DocRef, lines: readonly string[], answer: DiagnosticsAnswer): Record<string, unknown> {
  if (answer.status === "unknown") {
    // null, never []: an empty list would read as clean.
    return {
      path: doc.path,
      hash: answer.hash,
      status: "unknown",
      reason: answer.reason,
      diagnostics: null,
      text: renderUnknown(doc.path, answer.hash, answer.reason),
    };
  }
  const diagnostics = wireDiagnostics(answer.diagnostics, lines);
  return { path: doc.path, hash: answer.hash, status: "current", diagnostics, text: renderDiagnostics(doc.path, answer.hash, diagnostics, lines) };
}
