import type { Exa, ExaError } from "exa-js";
import { z } from "zod";
import { ToolError } from "../errors.js";
import { once } from "../core/once.js";

/**
 * Web search and page text through Exa's API with exa-js (SPEC 12): POST /search and POST /contents, the key in
 * `x-api-key`. exa-js sends only that, `Content-Type` and `User-Agent: exa-node 2.23.0`: no telemetry of its own.
 */

export const DEFAULT_EXA_BASE_URL = "https://api.exa.ai";
/** SPEC 12: Exa unreachable is UNREACHABLE within 10 s, whether it refuses, fails or never answers. */
export const EXA_TIMEOUT_MS = 10_000;
/** A search result's snippet, cut to this: a few sentences a model can judge the page by. */
export const SNIPPET_CHARS = 500;
/** Page text web_fetch returns, at most (about 10k tokens): the main text of an article fits, a whole site does not. */
export const WEB_FETCH_MAX_CHARS = 40_000;

export interface ExaSettings {
  /** Undefined or empty: not configured. */
  apiKey: string | undefined;
  baseUrl: string;
  timeoutMs: number;
}

/** `EXA_API_KEY` and `EXA_BASE_URL` from the daemon's environment. */
export function exaSettingsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): ExaSettings {
  return { apiKey: env.EXA_API_KEY || undefined, baseUrl: env.EXA_BASE_URL || DEFAULT_EXA_BASE_URL, timeoutMs: EXA_TIMEOUT_MS };
}

/** What `info` says of the web tools. */
export function exaState(s: ExaSettings): Record<string, unknown> {
  return s.apiKey
    ? { available: true, configured: true, base_url: s.baseUrl }
    : { available: false, configured: false, base_url: s.baseUrl, reason: "EXA_API_KEY is not set; set it in the daemon's environment to use web search" };
}

const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "must be an ISO 8601 date, e.g. 2025-01-31");

export const webSearchParams = {
  query: z.string().min(1).describe("What to search the web for, as a question or a description of the page wanted."),
  num_results: z.number().int().min(1).max(100).optional().describe("How many results (default 10)."),
  include_domains: z.array(z.string().min(1)).optional().describe('Only results from these domains, e.g. ["github.com"].'),
  exclude_domains: z.array(z.string().min(1)).optional().describe("No results from these domains."),
  start_published_date: isoDate.optional().describe("Only pages published on or after this date (ISO 8601)."),
  type: z.enum(["auto", "neural", "keyword", "fast"]).optional().describe("Exa's search type (default auto)."),
};

export const webFetchParams = {
  url: z
    .string()
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "must be an http:// or https:// URL")
    .describe("The page to read."),
};

type SearchParams = z.output<z.ZodObject<typeof webSearchParams>>;
type FetchParams = z.output<z.ZodObject<typeof webFetchParams>>;

export interface WebSearchHit {
  title: string;
  url: string;
  published_date: string | null;
  snippet: string;
}

export async function webSearch(p: SearchParams, s: ExaSettings, signal?: AbortSignal): Promise<{ results: WebSearchHit[]; text: string }> {
  const exa = await client(s);
  const response = await bounded(
    exa.search(p.query, {
      ...(p.num_results !== undefined ? { numResults: p.num_results } : {}),
      ...(p.include_domains ? { includeDomains: p.include_domains } : {}),
      ...(p.exclude_domains ? { excludeDomains: p.exclude_domains } : {}),
      ...(p.start_published_date ? { startPublishedDate: p.start_published_date } : {}),
      ...(p.type ? { type: p.type } : {}),
      contents: { highlights: true },
    }),
    s,
    signal,
  );
  const results = (response.results ?? []).map((r): WebSearchHit => {
    const rec = r as typeof r & { highlights?: string[]; text?: string; summary?: string };
    const snippet = rec.highlights?.length ? rec.highlights.join(" … ") : (rec.summary ?? rec.text ?? "");
    return { title: r.title ?? r.url, url: r.url, published_date: r.publishedDate ?? null, snippet: cut(oneLine(snippet), SNIPPET_CHARS) };
  });
  return { results, text: renderHits(p.query, results) };
}

