/**
 * The matching forms of file names (lower-cased, separators alike) side by side in one byte buffer, a byte a character:
 * find_file's scan tests a million names per query, and a loop over bytes laid out in the order folders are scanned
 * beats a call into String.prototype.indexOf on a string somewhere in the heap per name. A name with a character past
 * Latin-1 is not copied in (`wide`): its string is tested instead. Pure.
 */
export class NameBytes {
  private bytes = new Uint8Array(1 << 16);
  private used = 0;
  /** Bytes of names cleared since the last compaction. */
  private garbage = 0;
  /** Per slot: where its name starts in `bytes`, and its length (WIDE: not in `bytes`). */
  private start = new Uint32Array(1024);
  private length = new Uint16Array(1024);

  /** Stores slot's name (its matching form); the slot's earlier name, if any, must have been cleared. */
  set(slot: number, lower: string): void {
    if (slot >= this.start.length) this.growSlots(slot + 1);
    if (lower.length >= WIDE || !isLatin1(lower)) {
      this.length[slot] = WIDE;
      return;
    }
    if (this.used + lower.length > this.bytes.length) this.makeRoom(lower.length);
    for (let k = 0; k < lower.length; k++) this.bytes[this.used + k] = lower.charCodeAt(k);
    this.start[slot] = this.used;
    this.length[slot] = lower.length;
    this.used += lower.length;
  }

  clear(slot: number): void {
    if (this.length[slot] !== WIDE) this.garbage += this.length[slot];
    this.length[slot] = 0;
  }

  wide(slot: number): boolean {
    return this.length[slot] === WIDE;
  }

  /** The bytes its buffers take. */
  get byteSize(): number {
    return this.bytes.byteLength + this.start.byteLength + this.length.byteLength;
  }

  /** Whether `term` (see encodeTerm) is in slot's name. */
  includes(slot: number, term: Uint8Array): boolean {
    const bytes = this.bytes;
    const from = this.start[slot];
    const last = from + this.length[slot] - term.length;
    outer: for (let at = from; at <= last; at++) {
      for (let k = 0; k < term.length; k++) if (bytes[at + k] !== term[k]) continue outer;
      return true;
    }
    return false;
  }

  /** Whether `term` from its letter `skip` on is a subsequence of slot's name. */
  subsequenceFrom(slot: number, term: Uint8Array, skip: number): boolean {
    const n = term.length;
    if (skip >= n) return true;
    const bytes = this.bytes;
    const end = this.start[slot] + this.length[slot];
    // one pass over the name, the letter looked for moving on at each match: one loop's branch, not a loop per letter
    let k = skip;
    let c = term[k];
    for (let at = this.start[slot]; at < end; at++)
      if (bytes[at] === c) {
        if (++k === n) return true;
        c = term[k];
      }
    return false;
  }

  /** typo.ts' dropsNeeded(term, name, 0) on slot's name: how many letters of `term` must go for it to be a subsequence (2: more than one). */
  dropsNeeded(slot: number, term: Uint8Array): 0 | 1 | 2 {
    const bytes = this.bytes;
    const n = term.length;
    const end = this.start[slot] + this.length[slot];
    let exact = 0;
    let dropped = 1; // dropping the first letter costs nothing in the name
    for (let i = this.start[slot]; i < end; i++) {
      if (end - i < n - dropped) return 2;
      const c = bytes[i];
      if (dropped < n && term[dropped] === c) dropped++;
      if (exact < n && term[exact] === c) {
        exact++;
        if (exact === n) return 0;
        if (exact + 1 > dropped) dropped = exact + 1; // drop the letter after the exact part
      }
    }
    return exact === n ? 0 : dropped >= n ? 1 : 2;
  }

  /** Room for `more` bytes: the live names packed to the front when clears left enough garbage, else a larger buffer. */
  private makeRoom(more: number): void {
    const live = this.used - this.garbage;
    const size = Math.max(this.bytes.length * (live + more > this.bytes.length / 2 ? 2 : 1), live + more);
    const packed = new Uint8Array(size);
    let used = 0;
    for (let slot = 0; slot < this.start.length; slot++) {
      const n = this.length[slot];
      if (n === 0 || n === WIDE) continue;
      packed.set(this.bytes.subarray(this.start[slot], this.start[slot] + n), used);
      this.start[slot] = used;
      used += n;
    }
    this.bytes = packed;
    this.used = used;
    this.garbage = 0;
  }

  private growSlots(atLeast: number): void {
    const n = Math.max(atLeast, this.start.length * 2);
    const start = new Uint32Array(n);
    start.set(this.start);
    const length = new Uint16Array(n);
    length.set(this.length);
    this.start = start;
    this.length = length;
  }
}

/** A name's length that marks it as not in the buffer (longer names are not either: no file name is). */
const WIDE = 0xffff;

/** A query term for NameBytes' tests: its bytes, or null when it has a character past Latin-1 (then its string is tested). */
export function encodeTerm(term: string): Uint8Array | null {
  if (!isLatin1(term)) return null;
  const out = new Uint8Array(term.length);
  for (let k = 0; k < term.length; k++) out[k] = term.charCodeAt(k);
  return out;
}

function isLatin1(text: string): boolean {
  for (let k = 0; k < text.length; k++) if (text.charCodeAt(k) > 0xff) return false;
  return true;
}
