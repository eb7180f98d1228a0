import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initHash, tagOf } from "../../src/core/hash.js";
import { type DaemonClient, MAIN, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

await initHash();

/** Reads a.txt, writes it once, and tries again from the version read: a HASH_MISMATCH the daemon has the diff for. */
async function staleWrite(write: (params: Record<string, unknown>) => Promise<unknown>, hash: string): Promise<void> {
  await write({ path: "a.txt", hash, edits: [{ type: "replace", startline: tagOf("two"), content: "TWO" }] });
}

describe("an error's text carries what a model needs to act, in JSON lines", () => {
  const ws = tmpWorkspace({ files: { "a.txt": "one\ntwo\nthree\n", "same.txt": "x\nx\n" } });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));

  it("HASH_MISMATCH: the failure has text, and the diff from the caller's version is in it", async () => {
    const { hash } = await d.ok("file_read", { path: "a.txt" });
    await staleWrite((p) => d.ok("file_write", p), hash);
    const r = await d.call("file_write", { path: "a.txt", hash, content: "other\n" });
    expect(r.result.code).toBe("HASH_MISMATCH");
    expect(typeof r.result.diff).toBe("string");
    expect(r.result.text).toMatch(/^HASH_MISMATCH: /);
    expect(r.result.text).toContain(r.result.message);
    expect(r.result.text).toContain(r.result.diff.trimEnd());
    expect(r.result.text).toContain("+TWO");
  });

  it("TAG_AMBIGUOUS: the text names every candidate", async () => {
    const { hash } = await d.ok("file_read", { path: "same.txt" });
    const r = await d.call("file_write", { path: "same.txt", hash, edits: [{ type: "replace", startline: tagOf("x"), content: "y" }] });
    expect(r.result.code).toBe("TAG_AMBIGUOUS");
    expect(r.result.candidates).toEqual([`1:${tagOf("x")}`, `2:${tagOf("x")}`]);
    for (const c of r.result.candidates) expect(r.result.text).toContain(c);
  });

  it("an envelope error has text too", async () => {
    d.sendRaw("not json\n");
    const r = await d.waitFor((l) => l.call_id === null && l.result?.code === "PARSE_ERROR");
    expect(r.result.text).toMatch(/^PARSE_ERROR: The line is not valid JSON/);
  });
});

describe("an error's text carries what a model needs to act, in MCP mode", () => {
  const ws = tmpWorkspace({ files: { "a.txt": "one\ntwo\nthree\n" } });
  const state = tmpWorkspace();
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: "test-client", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, "--mcp", "--mcp-confirm", "none", "--root", ws.dir],
        stderr: "pipe",
        env: { ...process.env, XDG_STATE_HOME: state.dir } as Record<string, string>,
      }),
    );
  });
  afterAll(async () => {
    await client.close();
    ws.cleanup();
    state.cleanup();
  });

  it("HASH_MISMATCH: the text content holds the diff, not only CODE: message", async () => {
    const read = await client.callTool({ name: "file_read", arguments: { path: "a.txt" } });
    const { hash } = read.structuredContent as { hash: string };
    await staleWrite((p) => client.callTool({ name: "file_write", arguments: p }), hash);
    const stale = await client.callTool({ name: "file_write", arguments: { path: "a.txt", hash, content: "other\n" } });
    expect(stale.isError).toBe(true);
    const { code, diff } = stale.structuredContent as { code: string; diff: string };
    expect(code).toBe("HASH_MISMATCH");
    const text = (stale.content as { type: string; text: string }[])[0].text;
    expect(text).toMatch(/^HASH_MISMATCH: /);
    expect(text).toContain(diff.trimEnd());
    expect(text).toContain("+TWO");
  });
});
