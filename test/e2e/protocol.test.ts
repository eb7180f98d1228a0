import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DaemonClient, MAIN, daemonForSuite, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

const DEBUG = { TOOL_LAYER_DEBUG_TOOLS: "1" };

describe("protocol", () => {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "alpha\n" } });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c), [], DEBUG);

  it("says ready first, with version, root and the number of tools", () => {
    expect(d.lines[0].event).toBe("ready");
    expect(d.lines[0].data).toMatchObject({ root: ws.dir, version: expect.any(String), tools: expect.any(Number) });
  });

  it("answers a malformed line with PARSE_ERROR and call_id null, then serves the next line", async () => {
    const before = d.lines.length;
    d.sendRaw('{"tool_id": "list", oops\n');
    const ok = d.call("list");
    const parse = await d.waitFor((l, i = d.lines.indexOf(l)) => i >= before && l.result?.code === "PARSE_ERROR");
    expect(parse.call_id).toBeNull();
    expect((await ok).success).toBe(true);
  });

  it("rejects JSON that is not an object, and an envelope without a usable toolcall_id, with call_id null", async () => {
    for (const raw of ["[1,2]", "42", '"list"', "null", '{"tool_id":"list","session_id":"s"}', '{"tool_id":"list","session_id":"s","toolcall_id":{"x":1}}']) {
      const before = d.lines.length;
      d.sendRaw(raw + "\n");
      const r = await d.waitFor((l) => d.lines.indexOf(l) >= before && l.call_id === null);
      expect(r.result.code, raw).toBe("INVALID_REQUEST");
    }
  });

  it("ignores blank lines and tolerates CRLF framing", async () => {
    const before = d.lines.length;
    d.sendRaw('\n   \n{"tool_id":"list","session_id":"s","toolcall_id":"crlf"}\r\n');
    const r = await d.waitFor((l) => l.call_id === "crlf");
    expect(r.success).toBe(true);
    expect(d.lines.slice(before).filter((l) => l.call_id === null)).toEqual([]);
  });

  it("echoes call_id with its type", async () => {
    expect((await d.call("list", {}, { id: "7" })).call_id).toBe("7");
    expect((await d.call("list", {}, { id: 8 })).call_id).toBe(8);
  });

  it("names each bad envelope field", async () => {
    d.sendRaw('{"tool_id":5,"session_id":"","toolcall_id":"env","approved":"yes","params":[]}\n');
    const r = await d.waitFor((l) => l.call_id === "env");
    expect(r.result.code).toBe("INVALID_REQUEST");
    for (const field of ["tool_id", "session_id", "approved", "params"]) expect(r.result.message).toContain(field);
  });

  it("answers NOT_AVAILABLE for an unknown tool", async () => {
    const r = await d.call("no_such_tool");
    expect(r.result.code).toBe("NOT_AVAILABLE");
    expect(r.result.message).toContain("no_such_tool");
  });

  it("rejects an unknown field and a wrong type with INVALID_PARAMS naming each", async () => {
    const r = await d.call("info", { tool_id: 3, tool: "list" });
    expect(r.result.code).toBe("INVALID_PARAMS");
    expect(r.result.message).toMatch(/tool_id: .*string/);
    expect(r.result.message).toContain("tool: unknown field");
  });

  it('names the types a union expected instead of zod\'s bare "Invalid input"', async () => {
    expect((await d.call("cancel", {})).result.message).toBe("Invalid params: call_id: expected number or string, received undefined.");
    expect((await d.call("cancel", { call_id: true })).result.message).toContain("expected number or string, received boolean");
  });

  it("refuses an unknown field on every enabled tool", async () => {
    const { tools } = await d.ok("list");
    for (const { tool_id } of tools) {
      const r = await d.call(tool_id, { surely_not_a_param: 1 });
      expect(r.result.code, tool_id).toBe("INVALID_PARAMS");
      expect(r.result.message, tool_id).toContain("surely_not_a_param");
    }
  });

  it("runs calls concurrently and answers out of order", async () => {
    const slow = d.call("debug_sleep", { ms: 400 });
    const fast = d.call("list");
    await fast;
    const order = d.lines.filter((l) => "call_id" in l).map((l) => l.call_id);
    const r = await slow;
    expect(r.success).toBe(true);
    expect(order.indexOf(r.call_id)).toBe(-1); // the fast one answered while the slow one still ran
  });

  it("refuses a toolcall_id that is still running", async () => {
    void d.call("debug_sleep", { ms: 300 }, { id: "dup" });
    d.sendRaw(JSON.stringify({ tool_id: "list", session_id: "s", toolcall_id: "dup" }) + "\n");
    const refusal = await d.waitFor((l) => l.call_id === "dup" && l.success === false);
    expect(refusal.result.code).toBe("INVALID_REQUEST");
    const first = await d.waitFor((l) => l.call_id === "dup" && l.success === true);
    expect(first.result.slept).toBe(300); // the running call was not disturbed
  });

  it("cancels a running call: it answers CANCELLED, cancel answers cancelled:true", async () => {
    const slow = d.call("debug_sleep", { ms: 20_000 }, { id: "victim" });
    const c = await d.ok("cancel", { call_id: "victim" });
    expect(c.cancelled).toBe(true);
    const r = await slow;
    expect(r.result.code).toBe("CANCELLED");
    expect(d.lines.filter((l) => l.call_id === "victim")).toHaveLength(1); // no late answer after the cancel
    expect((await d.ok("cancel", { call_id: "victim" })).cancelled).toBe(false);
  });

  it("stops a call past its timeout with TIMEOUT", async () => {
    const r = await d.call("debug_sleep", { ms: 10_000 });
    expect(r.result.code).toBe("TIMEOUT");
  });

  it("turns an unexpected throw into INTERNAL and lives on", async () => {
    const r = await d.call("debug_sleep", { ms: 0, crash: true });
    expect(r.result.code).toBe("INTERNAL");
    expect(r.result.message).toContain("crashed on purpose");
    expect((await d.call("list")).success).toBe(true);
  });

  it("describes tools with info, equal to tools.json", async () => {
    const manifest = JSON.parse(readFileSync(path.join(__dirname, "../../tools.json"), "utf8"));
    for (const entry of manifest) {
      const info = await d.ok("info", { tool_id: entry.name });
      const { tool_id, description, input_schema, mutating, read_only, destructive, idempotent, open_world } = info;
      expect({ name: tool_id, description, input_schema, mutating, read_only, destructive, idempotent, open_world }).toEqual(entry);
      expect(info.state).toBeTypeOf("object");
    }
  });
});

