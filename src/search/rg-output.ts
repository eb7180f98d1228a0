/**
 * Reading ripgrep's standard output (pure: bytes in, records out). Not `--json`: rg ignores `--max-columns` in JSON mode
 * and writes every matching line whole with one entry per submatch, so a 12 MB line of `a` searched for `a` became a
 * 650 MB JSON line (a string node cannot hold: the daemon died in readline). In the standard format rg cuts a long line
 * itself (`--max-columns` with `--max-columns-preview`), and this reader bounds every line it keeps anyway.
 *
 * With `--null --line-number --byte-offset --with-filename`, a record is `PATH\0LINE:OFFSET:TEXT` for a matching line
 * and `PATH\0LINE-OFFSET-TEXT` for a context line, TEXT being the line's first RG_PREVIEW_BYTES bytes (and a marker when
 * rg cut it). Lines without a NUL are rg's own notes (`--` between context groups, "binary file matches ...").
 */

/** rg shows at most this many bytes of a line (`--max-columns`); longer lines end with LONG_LINE_MARKER instead. */
export const RG_PREVIEW_BYTES = 256;
/** What rg appends to a line it cut (with `--max-columns-preview` and without `--column`). */
export const LONG_LINE_MARKER = Buffer.from(" [... omitted end of long line]");
/**
 * A line of rg's output longer than this is cut by the reader: a record is a path (at most PATH_MAX, 4096), two numbers
 * and RG_PREVIEW_BYTES plus the marker, so only something unexpected comes near it; whatever it is, it is never held whole.
 */
export const MAX_RECORD_BYTES = 16 * 1024;

/** One matched or context line as rg reported it. */
export interface RgRecord {
  /** The path as rg printed it (relative to the search's cwd, `./` kept): raw bytes, for opening the file. */
  pathBytes: Buffer;
  line: number;
  /** Byte offset of the line's start in what rg searched (after a UTF-8 BOM, which rg strips). */
  offset: number;
  match: boolean;
  /** The start of the line as rg saw it (up to RG_PREVIEW_BYTES, terminator removed); `cut` when rg cut it there. */
  head: Buffer;
  cut: boolean;
}

/**
 * Splits a byte stream into lines of at most `maxBytes`: a longer line is delivered as its first `maxBytes` with
 * `overlong`, and the rest of it is skipped up to its newline. Memory stays bounded whatever the stream holds.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private skipping = false;

  constructor(
    private readonly onLine: (line: Buffer, overlong: boolean) => void,
    private readonly maxBytes = MAX_RECORD_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      const nl = chunk.indexOf(10, at);
      const end = nl < 0 ? chunk.length : nl;
      if (!this.skipping) this.keep(chunk.subarray(at, end));
      if (nl < 0) return;
      this.flush();
      at = nl + 1;
    }
  }

  /** The stream ended: a last line without a newline is delivered too. */
  end(): void {
    if (this.pendingBytes > 0 || this.skipping) this.flush();
  }

  private keep(part: Buffer): void {
    const room = this.maxBytes - this.pendingBytes;
    if (part.length <= room) {
      if (part.length) this.pending.push(Buffer.from(part)); // a copy: the chunk's memory is not pinned by a short line
      this.pendingBytes += part.length;
      return;
    }
    this.pending.push(Buffer.from(part.subarray(0, room)));
    this.pendingBytes += room;
    this.skipping = true;
    this.onLine(Buffer.concat(this.pending), true);
    this.pending = [];
    this.pendingBytes = 0;
  }

  private flush(): void {
    if (this.skipping) this.skipping = false;
    else this.onLine(this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending), false);
    this.pending = [];
    this.pendingBytes = 0;
  }
}

/** Parses one line of rg's output; undefined for its notes and for anything cut (a record is never near the bound). */
export function parseRecord(line: Buffer): RgRecord | undefined {
  const nul = line.indexOf(0);
  if (nul < 0) return undefined;
  let at = nul + 1;
  const lineNumber = digits(line, at);
  if (!lineNumber) return undefined;
  at = lineNumber.end;
  const sep = line[at];
  if (sep !== 58 && sep !== 45) return undefined; // `:` a match, `-` a context line
  const offset = digits(line, at + 1);
  if (!offset || line[offset.end] !== sep) return undefined;
  let head = line.subarray(offset.end + 1);
  const cut = endsWith(head, LONG_LINE_MARKER) && head.length - LONG_LINE_MARKER.length >= RG_PREVIEW_BYTES - 4;
  if (cut) head = head.subarray(0, head.length - LONG_LINE_MARKER.length);
  else if (head.length && head[head.length - 1] === 13) head = head.subarray(0, head.length - 1); // CRLF: rg keeps the \r
  return { pathBytes: line.subarray(0, nul), line: lineNumber.value, offset: offset.value, match: sep === 58, head, cut };
}

function digits(buf: Buffer, from: number): { value: number; end: number } | undefined {
  let value = 0;
  let at = from;
  while (at < buf.length && buf[at] >= 48 && buf[at] <= 57 && at - from < 16) value = value * 10 + (buf[at++] - 48);
  return at > from ? { value, end: at } : undefined;
}

function endsWith(buf: Buffer, tail: Buffer): boolean {
  return buf.length >= tail.length && buf.subarray(buf.length - tail.length).equals(tail);
}

/** rg names paths as given: the root is searched as `./`, which results do not show. */
export function shownPath(pathBytes: Buffer): string {
  const path = pathBytes.toString("utf8");
  return path.startsWith("./") ? path.slice(2) : path;
}
