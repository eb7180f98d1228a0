import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { type FileHandle, open, readdir, rm, stat, unlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pidAlive } from "../platform/pid-alive.js";
import { incompleteTailStart, stripAnsi } from "./ansi.js";
import { type Capped, MAX_OUTPUT_CHARS, capOutput } from "./output-cap.js";

/**
 * Where commands' whole output goes (SPEC 11 `output_file`): one folder per daemon in its state folder, outside the
 * workspace (so the watcher never sees it) and outside the sandbox's reach (HOME is empty in there). Removed when the
 * daemon stops; a SIGKILLed daemon's folder is swept by the next one.
 */

/** The newest this many output files are kept (SPEC 11); the files of running jobs are never removed. */
export const KEPT_FILES = 50;
/** And at most this much output over all of them: 50 files of a verbose build must not fill the disk. */
export const KEPT_BYTES = 1024 ** 3;
/** One command's output beyond this stops it: a runaway `yes` writes gigabytes a minute, and the file is on the user's disk. */
export const MAX_FILE_BYTES = 256 * 1024 ** 2;
/** Up to this the file is read whole for `output`; beyond it, only its two ends and a count of the newlines between. */
const WHOLE_READ_BYTES = 256 * 1024;
/** The ends read from a large file: more than MAX_OUTPUT_CHARS characters' worth of bytes. */
const END_READ_BYTES = 64 * 1024;
/** Read size when counting the newlines in the middle of a large file: memory stays flat whatever its size. */
const SCAN_CHUNK_BYTES = 1024 * 1024;
/** The lines cut are counted up to this size of the middle (tens of milliseconds); beyond it the note gives its size only. */
const COUNT_LINES_MAX_BYTES = 32 * 1024 * 1024;
/** Bytes of output a terminal_output call returns at most: once stripped, never more than MAX_OUTPUT_CHARS characters. */
export const PAGE_BYTES = MAX_OUTPUT_CHARS;

interface Entry {
  file: string;
  bytes: number;
  busy: boolean;
}

export class OutputStore {
  private dir?: string;
  private readonly entries: Entry[] = [];

  /** `stateDir`: the daemon's state folder; `root`: the workspace, which must not hold the files. */
  constructor(
    private readonly stateDir: string,
    private readonly root: string,
  ) {}

  /** The folder, made on first use: under `<stateDir>/terminal/`, or the system temp folder when that is unusable. */
  folder(): string {
    if (this.dir) return this.dir;
    const base = path.join(this.stateDir, "terminal");
    const rel = path.relative(this.root, base);
    const insideRoot = rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
    if (!insideRoot) {
      try {
        mkdirSync(base, { recursive: true, mode: 0o700 });
        // <pid>-<random>: two terminals of one process (a daemon's and a test's) never share a folder.
        this.dir = mkdtempSync(path.join(base, `${process.pid}-`));
        void sweep(base);
        return this.dir;
      } catch {
        /* a read-only or missing home: the temp folder below */
      }
    }
    this.dir = mkdtempSync(path.join(os.tmpdir(), `tool-layer-terminal-${process.pid}-`));
    return this.dir;
  }

  /** A new output file `<name>.log` opened for appending (the descriptor a command writes to); busy until done(). */
  create(name: string): { file: string; fd: number } {
    const file = path.join(this.folder(), `${name}.log`);
    const fd = openSync(file, "wx", 0o600);
    this.entries.push({ file, bytes: 0, busy: true });
    return { file, fd };
  }

  /** The command that wrote `file` has ended: the file may now be pruned with the older ones. */
  async done(file: string): Promise<void> {
    const e = this.entries.find((x) => x.file === file);
    if (!e) return;
    e.busy = false;
    e.bytes = (await stat(file).catch(() => null))?.size ?? 0;
    await this.prune();
  }

  /** Whether `file` is still kept. */
  kept(file: string): boolean {
    return this.entries.some((e) => e.file === file);
  }

  private async prune(): Promise<void> {
    let total = this.entries.reduce((n, e) => n + e.bytes, 0);
    const over = () => this.entries.length > KEPT_FILES || total > KEPT_BYTES;
    // Oldest first; the newest file always stays, whatever its size.
    for (let i = 0; i < this.entries.length - 1 && over(); ) {
      const e = this.entries[i];
      if (e.busy) {
        i++;
        continue;
      }
      this.entries.splice(i, 1);
      total -= e.bytes;
      await unlink(e.file).catch(() => undefined);
    }
  }

