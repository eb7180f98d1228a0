/** What the lsp_* tools share: the position params, the disk check before asking, places in the wire and in `text`. */
import { z } from "zod";
import { parseAnchor, resolveAnchor } from "../core/anchors.js";
import { tagOf } from "../core/hash.js";
import { ToolError } from "../errors.js";
import { notFound } from "../fs/read-text.js";
import type { DocRef, LspClient } from "../lsp/client.js";
import type { Place, PositionSpec } from "../lsp/positions.js";
import { type WirePlace, renderPlaces, wirePlace } from "../lsp/render.js";
import type { LspService } from "../lsp/service.js";
import type { ResolvedPath } from "../paths.js";
import type { Services } from "../dispatch/services.js";
import { type ToolContext, defineTool } from "../dispatch/tool.js";

/**
 * One LSP call's upper bound: a cold TypeScript project on a loaded machine took over 10 s to load before its first
 * answer; past this the call is TIMEOUT (the request is cancelled, the server keeps running).
 */
export const LSP_TIMEOUT_MS = 120_000;

export const pathParam = z
  .string()
  .describe("A source file, relative to the workspace root (or absolute inside it): .ts .tsx .js .jsx .mts .cts .mjs .cjs (TypeScript) or .py .pyi (Python).");

/** `{path, line, symbol|column, occurrence?}` (SPEC 10). */
export const positionParams = {
  path: pathParam,
  line: z
    .union([z.number().int().min(1), z.string().min(1)])
    .describe(
      'The line, 1-based: a number, or "N:TAG" as file_read shows it, which also checks that line N still has that tag (TAG_MISMATCH when the file changed).',
    ),
  symbol: z.string().min(1).optional().describe('The identifier on that line to ask about, as written there (e.g. "add"); give this or column.'),
  column: z.number().int().min(1).optional().describe("The 1-based column on that line (counted in characters), instead of symbol."),
  occurrence: z.number().int().min(1).optional().describe("Which occurrence of symbol on the line, from 1 (default 1)."),
};

export interface PositionParams {
  line: number | string;
  symbol?: string;
  column?: number;
  occurrence?: number;
}

/** The daemon's language servers, or LSP_UNAVAILABLE where it runs none. */
export function serviceOf(services: Services): LspService {
  return services.lsp.use();
}

/** What every lsp_* tool's `info` state shows: the sandbox and each language's server. */
export function lspState(services: Services): Record<string, unknown> {
  return services.lsp.state();
}

/** A 1-based line from a number, "N", or an anchor ("N:TAG", or a unique "TAG") checked against the file's lines. */
export function lineOf(line: number | string, lines: readonly string[]): number {
  if (typeof line === "number") return line;
  const s = line.trim();
  if (/^[1-9][0-9]*$/.test(s)) return Number(s);
  return resolveAnchor(parseAnchor(s, "line"), lines.map(tagOf), "line");
}

/** Where the call points, in the file as read; symbol and column are exclusive. */
export function positionOf(params: PositionParams, lines: readonly string[]): PositionSpec {
  if ((params.symbol === undefined) === (params.column === undefined)) {
    throw new ToolError("INVALID_PARAMS", "symbol, column: give exactly one of them (the identifier's text on that line, or its 1-based column).");
  }
  if (params.occurrence !== undefined && params.symbol === undefined) throw new ToolError("INVALID_PARAMS", "occurrence: only with symbol.");
  const line = lineOf(params.line, lines);
  return params.symbol !== undefined ? { line, symbol: params.symbol, occurrence: params.occurrence } : { line, column: params.column };
}

export interface OpenedFile {
  lsp: LspService;
  client: LspClient;
  target: ResolvedPath;
  /** The file as the disk has it now; the answer is about its hash. */
  doc: DocRef;
  lines: string[];
}

/** Resolves the path, picks its server, reads the disk and brings every open document of that server up to it. */
export async function openFile(ctx: ToolContext, input: string): Promise<OpenedFile> {
  const lsp = serviceOf(ctx.services);
  const target = await ctx.ws.paths.resolve(input);
  if (!target.exists) throw notFound(target);
  const client = await lsp.clientFor(target.realRel);
  const doc = await lsp.current(target);
  lsp.refresh(client);
  return { lsp, client, target, doc, lines: doc.lines };
}

/** A place in a file the server named, with the tag of its line (as the server saw it, or the disk has it). */
export function placesOf(client: LspClient, places: readonly Place[]): WirePlace[] {
  return places.map((p) => wirePlace(p, client.lines(p.path)));
}

/** `where` for headers: `path:N` plus the symbol or column asked about. */
export function whereText(path: string, at: PositionSpec): string {
  return `${path}:${at.line} ${at.symbol !== undefined ? JSON.stringify(at.symbol) : `col ${at.column}`}`;
}

/** The result of definition, references and implementation. */
export function placesResult(what: string, opened: OpenedFile, at: PositionSpec, hash: string, places: readonly Place[]): Record<string, unknown> {
  const n = places.length;
  const header = `${what} of ${whereText(opened.doc.path, at)} · hash ${hash} · ${n} place${n === 1 ? "" : "s"}`;
  return {
    path: opened.doc.path,
    hash,
    places: placesOf(opened.client, places),
    text: renderPlaces(header, places, (p) => opened.client.lines(p), `No ${what} found there.`),
  };
}

/**
 * A read-only tool that asks about one place (lsp_hover, lsp_definition, ...): the file opened as the disk has it now,
 * the place resolved in it, then `answer`.
 */
export function positionTool(
  id: string,
  description: string,
  answer: (opened: OpenedFile, at: PositionSpec, ctx: ToolContext) => Promise<Record<string, unknown>>,
) {
  return defineTool({
    id,
    description,
    params: positionParams,
    mutating: false,
    timeoutMs: LSP_TIMEOUT_MS,
    state: lspState,
    async run(params, ctx) {
      const opened = await openFile(ctx, params.path);
      return answer(opened, positionOf(params, opened.lines), ctx);
    },
  });
}

/** lsp_definition, lsp_references and lsp_implementation: a place asked about, the places the server answers. */
export function placesTool(id: string, what: string, ask: "definition" | "references" | "implementation", description: string) {
  return positionTool(id, description, async (opened, at, ctx) => {
    const { hash, places } = await opened.client[ask](opened.doc, at, ctx.signal);
    return placesResult(what, opened, at, hash, places);
  });
}
