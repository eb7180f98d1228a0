import { defineTool } from "../tools/tool.js";
import { EXA_TIMEOUT_MS, WEB_FETCH_MAX_CHARS, exaSettingsFromEnv, exaState, webFetch, webFetchParams, webSearch, webSearchParams } from "./exa.js";

/** Above Exa's own bound, so the call answers UNREACHABLE with Exa's reason rather than the dispatcher's TIMEOUT. */
const WEB_TOOL_TIMEOUT_MS = EXA_TIMEOUT_MS + 5_000;

/** The settings are read at each call: a key set after start (a restarted Gateway) is still seen. */
export const webSearchTool = defineTool({
  id: "web_search",
  description:
    "Searches the web through Exa. Returns each result's title, URL, published date and a snippet; read a page with web_fetch. Needs EXA_API_KEY.",
  params: webSearchParams,
  mutating: false,
  hints: { open_world: true },
  timeoutMs: WEB_TOOL_TIMEOUT_MS,
  state: () => exaState(exaSettingsFromEnv()),
  run: (params, ctx) => webSearch(params, exaSettingsFromEnv(), ctx.signal) as Promise<Record<string, unknown>>,
});

export const webFetchTool = defineTool({
  id: "web_fetch",
  description: `Returns the main text of a web page (through Exa's contents endpoint), up to ${WEB_FETCH_MAX_CHARS.toLocaleString("en")} characters. Needs EXA_API_KEY.`,
  params: webFetchParams,
  mutating: false,
  hints: { open_world: true },
  timeoutMs: WEB_TOOL_TIMEOUT_MS,
  state: () => exaState(exaSettingsFromEnv()),
  run: (params, ctx) => webFetch(params, exaSettingsFromEnv(), ctx.signal) as Promise<Record<string, unknown>>,
});
