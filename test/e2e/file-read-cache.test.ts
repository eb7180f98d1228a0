/**
 * file_read's cache of rendered windows (src/fs/window-cache.ts) never answers with what the disk no longer has: each
 * read reads the file, and a window is reused only for equal bytes. The writes here keep the file's size and put its
 * mtime back, so a cache trusting stat (or the watcher, which may not have reported the write yet) would serve the old
 * lines; the property test checks every answer, over JSON lines and over MCP, against a rendering made here. The same
 * holds for the file's facts kept for its other windows (its hash, lines and tags: FileFactsCache).
 */
import { statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash, tagOf } from "../../src/core/hash.js";
import { type DaemonClient, MAIN, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { check } from "../property/runs.js";

await initHash();

const ws = tmpWorkspace({ git: true, files: { "a.txt": "one\ntwo\nthree\n" } });
const at = (rel: string) => path.join(ws.dir, rel);
let d: DaemonClient;
let mcp: Client;

beforeAll(async () => {
  d = await startDaemon(ws.dir);
  mcp = new Client({ name: "cache-test", version: "1" });
  await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [MAIN, "--mcp", "--root", ws.dir, "--mcp-confirm", "none"], stderr: "pipe" }));
});
afterAll(async () => {
  await mcp.close();
  await d.close();
  ws.cleanup();
});

/** Writes `text` over `rel` and puts its mtime back: same size in, same stat out (but for ctime). */
function rewriteKeepingStat(rel: string, text: string): void {
  const before = statSync(at(rel));
  writeFileSync(at(rel), text);
  utimesSync(at(rel), before.atime, before.mtime);
}

/** The text file_read gives for a window of `text` (no line cut, no escapes beyond JSON's: short ASCII lines). */
function rendered(rel: string, text: string, offset: number, limit: number): string {
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  const to = Math.min(lines.length, offset - 1 + limit);
  const next = to < lines.length ? ` · next offset ${to + 1}` : "";
  const header = `file ${rel} · hash ${fileHash(Buffer.from(text))} · lines ${offset}-${to} of ${lines.length}${next}`;
  return [header, ...lines.slice(offset - 1, to).map((l, i) => `${offset + i}|${tagOf(l)} ${l}`)].join("\n");
}

async function mcpRead(args: Record<string, unknown>): Promise<{ text: string; hash: string }> {
  const r = (await mcp.callTool({ name: "file_read", arguments: args })) as { content: { text: string }[]; structuredContent: { hash: string } };
  return { text: r.content[0].text, hash: r.structuredContent.hash };
}

