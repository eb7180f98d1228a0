import { closeSync, constants, openSync, write } from "node:fs";
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
 * Copies what a command writes into its pipe to its output file, up to `maxBytes`; past that it reads on and drops it
 * (`onLimit` stops the command), so neither the disk nor the daemon's memory grows with a runaway writer: one chunk is
 * in flight at a time, the pipe holds back the writer meanwhile.
 */
export class PipeCopy {
  private copied = 0;
  private over = false;
  private readonly socket: Socket;
  /**
   * Settles with everything written once the pipe is closed: true at its end (every writer gone, the command's
   * leftovers included; the FIFO can be used again), false after close().
   */
  readonly done: Promise<boolean>;

  constructor(readFd: number, fileFd: number, maxBytes: number, onLimit: () => void) {
    this.socket = new Socket({ fd: readFd, readable: true, writable: false });
    let writing: Promise<void> = Promise.resolve();
    this.socket.on("data", (chunk: Buffer) => {
      const room = maxBytes - this.copied;
      if (chunk.length > room && !this.over) {
        this.over = true;
        onLimit();
      }
      if (room <= 0) return;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.copied += part.length;
      this.socket.pause();
      writing = new Promise((resolve) => write(fileFd, part, () => {
        // A failed write (the disk full) loses that part of the file; the command still runs to its end.
        this.socket.resume();
        resolve();
      }));
    });
    let ended = false;
    this.done = new Promise<boolean>((resolve) => {
      this.socket.once("close", () => void writing.then(() => resolve(ended)));
      this.socket.on("error", () => this.socket.destroy());
      this.socket.on("end", () => {
        ended = true;
        this.socket.destroy();
      });
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
