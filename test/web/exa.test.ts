import { type IncomingHttpHeaders, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { EXA_TIMEOUT_MS, type ExaSettings, exaSettingsFromEnv, exaState, webFetch, webSearch } from "../../src/web/exa.js";

/** Shaped like Exa's answers to POST /search and POST /contents (field for field, values made up). */
const SEARCH_RESPONSE = {
  requestId: "9c1f0e8a6b2d4c7e8f0a1b2c3d4e5f60",
  resolvedSearchType: "neural",
  results: [
    {
      id: "https://nodejs.org/en/blog/release/v20.0.0",
      title: "Node.js 20 is now available!",
      url: "https://nodejs.org/en/blog/release/v20.0.0",
      publishedDate: "2023-04-18T00:00:00.000Z",
      author: "Rafael Gonzaga",
      highlights: ["We're excited to announce the release of Node.js 20!", "Highlights include the new\nPermission Model."],
      highlightScores: [0.61, 0.48],
    },
    {
      id: "https://example.org/no-date",
      title: null,
      url: "https://example.org/no-date",
      text: "A page without a date or highlights, whose text stands in for the snippet.",
    },
  ],
  searchTime: 412.7,
  costDollars: { total: 0.007, search: { neural: 0.005 }, contents: { highlights: 0.002 } },
};

const CONTENTS_RESPONSE = {
  requestId: "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
  results: [
    {
      id: "https://nodejs.org/en/about",
      url: "https://nodejs.org/en/about",
      title: "About Node.js",
      publishedDate: null,
      author: null,
      text: "As an asynchronous event-driven JavaScript runtime, Node.js is designed to build scalable network applications.",
    },
  ],
  statuses: [{ id: "https://nodejs.org/en/about", status: "success", source: "cached" }],
  costDollars: { total: 0.001 },
};

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

describe("web_search and web_fetch against a local server speaking Exa's API", () => {
  let server: Server;
  let base: string;
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  /** How the next request is answered; default: Exa's recorded shapes. */
  let answer: (req: Seen, res: ServerResponse) => void;
  const normal = (req: Seen, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(req.url === "/search" ? SEARCH_RESPONSE : CONTENTS_RESPONSE));
  };

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      let body = "";
      for await (const c of req) body += c;
      const s: Seen = { method: req.method!, url: req.url!, headers: req.headers, body: body ? JSON.parse(body) : {} };
      seen.push(s);
      answer(s, res);
    });
    server.on("connection", (s) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });

  const settings = (over: Partial<ExaSettings> = {}): ExaSettings => ({ apiKey: "test-key", baseUrl: base, timeoutMs: EXA_TIMEOUT_MS, ...over });

  it("web_search: POST /search with the key in x-api-key; results as {title, url, published_date, snippet} and a compact text", async () => {
    answer = normal;
    seen.length = 0;
    const r = await webSearch(
      {
        query: "node 20 release",
        num_results: 2,
        include_domains: ["nodejs.org"],
        exclude_domains: ["spam.example"],
        start_published_date: "2023-01-01",
        type: "neural",
      },
      settings(),
    );
    expect(seen).toHaveLength(1);
    const req = seen[0];
    expect(req).toMatchObject({ method: "POST", url: "/search" });
    expect(req.headers["x-api-key"]).toBe("test-key");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers["user-agent"]).toBe("exa-node 2.23.0");
    expect(req.body).toEqual({
      query: "node 20 release",
      numResults: 2,
      includeDomains: ["nodejs.org"],
      excludeDomains: ["spam.example"],
      startPublishedDate: "2023-01-01",
      type: "neural",
      contents: { highlights: true },
    });
    expect(r.results).toEqual([
      {
        title: "Node.js 20 is now available!",
        url: "https://nodejs.org/en/blog/release/v20.0.0",
        published_date: "2023-04-18T00:00:00.000Z",
        snippet: "We're excited to announce the release of Node.js 20! … Highlights include the new Permission Model.",
      },
      {
        title: "https://example.org/no-date",
        url: "https://example.org/no-date",
        published_date: null,
        snippet: "A page without a date or highlights, whose text stands in for the snippet.",
      },
    ]);
    expect(r.text).toBe(
      [
        "1. Node.js 20 is now available! (2023-04-18)",
        "   https://nodejs.org/en/blog/release/v20.0.0",
        "   We're excited to announce the release of Node.js 20! … Highlights include the new Permission Model.",
        "2. https://example.org/no-date",
        "   https://example.org/no-date",
        "   A page without a date or highlights, whose text stands in for the snippet.",
      ].join("\n"),
    );
  });

  it("web_search: only the params given are sent", async () => {
    answer = normal;
    seen.length = 0;
    await webSearch({ query: "q" }, settings());
    expect(seen[0].body).toEqual({ query: "q", contents: { highlights: true } });
  });

  it("web_fetch: POST /contents for the URL; the page's text", async () => {
    answer = normal;
    seen.length = 0;
    const r = await webFetch({ url: "https://nodejs.org/en/about" }, settings());
    expect(seen[0]).toMatchObject({ method: "POST", url: "/contents", body: { urls: ["https://nodejs.org/en/about"], text: { maxCharacters: 40_000 } } });
    expect(r).toEqual({
      url: "https://nodejs.org/en/about",
      title: "About Node.js",
      published_date: null,
      text: CONTENTS_RESPONSE.results[0].text,
      truncated: false,
    });
  });

  it("web_fetch: a page Exa could not read is TOOL_ERROR with Exa's status", async () => {
    answer = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ requestId: "x", results: [], statuses: [{ id: "https://gone.example/", status: "error", error: { tag: "CRAWL_NOT_FOUND" } }] }));
    };
    const e = await webFetch({ url: "https://gone.example/" }, settings()).catch((x) => x);
    expect(e).toBeInstanceOf(ToolError);
    expect(e.code).toBe("TOOL_ERROR");
    expect(e.message).toContain("CRAWL_NOT_FOUND");
  });

  it("without a key: NOT_CONFIGURED, and nothing is sent", async () => {
    answer = normal;
    seen.length = 0;
    await expect(webSearch({ query: "q" }, settings({ apiKey: undefined }))).rejects.toMatchObject({ code: "NOT_CONFIGURED" });
    await expect(webFetch({ url: "https://x.example/" }, settings({ apiKey: "" }))).rejects.toMatchObject({ code: "NOT_CONFIGURED" });
    expect(seen).toHaveLength(0);
    expect(exaState(settings({ apiKey: undefined }))).toMatchObject({ configured: false, reason: expect.stringContaining("EXA_API_KEY") });
    expect(exaState(settings())).toMatchObject({ configured: true });
  });

  it("a key Exa refuses is NOT_CONFIGURED; a server error is UNREACHABLE; a bad request is TOOL_ERROR with Exa's message", async () => {
    const status = (code: number, body: unknown) => (_req: Seen, res: ServerResponse) => {
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    answer = status(401, { requestId: "r", error: "Invalid API key" });
    await expect(webSearch({ query: "q" }, settings())).rejects.toMatchObject({ code: "NOT_CONFIGURED", message: expect.stringContaining("Invalid API key") });
    answer = status(503, { error: "Service Unavailable" });
    await expect(webSearch({ query: "q" }, settings())).rejects.toMatchObject({ code: "UNREACHABLE", details: { http_status: 503 } });
    answer = status(400, { requestId: "r", error: "numResults must be at most 100" });
    await expect(webSearch({ query: "q" }, settings())).rejects.toMatchObject({
      code: "TOOL_ERROR",
      message: expect.stringContaining("numResults must be at most 100"),
    });
  });

  it("a server that is down is UNREACHABLE at once", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const e = await webSearch({ query: "q" }, settings({ baseUrl: `http://127.0.0.1:${port}` })).catch((x) => x);
    expect(e).toBeInstanceOf(ToolError);
    expect(e.code).toBe("UNREACHABLE");
    expect(e.message).toContain("ECONNREFUSED");
  });

  it("a server that accepts and never answers is UNREACHABLE when the bound passes (10 s by default)", async () => {
    answer = () => {}; // never answers; the socket is destroyed in afterAll
    expect(EXA_TIMEOUT_MS).toBe(10_000);
    const e = await webSearch({ query: "q" }, settings({ timeoutMs: 300 })).catch((x) => x);
    expect(e).toBeInstanceOf(ToolError);
    expect(e.code).toBe("UNREACHABLE");
    expect(e.message).toContain("no answer within 300 ms");
  });

  it("the call's signal answers CANCELLED", async () => {
    answer = () => {};
    const ac = new AbortController();
    const p = webFetch({ url: "https://x.example/" }, settings(), ac.signal);
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: "CANCELLED" });
  });

  it("the settings come from EXA_API_KEY and EXA_BASE_URL", () => {
    expect(exaSettingsFromEnv({ EXA_API_KEY: "k", EXA_BASE_URL: "http://127.0.0.1:1" })).toEqual({
      apiKey: "k",
      baseUrl: "http://127.0.0.1:1",
      timeoutMs: 10_000,
    });
    expect(exaSettingsFromEnv({})).toEqual({ apiKey: undefined, baseUrl: "https://api.exa.ai", timeoutMs: 10_000 });
  });
});
