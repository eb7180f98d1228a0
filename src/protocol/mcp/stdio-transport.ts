import type { Readable, Writable } from "node:stream";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import type { RenderedWindow } from "../../core/line-tags.js";
import { LineReader, LineWriter } from "../jsonl/framing.js";
import { WindowLiterals } from "../jsonl/json-text.js";

/** JSON-RPC's own codes for a line that is not JSON, and for JSON that is no JSON-RPC message. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
/**
 * Texts handed to the SDK as a placeholder, waiting for their message to be written. A call whose answer is never sent
 * (cancelled) leaves one behind: past this many the oldest go.
 */
const MAX_DEFERRED = 1_000;
/** Starts every placeholder: a NUL cannot be in a rendered file window (a NUL in a file makes it binary, refused). */
const PLACEHOLDER = "\u0000tool-layer:text:";

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
    this.onmessage?.(m as unknown as JSONRPCMessage);
  }

  private reject(id: string | number | null, code: number, message: string): void {
    this.writer.write({ jsonrpc: "2.0", id, error: { code, message } });
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
    this.options.onEnd?.();
  }
}
