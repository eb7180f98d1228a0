import { StringDecoder } from "node:string_decoder";
import type { Readable, Writable } from "node:stream";
import type { JsonText } from "./json-text.js";

const CLOSE_RESULT = Buffer.from("}}\n");

/** A request line longer than this is answered PARSE_ERROR instead of growing memory without bound. */
export const MAX_LINE_CHARS = 64 * 1024 * 1024;

/**
 * Splits a byte stream into lines: `\n`-terminated, a trailing `\r` and a leading UTF-8 BOM stripped (both are what a
 * Windows-made line carries), a last unterminated line kept. pause()/resume() stop and restart reading (backpressure).
 */
export class LineReader {
  private buffer = "";
  private overflowed = false;
  private readonly decoder = new StringDecoder("utf8");

  constructor(
    private readonly input: Readable,
    private readonly onLine: (line: string) => void,
    private readonly onOverflow: () => void,
    onEnd: () => void,
  ) {
    input.on("data", (chunk: Buffer | string) => this.push(typeof chunk === "string" ? chunk : this.decoder.write(chunk)));
    input.on("end", () => {
      this.push(this.decoder.end());
      if (this.buffer.length && !this.overflowed) this.emit(this.buffer);
      this.buffer = "";
      onEnd();
    });
    input.on("error", () => onEnd());
  }

  pause(): void {
    this.input.pause();
  }

  resume(): void {
    this.input.resume();
  }

  private push(text: string): void {
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      const piece = text.slice(start, nl);
      start = nl + 1;
      if (this.overflowed) {
        this.overflowed = false; // the oversized line ends here; it was already answered
        this.buffer = "";
        continue;
      }
      const line = this.buffer + piece;
      this.buffer = "";
      this.emit(line);
    }
    if (this.overflowed) return;
    this.buffer += text.slice(start);
    if (this.buffer.length > MAX_LINE_CHARS) {
      this.buffer = "";
      this.overflowed = true;
      this.onOverflow();
    }
  }

  private emit(line: string): void {
    let l = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (l.charCodeAt(0) === 0xfeff) l = l.slice(1);
    this.onLine(l);
  }
}

/** Most bytes handed to the stream in one batch: past it the rest waits for the next batch (drain, if it is full). */
export const MAX_BATCH_BYTES = 256 * 1024;

/**
 * Writes whole JSON lines in order and waits for `drain`, so a slow reader never makes the stream buffer without bound.
 * `pendingBytes` is what waits here; the transport stops reading requests while it is large (backpressure). A write
 * error (EPIPE: the reader closed stdout) is reported once through `onClosed` and every later line is dropped.
 * With `batchTurns` (the JSON-lines transport), the first line of a turn of the event loop leaves at once and the
 * others of that turn together once its callbacks are done (process.nextTick), as one corked batch: one writev for the
 * answers of the requests one chunk of input brought, which wakes the reader once or twice instead of once per answer.
 * writeNow (events) hands the line and everything before it over at once, so a blocked stream is known at once, as
 * the held events need. Without it (MCP mode, where holding the answers measured slower) every line leaves at once.
 */
export class LineWriter {
  private readonly queue: (string | Buffer)[] = [];
  private flushScheduled = false;
  private blocked = false;
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  /** Bytes queued here, not yet handed to the stream (strings counted by length: close enough for a bound). */
  pendingBytes = 0;

  constructor(
    private readonly output: Writable,
    private readonly onClosed: (error: Error) => void = () => undefined,
    /** Hold a turn's lines after its first for one writev at its end (the JSON-lines transport; see the class). */
    private readonly batchTurns = false,
  ) {
    output.on("drain", () => this.flush());
    output.on("error", (e) => this.close(e));
    output.on("close", () => this.close(new Error("the output stream closed")));
  }

  /** True while the stream refuses more (a line is waiting for drain). */
  get isBlocked(): boolean {
    return this.blocked;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  write(message: unknown): void {
    this.push(JSON.stringify(message) + "\n");
  }

  /** A line handed to the stream now, after whatever waits for this turn's batch (not if the stream is blocked). */
  writeNow(message: unknown): void {
    this.push(JSON.stringify(message) + "\n", true);
  }

  /** A successful call's answer; a JsonText `text` is spliced in as its bytes, as the result's last field. */
  writeResult(callId: string | number, result: Record<string, unknown>, text?: JsonText): void {
    if (!text) return this.write({ call_id: callId, success: true, result });
    const head = JSON.stringify({ call_id: callId, success: true, result }).slice(0, -2); // without "}}"
    this.writeFramed(text, `${head}${head.endsWith("{") ? "" : ","}"text":`, CLOSE_RESULT);
  }

  /** A JSON line built by the caller (without its `\n`). */
  writeLine(line: string): void {
    this.push(`${line}\n`);
  }

  /**
   * head + a pre-encoded JSON literal + tail (which ends the line) as one line: three pieces queued together (one
   * writev), the literal's bytes never copied nor written into, as other answers may be sending the same literal.
   */
  writeFramed(literal: JsonText, head: string, tail: string | Buffer): void {
    if (this.closed) return;
    this.queue.push(head, literal.literal);
    this.pendingBytes += head.length + literal.literal.length;
    this.push(tail);
  }

  /**
   * Resolves when everything written so far has left the stream (or the stream is gone): a `write` that says yes only
   * says its buffer has room, and on a pipe the bytes may still wait there (a process exit then loses them).
   */
  async idle(): Promise<void> {
    if (!this.closed && (this.queue.length || this.blocked)) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    if (this.closed || !this.output.writableLength) return;
    await new Promise<void>((resolve) => this.output.write("", () => resolve())); // called once the chunks before it are out
  }

  /** Resolves at the next drain (or close): for a caller that waits for room. */
  drained(): Promise<void> {
    if (this.closed || !this.blocked) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private push(line: string | Buffer, now = false): void {
    if (this.closed) return;
    this.queue.push(line);
    this.pendingBytes += line.length;
    if (this.blocked) return;
    if (!this.batchTurns || now) return this.flush();
    // The turn's first line goes at once, so the reader can start on it; the rest of the turn waits for its end.
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    process.nextTick(() => {
      this.flushScheduled = false;
      if (!this.blocked) this.flush();
    });
    this.flush();
  }

  /**
   * Hands the queued lines to the stream in corked batches of up to MAX_BATCH_BYTES (one writev each), until the queue
   * is empty or the stream says it is full; then waits for drain. The stream holds at most one batch past its mark.
   */
  private flush(): void {
    this.blocked = false;
    while (this.queue.length && !this.closed) {
      let bytes = 0;
      let n = 0;
      while (n < this.queue.length && (n === 0 || bytes + this.queue[n].length <= MAX_BATCH_BYTES)) bytes += this.queue[n++].length;
      const batch = this.queue.splice(0, n);
      this.pendingBytes -= bytes;
      let room = true;
      if (n > 1) this.output.cork();
      for (const line of batch) room = this.output.write(line);
      if (n > 1) this.output.uncork();
      if (!room) {
        this.blocked = !this.closed;
        if (this.blocked) return;
      }
    }
    this.wake();
  }

  private close(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.pendingBytes = 0;
    this.wake();
    this.onClosed(error);
  }

  private wake(): void {
    for (const w of this.drainWaiters.splice(0)) w();
    if (this.queue.length && !this.closed) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }
}
