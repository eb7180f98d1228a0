import { StringDecoder } from "node:string_decoder";
import type { Readable, Writable } from "node:stream";
import { JsonText } from "./json-text.js";

const CLOSE_RESULT = Buffer.from("}}\n");

/** A request line longer than this is answered PARSE_ERROR instead of growing memory without bound. */
export const MAX_LINE_CHARS = 64 * 1024 * 1024;

/** Splits a byte stream into lines: `\n`-terminated, a trailing `\r` stripped, a last unterminated line kept. */
export class LineReader {
  private buffer = "";
  private overflowed = false;
  private readonly decoder = new StringDecoder("utf8");

  constructor(
    input: Readable,
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
    this.onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
  }
}

/** Writes whole JSON lines in order; waits for `drain` so a slow reader never makes us buffer without bound in the stream. */
export class LineWriter {
  private readonly queue: (string | Buffer)[] = [];
  private blocked = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly output: Writable) {
    output.on("drain", () => this.flush());
  }

  write(message: unknown): void {
    this.push(JSON.stringify(message) + "\n");
  }

  /** A successful call's answer; a JsonText `text` is spliced in as its bytes, as the result's last field. */
  writeResult(callId: string | number, result: Record<string, unknown>): void {
    const { text } = result;
    if (!(text instanceof JsonText)) return this.write({ call_id: callId, success: true, result });
    const rest = { ...result };
    delete rest.text;
    const head = JSON.stringify({ call_id: callId, success: true, result: rest }).slice(0, -2); // without "}}"
    this.push(text.frame(`${head}${head.endsWith("{") ? "" : ","}"text":`, CLOSE_RESULT));
  }

  private push(line: string | Buffer): void {
    this.queue.push(line);
    if (!this.blocked) this.flush();
  }

  /** Resolves when everything written so far has been handed to the stream. */
  idle(): Promise<void> {
    if (!this.queue.length && !this.blocked) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private flush(): void {
    this.blocked = false;
    while (this.queue.length) {
      const line = this.queue.shift()!;
      if (!this.output.write(line)) {
        this.blocked = true;
        return;
      }
    }
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