  dispose(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
    this.entries.length = 0;
  }
}

/** Removes the folders of daemons that are gone (named by their pid). */
async function sweep(base: string): Promise<void> {
  for (const name of await readdir(base).catch(() => [] as string[])) {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || pidAlive(pid)) continue;
    await rm(path.join(base, name), { recursive: true, force: true }).catch(() => undefined);
  }
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

/** Bytes at the start of `buf` that continue a character begun before it. */
export function continuationBytes(buf: Buffer): number {
  let i = 0;
  while (i < buf.length && i < 3 && (buf[i] & 0xc0) === 0x80) i++;
  return i;
}

/** How many bytes of `buf` hold whole characters: a character cut at the end is left for later. */
function completeLength(buf: Buffer): number {
  for (let back = 1; back <= Math.min(4, buf.length); back++) {
    const b = buf[buf.length - back];
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? buf.length - back : buf.length;
  }
  return buf.length;
}

/** Decodes up to the last complete character. */
function decodePrefix(buf: Buffer): { text: string; bytes: number } {
  const bytes = completeLength(buf);
  return { text: new TextDecoder().decode(buf.subarray(0, bytes)), bytes };
}

/** `output` of a finished command: its file's text, escapes removed, cut to `max` as head and tail. */
export async function readCapped(file: string, max = MAX_OUTPUT_CHARS): Promise<Capped & { bytes: number }> {
  const fh = await open(file, "r");
  try {
    const { size } = await fh.stat();
    if (size <= WHOLE_READ_BYTES) {
      const text = stripAnsi(new TextDecoder().decode(await readAt(fh, 0, size)));
      return { ...capOutput({ head: text, tail: "", gap: null }, max), bytes: size };
    }
    const headRaw = decodePrefix(await readAt(fh, 0, END_READ_BYTES)).text;
    const head = stripAnsi(headRaw.slice(0, incompleteTailStart(headRaw)));
    const tailBuf = await readAt(fh, size - END_READ_BYTES, END_READ_BYTES);
    const tail = stripAnsi(new TextDecoder().decode(tailBuf.subarray(continuationBytes(tailBuf))));
    const gapBytes = size - 2 * END_READ_BYTES;
    const lines = gapBytes <= COUNT_LINES_MAX_BYTES ? await countNewlines(fh, END_READ_BYTES, size - END_READ_BYTES) : null;
    return { ...capOutput({ head, tail, gap: { bytes: gapBytes, lines } }, max), bytes: size };
  } finally {
    await fh.close();
  }
}

async function countNewlines(fh: FileHandle, from: number, to: number): Promise<number> {
  const buf = Buffer.alloc(SCAN_CHUNK_BYTES);
  let lines = 0;
  for (let at = from; at < to; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, to - at), at);
    if (bytesRead === 0) break;
    for (let i = 0; i < bytesRead; i++) if (buf[i] === 10) lines++;
    at += bytesRead;
  }
  return lines;
}

export interface Page {
  /** The output from `since`, escapes removed. */
  data: string;
  /** Where the next page starts (a byte offset into the output): pass it as `since`. */
  next: number;
  /** The output's size so far, in bytes. */
  size: number;
}

/**
 * Up to PAGE_BYTES of output from byte offset `since`: whole characters and whole escape sequences only, so a page
 * boundary never shows half of either (the next page starts where this one stopped).
 */
export async function readPage(file: string, since: number): Promise<Page> {
  const fh = await open(file, "r");
  try {
    const { size } = await fh.stat();
    if (since >= size) return { data: "", next: Math.min(since, size), size };
    const buf = await readAt(fh, since, Math.min(PAGE_BYTES, size - since));
    const skip = since > 0 ? continuationBytes(buf) : 0;
    const atEnd = since + buf.length >= size;
    let { text, bytes } = atEnd ? { text: new TextDecoder().decode(buf.subarray(skip)), bytes: buf.length - skip } : decodePrefix(buf.subarray(skip));
    if (!atEnd) {
      const cut = incompleteTailStart(text);
      if (cut > 0 && cut < text.length) {
        bytes -= Buffer.byteLength(text.slice(cut));
        text = text.slice(0, cut);
      }
    }
    return { data: stripAnsi(text), next: since + skip + bytes, size };
  } finally {
    await fh.close();
  }
}

/** Closes a descriptor once the child has its own copy. */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* already closed */
  }
}
