/**
 * The daemon built in the test process (test/helpers/in-process.ts): the same calls through both transports, and two
 * daemons in one process that share no state.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileHash } from "../src/core/hash.js";
import { type InProcess, inProcessDaemon } from "./helpers/in-process.js";
import { tmpWorkspace } from "./helpers/tmp.js";
import { git } from "./git/fixture.js";

type Json = Record<string, unknown>;

const hashOf = (s: string) => fileHash(Buffer.from(s));

// debug_sleep (a call that runs until cancelled) is registered only when this is set as the daemon is built.
process.env.TOOL_LAYER_DEBUG_TOOLS = "1";

function committedRepo(files: Record<string, string>) {
  const tmp = tmpWorkspace({ git: true, files });
  git(tmp.dir, "add", "-A");
  git(tmp.dir, "commit", "-qm", "start");
  return tmp;
}

describe("one daemon in process, through both transports", () => {
  const tmp = committedRepo({ "a.txt": "one\ntwo\n" });
  let d: InProcess;
  beforeAll(async () => {
    d = await inProcessDaemon(tmp.dir);
  });
  afterAll(async () => {
    await d?.stop();
    tmp.cleanup();
  });

  describe("JSON lines", () => {
    it("reads a file with its hash", async () => {
      const r = await d.jsonl.call("file_read", { path: "a.txt" });
      expect(r).toMatchObject({ success: true, result: { hash: hashOf("one\ntwo\n") } });
    });

    it("previews a write (a dry run) and changes nothing", async () => {
      const r = await d.jsonl.call("file_write", { path: "new.txt", content: "x\n" }, { approved: false });
      expect(r).toMatchObject({ success: true, result: { dry_run: true, created: true } });
      expect((r.result as Json).preview_id).toMatch(/^[0-9a-f]{16}$/);
      expect(existsSync(path.join(tmp.dir, "new.txt"))).toBe(false);
    });

    it("cancels a running call", async () => {
      const [slow, cancel] = await d.jsonl.send(
        { tool_id: "debug_sleep", id: "victim", params: { ms: 60_000 } },
        { tool_id: "cancel", id: "stop-it", params: { call_id: "victim" } },
      );
      expect(cancel).toMatchObject({ success: true, result: { cancelled: true } });
      expect(slow).toMatchObject({ success: false, result: { code: "CANCELLED" } });
    });

    it("answers an error as a value", async () => {
      const r = await d.jsonl.call("file_read", { path: "missing.txt" });
      expect(r).toMatchObject({ success: false, result: { code: "NOT_FOUND" } });
    });
  });

  describe("MCP", () => {
    it("reads a file with its hash", async () => {
      const r = await d.mcp.callTool("file_read", { path: "a.txt" });
      expect(r.isError).toBeFalsy();
      expect(r.content[0].text).toContain("two");
      expect(r.structuredContent.hash).toBe(hashOf("one\ntwo\n"));
    });

    it("previews a write (dry_run) and changes nothing", async () => {
      const r = await d.mcp.callTool("file_write", { path: "new.txt", content: "x\n", dry_run: true });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ dry_run: true, created: true });
      expect(existsSync(path.join(tmp.dir, "new.txt"))).toBe(false);
    });

    it("cancels a running call (notifications/cancelled)", async () => {
      const { id } = d.mcp.send("tools/call", { name: "debug_sleep", arguments: { ms: 60_000 } });
      const taken = await d.dispatched((r) => r.tool_id === "debug_sleep" && r.session_id.startsWith("mcp-"));
      d.mcp.notify("notifications/cancelled", { requestId: id, reason: "test" });
      expect((await taken.outcome).result).toMatchObject({ code: "CANCELLED" });
      // MCP answers nothing for a cancelled request: the next request's answer comes, the cancelled one's never.
      await d.mcp.request("ping");
      expect(d.mcp.inbox.messages.filter((m) => m.id === id)).toEqual([]);
    });

    it("answers an error as a tool error (isError)", async () => {
      const r = await d.mcp.callTool("file_read", { path: "missing.txt" });
      expect(r.isError).toBe(true);
      expect(r.structuredContent.code).toBe("NOT_FOUND");
    });
  });
});

describe("two daemons in one process", () => {
  const a = committedRepo({ "shared.txt": "a\n", "src/in-a.ts": "export {};\n" });
  const b = committedRepo({ "shared.txt": "b\n", "src/in-b.ts": "export {};\n" });
  let da: InProcess;
  let db: InProcess;
  beforeAll(async () => {
    [da, db] = await Promise.all([inProcessDaemon(a.dir), inProcessDaemon(b.dir)]);
  });
  afterAll(async () => {
    await Promise.all([da?.stop(), db?.stop()]);
    a.cleanup();
    b.cleanup();
  });

  const result = async (d: InProcess, tool: string, params: Json = {}) => {
    const r = await d.jsonl.call(tool, params);
    expect(r.success, JSON.stringify(r)).toBe(true);
    return r.result as Json;
  };

  it("share no caches: a file written in one is never seen by the other's find_file, list_dir or git_status", async () => {
    // Both caches warm first, so a cache shared between them would answer from the other's root.
    for (const d of [da, db]) {
      await result(d, "find_file", { query: "fresh" });
      await result(d, "list_dir", { path: "src" });
      await result(d, "git_status");
    }
    const changed = da.jsonl.inbox.waitFor((m) => m.event === "fs.changed" && JSON.stringify(m.data).includes("src/fresh-file.ts"));
    await result(da, "file_write", { path: "src/fresh-file.ts", content: "export const x = 1;\n" });
    await changed; // A's watcher has indexed it

    expect(JSON.stringify(await result(da, "find_file", { query: "fresh-file" }))).toContain("src/fresh-file.ts");
    expect(JSON.stringify(await result(db, "find_file", { query: "fresh-file" }))).not.toContain("fresh-file");
    expect(String((await result(da, "list_dir", { path: "src" })).text)).toContain("fresh-file.ts");
    expect(String((await result(db, "list_dir", { path: "src" })).text)).not.toContain("fresh-file.ts");
    expect(JSON.stringify(await result(da, "git_status"))).toContain("src/fresh-file.ts");
    expect(JSON.stringify(await result(db, "git_status"))).not.toContain("fresh-file");
  });

  it("each sees its own files, and its own version of the same path", async () => {
    expect((await result(da, "file_read", { path: "shared.txt" })).hash).toBe(hashOf("a\n"));
    expect((await result(db, "file_read", { path: "shared.txt" })).hash).toBe(hashOf("b\n"));
    expect(JSON.stringify(await result(db, "find_file", { query: "in-b" }))).toContain("src/in-b.ts");
    expect(JSON.stringify(await result(db, "find_file", { query: "in-a" }))).not.toContain("in-a.ts");
  });

  it("a line counted in one root is not the other's: list_dir counts each root's own file", async () => {
    writeFileSync(path.join(b.dir, "src", "in-b.ts"), "export {};\nexport const y = 2;\n");
    expect(readFileSync(path.join(a.dir, "src", "in-a.ts"), "utf8")).toBe("export {};\n");
    expect(String((await result(db, "list_dir", { path: "src" })).text)).toMatch(/in-b\.ts.*2 lines/);
    expect(String((await result(da, "list_dir", { path: "src" })).text)).toMatch(/in-a\.ts.*1 line\b/);
  });
});
