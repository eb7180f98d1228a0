import type { Readable, Writable } from "node:stream";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import type { RenderedWindow } from "../../core/line-tags.js";
import { LineReader, LineWriter } from "../jsonl/framing.js";
import { WindowLiterals } from "../jsonl/json-text.js";

/** JSON-RPC's own codes for a line that is not JSON, and for JSON that is no JSON-RPC message. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;
/**
 * Texts handed to the SDK as a placeholder, waiting for their message to be written. A call whose answer is never sent
 * (cancelled) leaves one behind: past this many the oldest go.
 */
const MAX_DEFERRED = 1_000;
/** Starts every placeholder: a NUL cannot be in a rendered file window (a NUL in a file makes it binary, refused). */
const PLACEHOLDER = "\u0000tool-layer:text:";

/** A tools/call taken off the wire before the SDK sees it (McpAdapter.directCall): its answer, and how to stop it. */
export interface DirectCall {
  answer: Promise<unknown>;
  cancel(): void;
}

/** Answers the tools/call it can (undefined: the SDK takes this one). */
export type DirectCalls = (params: unknown) => DirectCall | undefined;

export interface McpStdioOptions {
  /** Called once the connection has ended (stdin closed, stdout closed, or close()); serveStdio owns `onclose`. */
  onEnd?: () => void;
  /** Sees every well-formed inbound message before the server does (the listen subscriptions are read off it). */
  peek?: (message: JSONRPCMessage) => void;
}

/**
 * MCP over stdio (one JSON-RPC message per line), on the daemon's own framing: a line that is not JSON is answered
 * -32700 and a message that is not JSON-RPC -32600 (the SDK's transport drops them silently), the server goes on;
 * writes wait for drain; a closed stdout is the end of the connection, not a crash.
 */
export class McpStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  private readonly writer: LineWriter;
  private closed = false;
  private readonly deferred = new Map<string, RenderedWindow>();
  private nextDeferred = 0;
  private readonly literals = new WindowLiterals();
  private direct?: DirectCalls;
  /** Direct calls in flight by request id: what a notifications/cancelled or the end of the connection stops. */
  private readonly directInFlight = new Map<string | number, DirectCall>();

  constructor(
    private readonly input: Readable,
    output: Writable,
    private readonly options: McpStdioOptions = {},
  ) {
    this.writer = new LineWriter(output, () => this.finish());
  }

  async start(): Promise<void> {
    new LineReader(
      this.input,
      (line) => this.receive(line),
      () => this.reject(null, PARSE_ERROR, "the line is too long"),
      () => this.finish(),
    );
  }

  /**
   * A file window's text, as a placeholder string the SDK can validate and pass along; when the message that carries it
   * is written, the placeholder is replaced by the window encoded straight from the file's bytes into a JSON literal
   * (the JSON-lines transport's fast path), which saves rendering, escaping and re-encoding the text.
   */
  deferText(window: RenderedWindow): string {
    const key = `${PLACEHOLDER}${++this.nextDeferred}`;
    this.deferred.set(key, window);
    if (this.deferred.size > MAX_DEFERRED) this.deferred.delete(this.deferred.keys().next().value!);
    return key;
  }

  /**
   * From now on, the tools/call requests `calls` accepts are answered by it without the SDK (set once a 2025
   * connection is initialized). The SDK spends most of a quick call's time on its own work: the message's JSON-RPC
   * kind found by three schema parses, the request and the result validated (and copied) by zod, an AbortController, a
   * queue; a read of a file window took 0.17 ms of CPU in MCP mode against 0.08 over JSON lines. `calls` takes only
   * requests that work cannot refuse (see directCall), and answers them as the SDK would: the same bytes.
   */
  answerCallsWith(calls: DirectCalls): void {
    this.direct = calls;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const text = (message as { result?: { content?: { text?: unknown }[] } }).result?.content?.[0]?.text;
    const window = typeof text === "string" ? this.deferred.get(text) : undefined;
    if (!window) return this.writer.write(message);
    this.deferred.delete(text as string);
    const line = JSON.stringify(message);
    const at = line.indexOf(JSON.stringify(text));
    const literal = this.literals.of(window);
    const head = line.slice(0, at);
    const tail = line.slice(at + JSON.stringify(text).length);
    if (literal) this.writer.writeFramed(literal, head, `${tail}\n`);
    else this.writer.writeLine(`${head}${JSON.stringify(window.toString())}${tail}`);
  }

  async close(): Promise<void> {
    await this.writer.idle();
    this.finish();
  }

  /** Resolves once every message so far has been handed to stdout. */
  idle(): Promise<void> {
    return this.writer.idle();
  }

  private receive(line: string): void {
    if (!line.trim()) return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (e) {
      return this.reject(null, PARSE_ERROR, `Parse error: ${(e as Error).message}`);
    }
    const m = message as Record<string, unknown>;
    const id = typeof m?.id === "string" || typeof m?.id === "number" ? m.id : null;
    const shaped =
      typeof m === "object" &&
      m !== null &&
      !Array.isArray(m) &&
      m.jsonrpc === "2.0" &&
      (typeof m.method === "string" || (id !== null && ("result" in m || "error" in m)));
    if (!shaped) return this.reject(id, INVALID_REQUEST, "Invalid Request: expected a JSON-RPC 2.0 request, notification or response object.");
    this.options.peek?.(m as unknown as JSONRPCMessage);
    if (this.direct && id !== null && m.method === "tools/call" && !this.directInFlight.has(id)) {
      const call = this.direct(m.params);
      if (call) return this.answerDirect(id, call);
    }
    if (m.method === "notifications/cancelled" && this.cancelDirect(m.params)) return;
    this.onmessage?.(m as unknown as JSONRPCMessage);
  }

  /** As the SDK's Protocol answers a request: the result, or the error thrown; nothing once cancelled. */
  private answerDirect(id: string | number, call: DirectCall): void {
    this.directInFlight.set(id, call);
    const stillAsked = () => this.directInFlight.get(id) === call && this.directInFlight.delete(id);
    call.answer.then(
      (result) => {
        if (stillAsked()) void this.send({ result, jsonrpc: "2.0", id } as JSONRPCMessage);
      },
      (error: { code?: unknown; message?: string; data?: unknown }) => {
        if (!stillAsked()) return;
        const code = Number.isSafeInteger(error?.code) ? (error.code as number) : INTERNAL_ERROR;
        const data = error?.data;
        this.writer.write({ jsonrpc: "2.0", id, error: { code, message: error?.message ?? "Internal error", ...(data !== undefined && { data }) } });
      },
    );
  }

  /** A notifications/cancelled naming a direct call: stopped, and never answered (MCP: a cancelled request is not). */
  private cancelDirect(params: unknown): boolean {
    const requestId = (params as { requestId?: unknown } | undefined)?.requestId;
    const call = typeof requestId === "string" || typeof requestId === "number" ? this.directInFlight.get(requestId) : undefined;
    if (!call) return false;
    this.directInFlight.delete(requestId as string | number);
    call.cancel();
    return true;
  }

  private reject(id: string | number | null, code: number, message: string): void {
    this.writer.write({ jsonrpc: "2.0", id, error: { code, message } });
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    for (const call of this.directInFlight.values()) call.cancel();
    this.directInFlight.clear();
    this.onclose?.();
    this.options.onEnd?.();
  }
}
