import { closeSync, constants, openSync, writev } from "node:fs";
import { Socket } from "node:net";
import path from "node:path";

/**
 * A command's stdout and stderr (SPEC 11): one pipe for both, so they arrive in the order written, which the daemon
 * copies into the output file. With the file itself as stdout, `> /dev/stdout` reopens it through /proc/self/fd/1 with
 * O_TRUNC and wipes what was written before; a pipe reopened that way is the same pipe. Node gives a child socket
 * pairs, which /proc/self/fd cannot reopen at all (ENXIO: bash says "No such device or address"), so the pipe is a
 * FIFO in the output folder (outside every sandbox's view; a reopen through /proc/self/fd needs no path). Node cannot
 * make one, so `mkfifo` makes a few at a time, and each is used again once every writer of its last command is gone.
 */

/** FIFOs made at once: commands run a few at a time; a burst of more makes another batch. */
const FIFO_BATCH = 4;

export class FifoPool {
  private readonly free: string[] = [];
  private made = 0;
  private making?: Promise<void>;

  /** `folder`: where they go (made on first use); `mkfifo`: makes FIFOs at these paths. */
  constructor(
    private readonly folder: () => string,
    private readonly mkfifo: (paths: string[]) => Promise<void>,
  ) {}

  /** Makes the first batch now (the daemon's start), so the first command does not wait for mkfifo. */
  warm(log: (message: string) => void): void {
    if (!this.free.length) this.batch().catch((e: unknown) => log(`terminal: cannot make the output pipes: ${e instanceof Error ? e.message : String(e)}`));
  }

  async take(): Promise<string> {
    while (!this.free.length) await this.batch();
    return this.free.pop()!;
  }

  /** A FIFO whose writers are all gone (its reader saw the end): a fresh pipe for the next opener. */
  give(fifo: string): void {
    this.free.push(fifo);
  }

  private batch(): Promise<void> {
    this.making ??= (async () => {
      const dir = this.folder();
      const paths = Array.from({ length: FIFO_BATCH }, () => path.join(dir, `pipe-${++this.made}`));
      await this.mkfifo(paths);
      this.free.push(...paths);
    })().finally(() => (this.making = undefined));
    return this.making;
  }
}

/** The two ends of a FIFO: `writeFd` for the child (blocking writes), the read end as a stream for the daemon. */
export function openPipe(fifo: string): { readFd: number; writeFd: number } {
  // The read end first, without blocking (no writer yet); then the write end, which a reader lets open at once. Reading
  // starts only after: with no writer ever opened, a read would be the end.
  const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    return { readFd, writeFd: openSync(fifo, constants.O_WRONLY) };
  } catch (e) {
    closeSync(readFd);
    throw e;
  }
}

/**
 * Output waiting for the file at most: past it the pipe is not read until the write in flight is done, so the writer
 * waits. One write at a time keeps the file in order for the job streams that read it as it grows; what comes in
 * meanwhile goes out in the next one (writev), not a thread-pool trip per 64 KiB that the pipe hands over.
 */
const MAX_QUEUED_BYTES = 1024 * 1024;

/**
 * Copies what a command writes into its pipe to its output file, up to `maxBytes`; past that it reads on and drops it
 * (`onLimit` stops the command), so neither the disk nor the daemon's memory grows with a runaway writer.
 */
export class PipeCopy {
  private copied = 0;
  private over = false;
  private readonly socket: Socket;
  private readonly queue: Buffer[] = [];
  private queued = 0;
  private writing = false;
  private closed = false;
  private ended = false;
  private settle: (ended: boolean) => void = () => {};
  /**
   * Settles with everything written once the pipe is closed: true at its end (every writer gone, the command's
   * leftovers included; the FIFO can be used again), false after close().
   */
  readonly done: Promise<boolean>;

  constructor(
    readFd: number,
    private readonly fileFd: number,
    maxBytes: number,
    onLimit: () => void,
  ) {
    this.done = new Promise((resolve) => (this.settle = resolve));
    this.socket = new Socket({ fd: readFd, readable: true, writable: false });
    this.socket.on("data", (chunk: Buffer) => {
      const room = maxBytes - this.copied;
      if (chunk.length > room && !this.over) {
        this.over = true;
        onLimit();
      }
      if (room <= 0) return;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.copied += part.length;
      this.queue.push(part);
      this.queued += part.length;
      if (this.queued > MAX_QUEUED_BYTES) this.socket.pause();
      this.flush();
    });
    this.socket.on("error", () => this.socket.destroy());
    this.socket.on("end", () => {
      this.ended = true;
      this.socket.destroy();
    });
    this.socket.once("close", () => {
      this.closed = true;
      this.flush();
    });
  }

  private flush(): void {
    if (this.writing) return;
    if (!this.queue.length) {
      if (this.closed) this.settle(this.ended);
      return;
    }
    const buffers = this.queue.splice(0);
    this.queued = 0;
    this.writing = true;
    writev(this.fileFd, buffers, () => {
      // A failed write (the disk full) loses that part of the file; the command still runs to its end.
      this.writing = false;
      if (this.socket.isPaused() && !this.closed) this.socket.resume();
      this.flush();
    });
  }

  /** Bytes written to the file. */
  get bytes(): number {
    return this.copied;
  }

  /** Whether the output went past `maxBytes` (what came after is not in the file). */
  get limitHit(): boolean {
    return this.over;
  }

  /** Stops reading (the daemon's shutdown): writers left get EPIPE, `done` settles. */
  close(): void {
    this.socket.destroy();
  }
}
