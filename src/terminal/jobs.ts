import { type FileHandle, open } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import type { EventBus } from "../platform/bus.js";
import type { Exit } from "../platform/supervisor.js";
import { AnsiStream } from "./ansi.js";
import { continuationBytes } from "./output-store.js";
import type { ManagedChild } from "../platform/supervisor.js";
import { plural } from "../core/text.js";

/** A command the terminal launched: its child, its output file and how it ended. */
export interface Launched {
  managed: ManagedChild;
  file: string;
  startedAt: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** startStamp of the output file, made just before the command: anything it changes has a ctime at or after it. */
  changesSince: number;
  /** Whether it was stopped because its output passed the file limit (the file holds the limit, no more). */
  outputLimitHit(): boolean;
}

declare module "../platform/bus.js" {
  interface BusEvents {
    /** A background job's output since the last event (escapes removed); `next` is the byte offset after it, for
     * terminal_output's `since`; `dropped` counts bytes left out of the stream (they are in the file). */
    "terminal.output": { job: string; data: string; next: number; dropped?: number };
    "terminal.exited": { job: string; exit_code: number | null; signal: string | null };
  }
}

/** A job's output is read from its file and sent this often: one event per job per tick at most. */
export const STREAM_TICK_MS = 200;
/** Bytes a job streams per second at most: about 400 lines, more than anyone reads live; the file has everything. */
export const STREAM_BYTES_PER_SECOND = 32 * 1024;
/** Unsent output beyond this is dropped from the stream (the oldest part), so a flood shows its latest lines, not a
 * backlog that grows for ever; a short burst below it arrives late but whole. */
export const STREAM_BACKLOG_BYTES = 4 * STREAM_BYTES_PER_SECOND;

export interface JobInfo {
  job: string;
  command: string;
  cwd: string;
  session: string;
  pid: number;
  started_at: string;
  running: boolean;
  exit_code: number | null;
  signal: string | null;
  output_file: string;
}

/** A background command (SPEC 11): its output streamed as terminal.output events, its end as terminal.exited. */
export class Job {
  private streamed = 0;
  private fh?: FileHandle;
  private timer?: NodeJS.Timeout;
  private reading: Promise<void> = Promise.resolve();
  private readonly decoder = new StringDecoder("utf8");
  private readonly ansi = new AnsiStream();
  private windowStart = 0;
  private windowBytes = 0;
  private exit?: Exit;
  /** Settles after terminal.exited went out. */
  readonly ended: Promise<void>;

  constructor(
    readonly id: string,
    readonly command: string,
    readonly cwd: string,
    readonly session: string,
    private readonly launched: Launched,
    private readonly bus: EventBus,
  ) {
    this.timer = setInterval(() => this.schedule(false), STREAM_TICK_MS);
    this.ended = launched.exited.then(async (exit) => {
      this.exit = exit;
      clearInterval(this.timer);
      this.schedule(true);
      await this.reading;
      await this.fh?.close().catch(() => undefined);
      this.fh = undefined;
      bus.emit("terminal.exited", { job: id, exit_code: exit.code, signal: exit.signal });
    });
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  get file(): string {
    return this.launched.file;
  }

  info(): JobInfo {
    return {
      job: this.id,
      command: this.command,
      cwd: this.cwd || ".",
      session: this.session,
      pid: this.launched.managed.pid,
      started_at: new Date(this.launched.startedAt).toISOString(),
      running: this.running,
      exit_code: this.exit?.code ?? null,
      signal: this.exit?.signal ?? null,
      output_file: this.file,
    };
  }

  /** "running", "exited N" or "killed by SIG". */
  status(): string {
    if (!this.exit) return "running";
    return this.exit.code !== null ? `exited ${this.exit.code}` : `killed by ${this.exit.signal}`;
  }

  /** SIGTERM to the job's tree (SIGKILL after the grace), and its end. */
  async kill(): Promise<Exit> {
    if (this.running) void this.launched.managed.stop();
    const exit = await this.launched.exited;
    await this.ended;
    return exit;
  }

  /** Stops streaming (daemon shutdown): nothing more is read or sent. */
  detach(): void {
    clearInterval(this.timer);
  }

  private schedule(final: boolean): void {
    this.reading = this.reading.then(() => this.read(final)).catch(() => undefined);
  }

  private async read(final: boolean): Promise<void> {
    this.fh ??= await open(this.file, "r");
    const { size } = await this.fh.stat();
    let available = size - this.streamed;
    if (available <= 0 && !final) return;
    const now = Date.now();
    if (now - this.windowStart >= 1000) [this.windowStart, this.windowBytes] = [now, 0];
    let dropped = 0;
    if (available > STREAM_BACKLOG_BYTES) {
      // At the end the last backlog's worth goes out at once; while running, a second's worth.
      dropped = available - (final ? STREAM_BACKLOG_BYTES : STREAM_BYTES_PER_SECOND);
      this.streamed += dropped;
      available -= dropped;
      this.decoder.end(); // what a character or escape began before the cut is gone
      this.ansi.reset();
    }
    const length = final ? available : Math.min(available, Math.max(0, STREAM_BYTES_PER_SECOND - this.windowBytes));
    if (length <= 0 && !dropped) return;
    const buf = Buffer.alloc(length);
    const { bytesRead } = length ? await this.fh.read(buf, 0, length, this.streamed) : { bytesRead: 0 };
    let chunk = buf.subarray(0, bytesRead);
    const skip = dropped ? continuationBytes(chunk) : 0;
    chunk = chunk.subarray(skip);
    this.streamed += bytesRead;
    this.windowBytes += bytesRead;
    let data = this.ansi.push(this.decoder.write(chunk));
    if (final) data += this.ansi.push(this.decoder.end()) + this.ansi.end();
    if (dropped) data = `[… ${plural(dropped + skip, "byte")} of output not streamed; terminal_output or output_file has them …]\n${data}`;
    if (!data && !dropped) return;
    this.bus.emit("terminal.output", { job: this.id, data, next: this.streamed, ...(dropped ? { dropped: dropped + skip } : {}) });
  }
}