export async function webFetch(
  p: FetchParams,
  s: ExaSettings,
  signal?: AbortSignal,
): Promise<{ url: string; title: string | null; published_date: string | null; text: string; truncated: boolean }> {
  const exa = await client(s);
  const response = await bounded(exa.getContents([p.url], { text: { maxCharacters: WEB_FETCH_MAX_CHARS } }), s, signal);
  const page = response.results?.[0] as (typeof response.results)[number] & { text?: string };
  if (!page) {
    const status = (response.statuses?.find((x) => x.id === p.url) ?? response.statuses?.[0]) as { status: string; error?: { tag?: string } } | undefined;
    const why = status ? `${status.status}${status.error?.tag ? ` (${status.error.tag})` : ""}` : "no content";
    throw new ToolError("TOOL_ERROR", `Exa could not read ${p.url}: ${why}. Check the URL, or search for the page with web_search.`, { url: p.url });
  }
  const text = page.text ?? "";
  return { url: page.url, title: page.title ?? null, published_date: page.publishedDate ?? null, text, truncated: text.length >= WEB_FETCH_MAX_CHARS };
}

interface ExaModule {
  Exa: typeof Exa;
  ExaError: typeof ExaError;
}
/** exa-js takes about 180 ms to load: loaded on the first web call, not at the daemon's start. */
const loadExa = once((): Promise<ExaModule> => import("exa-js"));

async function client(s: ExaSettings): Promise<Exa> {
  if (!s.apiKey) throw new ToolError("NOT_CONFIGURED", "Web search is not configured: set EXA_API_KEY in the daemon's environment (an Exa API key).");
  const { Exa } = await loadExa();
  return new Exa(s.apiKey, s.baseUrl);
}

/**
 * The call within `timeoutMs`, or UNREACHABLE; the call's own signal answers CANCELLED. exa-js 2.23 takes no
 * AbortSignal, so the request itself is left to end on its own (the server answers or closes, or Node's fetch gives
 * up on headers after 300 s); its late outcome is dropped.
 */
async function bounded<T>(work: Promise<T>, s: ExaSettings, signal?: AbortSignal): Promise<T> {
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const limits = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ToolError("UNREACHABLE", `Exa (${s.baseUrl}) gave no answer within ${s.timeoutMs} ms; try again later.`)), s.timeoutMs);
    onAbort = () => reject(new ToolError("CANCELLED", "The web request was cancelled."));
    if (signal?.aborted) onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work, limits]);
  } catch (e) {
    throw toToolError(e, s, (await loadExa()).ExaError);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

function toToolError(e: unknown, s: ExaSettings, ExaErrorClass: typeof ExaError): unknown {
  if (e instanceof ToolError) return e;
  if (e instanceof ExaErrorClass) {
    const status = e.statusCode;
    if (status === 401 || status === 403) {
      return new ToolError("NOT_CONFIGURED", `Exa refused the API key (HTTP ${status}: ${e.message}); check EXA_API_KEY.`, { http_status: status });
    }
    if (status >= 500)
      return new ToolError("UNREACHABLE", `Exa (${s.baseUrl}) failed with HTTP ${status}: ${e.message}; try again later.`, { http_status: status });
    return new ToolError("TOOL_ERROR", `Exa refused the request (HTTP ${status}): ${e.message}`, { http_status: status });
  }
  // fetch's network failures: refused, reset, DNS.
  if (e instanceof TypeError) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return new ToolError(
      "UNREACHABLE",
      `Exa (${s.baseUrl}) cannot be reached: ${cause?.code ?? cause?.message ?? e.message}; check the network or EXA_BASE_URL.`,
    );
  }
  return e;
}

function renderHits(query: string, hits: WebSearchHit[]): string {
  if (hits.length === 0) return `No web results for "${query}".`;
  return hits
    .map((h, i) => {
      const date = h.published_date ? ` (${h.published_date.slice(0, 10)})` : "";
      return `${i + 1}. ${h.title}${date}\n   ${h.url}${h.snippet ? `\n   ${h.snippet}` : ""}`;
    })
    .join("\n");
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

function cut(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
