import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

// Exa cannot be reached from here: a local server that speaks its API (POST /search, key in x-api-key) stands in.
describe("web_search through the daemon", () => {
  let server: Server;
  let base: string;
  const keys: (string | undefined)[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      keys.push(req.headers["x-api-key"] as string | undefined);
      req.resume();
      req.on("end", () => {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            requestId: "r1",
            results: [{ id: "u", url: "https://example.org/a", title: "A page", publishedDate: "2024-01-02T00:00:00.000Z", highlights: ["the snippet"] }],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers with the results and a compact text when EXA_API_KEY is set", async () => {
    const ws = tmpWorkspace();
    const d = await startDaemon(ws.dir, [], { EXA_API_KEY: "k-123", EXA_BASE_URL: base });
    try {
      expect((await d.ok("info", { tool_id: "web_search" })).open_world).toBe(true);
      const r = await d.ok("web_search", { query: "node 20" });
      expect(r.results).toEqual([
        { title: "A page", url: "https://example.org/a", published_date: expect.stringMatching(/^2024-01-02/), snippet: "the snippet" },
      ]);
      expect(r.text).toContain("https://example.org/a");
      expect(keys).toContain("k-123");
    } finally {
      await d.close();
      ws.cleanup();
    }
  });

  it("without a key, info says so and a call is NOT_CONFIGURED without any request", async () => {
    const ws = tmpWorkspace();
    const before = keys.length;
    const d = await startDaemon(ws.dir, [], { EXA_API_KEY: "", EXA_BASE_URL: base });
    try {
      expect((await d.ok("info", { tool_id: "web_search" })).state).toMatchObject({ available: false });
      expect((await d.call("web_search", { query: "x" })).result.code).toBe("NOT_CONFIGURED");
      expect(keys.length).toBe(before);
    } finally {
      await d.close();
      ws.cleanup();
    }
  });
});
