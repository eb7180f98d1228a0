/**
 * McpStdioTransport.answerCallsWith on real streams: which tools/call it takes off the wire, how it answers (the SDK's
 * shape), and that a cancel or the end of the input stops a call it took without answering it.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { type DirectCall, McpStdioTransport } from "../../../src/protocol/mcp/stdio-transport.js";

function connection() {
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new McpStdioTransport(input, output);
  const toSdk: unknown[] = [];
  transport.onmessage = (m) => void toSdk.push(m);
  const written: string[] = [];
  let pending = "";
  const waiters: (() => void)[] = [];
  output.on("data", (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split("\n");
    pending = lines.pop()!;
    written.push(...lines);
    for (const w of waiters.splice(0)) w();
  });
  const nextLine = async (n = written.length + 1) => {
    while (written.length < n) await new Promise<void>((r) => waiters.push(r));
    return written[n - 1]!;
  };
  const send = (m: object) => input.write(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`);
  return { input, transport, toSdk, written, nextLine, send };
}

/** A call answered when the test says, that records being cancelled. */
function controlled() {
  let resolve!: (v: unknown) => void;
  let reject!: (e: unknown) => void;
  const answer = new Promise<unknown>((res, rej) => ((resolve = res), (reject = rej)));
  const call: DirectCall & { cancelled: number } = { answer, cancelled: 0, cancel: () => void call.cancelled++ };
  return { call, resolve, reject };
}

/** Direct calls taken one after another, each answered when the test says. */
function takesInTurn(transport: McpStdioTransport, count: number) {
  const calls = Array.from({ length: count }, controlled);
  let next = 0;
  transport.answerCallsWith(() => calls[next++]!.call);
  return calls;
}

describe("McpStdioTransport direct calls", () => {
  it("leaves every message to the SDK until answerCallsWith, then only the calls it accepts", async () => {
    const c = connection();
    await c.transport.start();
    const taken = controlled();
    c.send({ id: 1, method: "tools/call", params: { name: "file_read" } });
    await new Promise<void>((r) => setImmediate(r));
    c.transport.answerCallsWith((params) => ((params as { name: string }).name === "file_read" ? taken.call : undefined));
    c.send({ id: 2, method: "tools/call", params: { name: "file_write" } });
    c.send({ id: 3, method: "tools/list" });
    c.send({ id: 4, method: "tools/call", params: { name: "file_read" } });
    c.send({ method: "notifications/cancelled", params: { requestId: 2 } });
    taken.resolve({ content: [{ type: "text", text: "hi" }] });
    expect(await c.nextLine()).toBe('{"result":{"content":[{"type":"text","text":"hi"}]},"jsonrpc":"2.0","id":4}');
    expect(c.toSdk.map((m) => (m as { id?: number; method: string }).id ?? (m as { method: string }).method)).toEqual([1, 2, 3, "notifications/cancelled"]);
  });

  it("a request id already in flight goes to the SDK (which answers the duplicate as it does)", async () => {
    const c = connection();
    await c.transport.start();
    const first = controlled();
    c.transport.answerCallsWith(() => first.call);
    c.send({ id: "x", method: "tools/call", params: { name: "a" } });
    c.send({ id: "x", method: "tools/call", params: { name: "a" } });
    c.send({ id: 9, method: "ping" });
    await new Promise<void>((r) => setImmediate(r));
    expect(c.toSdk).toHaveLength(2);
    expect((c.toSdk[0] as { id: string }).id).toBe("x");
  });

  it("answers a thrown error as a JSON-RPC error, its code kept or -32603", async () => {
    const c = connection();
    await c.transport.start();
    const calls = takesInTurn(c.transport, 2);
    c.send({ id: 1, method: "tools/call", params: {} });
    c.send({ id: 2, method: "tools/call", params: {} });
    calls[0]!.reject(Object.assign(new Error("bad"), { code: -32602, data: { why: 1 } }));
    expect(await c.nextLine()).toBe('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":{"why":1}}}');
    calls[1]!.reject(new TypeError("boom"));
    expect(await c.nextLine()).toBe('{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}');
  });

  it("a cancelled call is stopped and never answered; the cancel does not reach the SDK", async () => {
    const c = connection();
    await c.transport.start();
    const calls = takesInTurn(c.transport, 2);
    c.send({ id: 1, method: "tools/call", params: {} });
    c.send({ method: "notifications/cancelled", params: { requestId: 1 } });
    c.send({ id: 2, method: "tools/call", params: {} });
    await new Promise<void>((r) => setImmediate(r));
    expect(calls[0]!.call.cancelled).toBe(1);
    calls[0]!.resolve({ content: [] });
    calls[1]!.resolve({ content: [] });
    expect(await c.nextLine()).toBe('{"result":{"content":[]},"jsonrpc":"2.0","id":2}');
    expect(c.written).toHaveLength(1);
    expect(c.toSdk).toEqual([]);
  });

  it("the end of the input stops every call in flight, unanswered", async () => {
    const c = connection();
    await c.transport.start();
    const taken = controlled();
    let closed = 0;
    c.transport.onclose = () => void closed++;
    c.transport.answerCallsWith(() => taken.call);
    c.send({ id: 1, method: "tools/call", params: {} });
    c.input.end();
    while (!closed) await new Promise<void>((r) => setImmediate(r));
    expect(taken.call.cancelled).toBe(1);
    taken.resolve({ content: [] });
    await taken.call.answer;
    await new Promise<void>((r) => setImmediate(r));
    expect(c.written).toEqual([]);
  });
});