describe("file_read's window cache", () => {
  it("answers with the new lines after a write that keeps the size and the mtime, over JSON lines and MCP", async () => {
    const first = await d.ok("file_read", { path: "a.txt" });
    expect((await mcpRead({ path: "a.txt" })).text).toBe(first.text);
    expect((await d.ok("file_read", { path: "a.txt" })).text).toBe(first.text); // from the cache
    rewriteKeepingStat("a.txt", "ONE\ntwo\nthree\n");
    const r = await d.ok("file_read", { path: "a.txt" });
    expect(r.hash).toBe(fileHash(Buffer.from("ONE\ntwo\nthree\n")));
    expect(r.text).toBe(rendered("a.txt", "ONE\ntwo\nthree\n", 1, 150));
    expect((await mcpRead({ path: "a.txt" })).text).toBe(r.text);
  });

  it("a read answered from the cache still records what its session saw: the session is stale after another's write", async () => {
    writeFileSync(at("seen.txt"), "alpha\nbeta\n");
    const s1 = await d.ok("file_read", { path: "seen.txt" }, { session: "s1" });
    const s2 = await d.ok("file_read", { path: "seen.txt" }, { session: "s2" }); // the same bytes: a cached window
    expect(s2.text).toBe(s1.text);
    const w = await d.ok(
      "file_write",
      { path: "seen.txt", hash: s1.hash, edits: [{ type: "replace", startline: tagOf("beta"), content: "BETA" }] },
      { session: "s1" },
    );
    const line = await d.waitFor((l) => l.event === "fs.changed" && l.data.changes.some((c: any) => c.path === "seen.txt" && c.hash === w.hash), 15_000);
    const change = line.data.changes.find((c: any) => c.path === "seen.txt" && c.hash === w.hash);
    expect(change.stale_sessions).toContain("s2");
    expect(change.stale_sessions).not.toContain("s1");
  });

  it("another window, tag mode and since after a write keeping size and mtime: the file's facts are not reused", async () => {
    const text = (c: string) => `${Array.from({ length: 12 }, (_, i) => `${c}${i}`).join("\n")}\n`;
    writeFileSync(at("facts.txt"), text("a"));
    const first = await d.ok("file_read", { path: "facts.txt", offset: 1, limit: 4 }); // the file's hash, lines and tags kept
    expect(first.text).toBe(rendered("facts.txt", text("a"), 1, 4));
    expect((await mcpRead({ path: "facts.txt", offset: 1, limit: 4 })).text).toBe(first.text);
    rewriteKeepingStat("facts.txt", text("b"));
    const now = fileHash(Buffer.from(text("b")));
    // Each answer below is of a window or mode not read before, so only the file's facts could answer it stale.
    const other = await d.ok("file_read", { path: "facts.txt", offset: 5, limit: 4 });
    expect(other.hash).toBe(now);
    expect(other.text).toBe(rendered("facts.txt", text("b"), 5, 4));
    expect((await mcpRead({ path: "facts.txt", offset: 9, limit: 4 })).text).toBe(rendered("facts.txt", text("b"), 9, 4));
    const tags = await d.ok("file_read", { path: "facts.txt", lines: [1, 12] });
    expect(tags.hash).toBe(now);
    expect(tags.tags).toEqual([
      { line: 1, tag: tagOf("b0") },
      { line: 12, tag: tagOf("b11") },
    ]);
    const since = await d.ok("file_read", { path: "facts.txt", since: first.hash });
    expect(since.hash).toBe(now);
    expect(since.unchanged).toBe(false);
    rewriteKeepingStat("facts.txt", text("c"));
    const back = await d.ok("file_read", { path: "facts.txt", offset: 1, limit: 4 }); // a window seen, of other bytes
    expect(back.text).toBe(rendered("facts.txt", text("c"), 1, 4));
    expect((await d.ok("file_read", { path: "facts.txt", since: now })).unchanged).toBe(false);
  });

  it("every read equals a rendering of the file as it is, whatever was read and written before (seeded)", async () => {
    const line = fc.stringMatching(/^[a-z "\\\t]{0,12}$/);
    const op = fc.oneof(
      fc.record({
        kind: fc.constant("write" as const),
        file: fc.constantFrom("p.txt", "q.txt"),
        lines: fc.array(line, { minLength: 1, maxLength: 8 }),
        sameSize: fc.boolean(),
      }),
      fc.record({
        kind: fc.constant("read" as const),
        file: fc.constantFrom("p.txt", "q.txt"),
        window: fc.constantFrom<{ offset?: number; limit?: number }>({}, { offset: 2, limit: 3 }, { limit: 2 }),
        session: fc.constantFrom("r1", "r2"),
        over: fc.constantFrom("jsonl" as const, "mcp" as const),
      }),
    );
    const contents = new Map<string, string>();
    for (const f of ["p.txt", "q.txt"]) {
      contents.set(f, "x\ny\nz\n");
      writeFileSync(at(f), "x\ny\nz\n");
    }
    await check(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        for (const o of ops) {
          const now = contents.get(o.file)!;
          if (o.kind === "write") {
            let text = `${o.lines.join("\n")}\n`;
            // The same size as now: the old text with letters changed where it has them (the stat then cannot tell).
            if (o.sameSize) text = now.replace(/[a-z]/, (c) => (c === "q" ? "w" : "q"));
            contents.set(o.file, text);
            rewriteKeepingStat(o.file, text);
            continue;
          }
          const offset = o.window.offset ?? 1;
          const limit = o.window.limit ?? 150;
          const total = now.split("\n").length - 1;
          if (offset > total) continue;
          const args = { path: o.file, ...o.window };
          const got = o.over === "jsonl" ? await d.ok("file_read", args, { session: o.session }) : await mcpRead(args);
          expect(got.hash).toBe(fileHash(Buffer.from(now)));
          expect(got.text).toBe(rendered(o.file, now, offset, limit));
        }
      }),
      40,
    );
  });
});
