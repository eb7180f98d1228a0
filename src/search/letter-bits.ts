/**
 * A folder's name masks turned sideways (pure): per mask bit (a letter, digits, anything else: see fuzzy.ts' maskOf),
 * one bit per file saying whether its name holds it, 32 files a word. find_file's scan ANDs what a query needs over 32
 * names at a time instead of testing each name's mask (a million unpredictable branches a query), and its typo pass
 * counts each name's missing letters the same way. Word-major: a word's MASK_BITS rows side by side. The bits live in a
 * larger Int32Array (FolderRuns' blocks), from `base` on.
 */

/** Bits in a name mask: 26 letters, one for digits, one for anything else. */
export const MASK_BITS = 28;

/** The Int32s that the letter bits of `files` files take. */
export function letterBitsLength(files: number): number {
  return ((files + 31) >>> 5) * MASK_BITS;
}

/** Sets file `at`'s bits from its name's mask (its bits must be clear). */
export function setLetterBits(data: Int32Array, base: number, at: number, mask: number): void {
  const word = base + (at >>> 5) * MASK_BITS;
  const bit = 1 << (at & 31);
  for (let m = mask; m !== 0; m &= m - 1) data[word + lowestBit(m)] |= bit;
}

/** Clears the bits of files `from` to `size - 1`. */
export function clearLetterBitsFrom(data: Int32Array, base: number, from: number, size: number): void {
  const keep = lowBits(from & 31); // the bits below `from` in its word
  for (let w = from >>> 5; w << 5 < size; w++) {
    const word = base + w * MASK_BITS;
    const kept = w === from >>> 5 ? keep : 0;
    for (let l = 0; l < MASK_BITS; l++) data[word + l] &= kept;
  }
}

/** Which of word `w`'s files (of `size`) hold every bit of `need`: one bit per file. */
export function filesHolding(data: Int32Array, base: number, w: number, size: number, need: number): number {
  let files = wordFiles(w, size);
  const word = base + w * MASK_BITS;
  for (let m = need; m !== 0 && files !== 0; m &= m - 1) files &= data[word + lowestBit(m)];
  return files;
}

/**
 * Which of word `w`'s files (of `size`) lack at most one bit of each mask in `masks`, and lack one in at most one of
 * them, and lack none of a mask marked `whole`. One bit per file.
 */
export function filesOneBitShort(data: Int32Array, base: number, w: number, size: number, masks: readonly number[], whole: readonly boolean[]): number {
  const word = base + w * MASK_BITS;
  let rejected = 0;
  let shortOne = 0; // files lacking a bit of an earlier mask
  for (let k = 0; k < masks.length; k++) {
    let once = 0;
    let twice = 0;
    for (let m = masks[k]; m !== 0; m &= m - 1) {
      const absent = ~data[word + lowestBit(m)];
      twice |= once & absent;
      once |= absent;
    }
    rejected |= whole[k] ? once : twice | (once & shortOne);
    shortOne |= once;
  }
  return wordFiles(w, size) & ~rejected;
}

/** The files word `w` of a folder of `size` files holds: all 32 but in the last word. */
function wordFiles(w: number, size: number): number {
  const left = size - (w << 5);
  return left >= 32 ? -1 : lowBits(left);
}

/** A word's `n` lowest bits (n < 32). */
function lowBits(n: number): number {
  return n === 0 ? 0 : (-1 >>> (32 - n)) | 0;
}

/** The index of the lowest set bit of a non-zero `m`. */
export function lowestBit(m: number): number {
  return 31 - Math.clz32(m & -m);
}