describe("lifecycle", () => {
  it("queues requests sent before ready and answers them after it", async () => {
    const ws = tmpWorkspace();
    const d = new DaemonClient(ws.dir);
    const r = await d.call("list", {}, { id: "early" }); // written at once, before the daemon can have said ready
    const i = d.lines.findIndex((l) => l.event === "ready");
    expect(i).toBe(0);
    expect(r.success).toBe(true);
    await d.close();
    ws.cleanup();
  });

  it("exits 0 on stdin EOF after finishing calls in flight", async () => {
    const ws = tmpWorkspace();
    const d = await startDaemon(ws.dir, [], DEBUG);
    const slow = d.call("debug_sleep", { ms: 300 });
    d.child.stdin.end();
    expect((await slow).success).toBe(true);
    expect(await d.exited).toEqual({ code: 0, signal: null });
    ws.cleanup();
  });

  it("exits 0 on SIGTERM after finishing calls in flight", async () => {
    const ws = tmpWorkspace();
    const d = await startDaemon(ws.dir, [], DEBUG);
    const slow = d.call("debug_sleep", { ms: 300 });
    await d.ok("list"); // lines are taken in order: once this is answered, the slow call is running
    d.child.kill("SIGTERM");
    expect((await slow).success).toBe(true);
    expect(await d.exited).toEqual({ code: 0, signal: null });
    ws.cleanup();
  });

  it("applies a --tools file: left-out tools are disabled, descriptions replaced, built-ins kept", async () => {
    const ws = tmpWorkspace({ files: { "a.txt": "x\n" } });
    const manifest = JSON.parse(readFileSync(path.join(__dirname, "../../tools.json"), "utf8")) as { name: string; description: string }[];
    const kept = manifest.filter((t) => t.name === "info").map((t) => ({ ...t, description: "Custom words. More." }));
    const file = path.join(ws.dir, "tools.json");
    writeFileSync(file, JSON.stringify(kept));
    const d = await startDaemon(ws.dir, ["--tools", file]);
    const { tools } = await d.ok("list");
    expect(tools.map((t: { tool_id: string }) => t.tool_id).sort()).toEqual(["cancel", "info", "list", "session_end"]);
    expect(tools.find((t: { tool_id: string }) => t.tool_id === "info").description).toBe("Custom words.");
    expect((await d.ok("info", { tool_id: "info" })).description).toBe("Custom words. More.");
    for (const gone of manifest.map((t) => t.name).filter((n) => !["list", "info", "cancel", "session_end"].includes(n))) {
      expect((await d.call(gone, {})).result.code, gone).toBe("NOT_AVAILABLE");
      expect((await d.call("info", { tool_id: gone })).result.code, gone).toBe("NOT_AVAILABLE");
    }
    await d.close();
    ws.cleanup();
  });

  it("stops with exit 2 and a message on an unreadable --tools file", () => {
    const ws = tmpWorkspace();
    writeFileSync(path.join(ws.dir, "bad.json"), "{not json");
    for (const file of [path.join(ws.dir, "missing.json"), path.join(ws.dir, "bad.json")]) {
      const r = spawnSync(process.execPath, [MAIN, "--root", ws.dir, "--tools", file], { input: "", encoding: "utf8" });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain("--tools");
      expect(r.stdout).toBe("");
    }
    ws.cleanup();
  });

  it("stops with exit 2 on a root that does not exist", () => {
    const r = spawnSync(process.execPath, [MAIN, "--root", "/no/such/dir/at/all"], { input: "", encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
  });
});
