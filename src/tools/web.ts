import type { z } from "zod";
import { defineTool } from "../dispatch/tool.js";
import { EXA_TIMEOUT_MS, WEB_FETCH_MAX_CHARS, type ExaSettings, exaState, webFetch, webFetchParams, webSearch, webSearchParams } from "../web/exa.js";

/** Above Exa's own bound, so the call answers UNREACHABLE with Exa's reason rather than the dispatcher's TIMEOUT. */
const WEB_TOOL_TIMEOUT_MS = EXA_TIMEOUT_MS + 5_000;

/** What both Exa tools share: read-only, open-world, Exa's bound, and the settings read at each call (a key set after start, by a restarted Gateway, is still seen). */
function exaTool<S extends z.ZodRawShape>(def: {
  id: string;
  description: string;
  params: S;
  run: (params: z.output<z.ZodObject<S>>, settings: ExaSettings, signal: AbortSignal) => Promise<unknown>;
}) {
  return defineTool({
    id: def.id,
    description: def.description,
    params: def.params,
    mutating: false,
    hints: { open_world: true },
    timeoutMs: WEB_TOOL_TIMEOUT_MS,
    state: ({ web }) => exaState(web.settings()),
    run: (params, ctx) => def.run(params, ctx.services.web.settings(), ctx.signal) as Promise<Record<string, unknown>>,
  });
}

export const webSearchTool = exaTool({
  id: "web_search",
  description: "Searches the web through Exa. Returns each result's title, URL, published date and a snippet; read a page with web_fetch. Needs EXA_API_KEY.",
  params: webSearchParams,
  run: (params, settings, signal) => webSearch(params, settings, signal),
});

export const webFetchTool = exaTool({
  id: "web_fetch",
  description: `Returns the main text of a web page (through Exa's contents endpoint), up to ${WEB_FETCH_MAX_CHARS.toLocaleString("en")} characters. Needs EXA_API_KEY.`,
  params: webFetchParams,
  run: (params, settings, signal) => webFetch(params, settings, signal),
});
