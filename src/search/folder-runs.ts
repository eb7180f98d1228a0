import { clearLetterBitsFrom, letterBitsLength, setLetterBits } from "./letter-bits.js";

/**
 * Every folder's files for find_file's scan, in one Int32Array (pure): a block per folder holding, for `room` files,
 * their slots and name masks side by side, then their letter bits (letter-bits.ts). A million files in 44,000 typed
 * arrays of their own, each allocated somewhere in the heap, cost the scan cache misses on every folder (most of a
 * query's time at a million files); one buffer laid out in folder order is read front to back. A block that fills moves
 * to the end with twice the room, leaving garbage; pack() lays every block out again in folder order (the index packs
 * after its first listing, each block then no larger than its files, and whenever moved blocks left as much garbage as
 * there is data).
 */
export class FolderRuns {
  /** The blocks; read it afresh after a change (it is replaced when it grows). */
  data = new Int32Array(1 << 12);
  /** Per folder: where its block starts in `data`, and how many files it has and has room for. */
  private start = new Int32Array(256);
  private sizes = new Int32Array(256);
  private room = new Int32Array(256);
  private count = 0;
  private used = 0;
  private garbage = 0;

  /** A folder with no files yet; folders are numbered from 0 in the order they are added. */
  addFolder(): number {
    if (this.count === this.start.length) {
      this.start = grown(this.start, 2 * this.count);
      this.sizes = grown(this.sizes, 2 * this.count);
      this.room = grown(this.room, 2 * this.count);
    }
    const f = this.count++;
    this.start[f] = this.place(blockLength(INITIAL_ROOM));
    this.room[f] = INITIAL_ROOM;
    return f;
  }

  size(f: number): number {
    return this.sizes[f];
  }

  /** Where folder f's files begin in `data`: slot, name mask, slot, name mask... */
  filesAt(f: number): number {
    return this.start[f];
  }

  /** Where folder f's letter bits begin in `data`. */
  lettersAt(f: number): number {
    return this.start[f] + 2 * this.room[f];
  }

  slot(f: number, k: number): number {
    return this.data[this.start[f] + 2 * k];
  }

  append(f: number, slot: number, mask: number): void {
    if (this.sizes[f] === this.room[f]) this.move(f, 2 * this.room[f]);
    const at = this.sizes[f]++;
    this.data[this.start[f] + 2 * at] = slot;
    this.data[this.start[f] + 2 * at + 1] = mask;
    setLetterBits(this.data, this.lettersAt(f), at, mask);
  }

  /** Takes out folder f's k-th file; the files after it move down one. */
  removeAt(f: number, k: number): void {
    const data = this.data;
    const files = this.start[f];
    const size = this.sizes[f];
    data.copyWithin(files + 2 * k, files + 2 * k + 2, files + 2 * size);
    const letters = this.lettersAt(f);
    clearLetterBitsFrom(data, letters, k, size);
    this.sizes[f] = size - 1;
    for (let j = k; j < size - 1; j++) setLetterBits(data, letters, j, data[files + 2 * j + 1]);
  }

  /**
   * Lays every block out again in folder order, without garbage; `tight`: each with room for the files it has and no
   * more (the first listing's: the scan then reads fewer bytes between one folder's letter bits and the next's).
   */
  pack(tight = false): void {
    const rooms = tight ? this.sizes.map((n) => Math.max(n, 1)) : this.room;
    let live = 0;
    for (let f = 0; f < this.count; f++) live += blockLength(rooms[f]);
    const packed = new Int32Array(Math.max(1 << 12, live + (live >>> 2)));
    let at = 0;
    for (let f = 0; f < this.count; f++) {
      const from = this.start[f];
      const size = this.sizes[f];
      packed.set(this.data.subarray(from, from + 2 * size), at);
      const letters = from + 2 * this.room[f];
      packed.set(this.data.subarray(letters, letters + letterBitsLength(size)), at + 2 * rooms[f]);
      this.start[f] = at;
      at += blockLength(rooms[f]);
    }
    if (tight) this.room.set(rooms.subarray(0, this.count));
    this.data = packed;
    this.used = at;
    this.garbage = 0;
  }

  /** Moves folder f's block to the end with room for `room` files. */
  private move(f: number, room: number): void {
    const to = this.place(blockLength(room)); // may pack (moving f's block) or replace `data`
    const data = this.data;
    const from = this.start[f];
    const size = this.sizes[f];
    data.copyWithin(to, from, from + 2 * size);
    data.copyWithin(to + 2 * room, from + 2 * this.room[f], from + 2 * this.room[f] + letterBitsLength(size));
    this.garbage += blockLength(this.room[f]);
    this.start[f] = to;
    this.room[f] = room;
  }

  /** Room for `n` more Int32s at the end, all zero (`data` past `used` is never written but by a new block); returns where. */
  private place(n: number): number {
    if (this.used + n > this.data.length) {
      if (this.garbage >= this.used / 4) this.pack();
      if (this.used + n > this.data.length) this.data = grown(this.data, Math.max(2 * this.data.length, this.used + n));
    }
    const at = this.used;
    this.used += n;
    return at;
  }
}

const INITIAL_ROOM = 4;

function blockLength(room: number): number {
  return 2 * room + letterBitsLength(room);
}

function grown(a: Int32Array, n: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(n);
  b.set(a.subarray(0, Math.min(a.length, n)));
  return b;
}
