import { tagOfBytes } from "./hash.js";
import { hasBom } from "./text.js";

/**
 * Tags of lines `from..to-1` (0-based), hashed from the raw bytes: a window of a large file hashes only its own lines,
 * and no line is re-encoded. A `\r` before `\n` is part of the terminator, as SPEC 4 says.
 */
export function tagsInRange(bytes: Uint8Array, from: number, to: number): string[] {
  const tags: string[] = [];
  let start = hasBom(bytes) ? 3 : 0;
  for (let i = 0; i < to && start < bytes.length; i++) {
    let nl = bytes.indexOf(10, start);
    if (nl === -1) nl = bytes.length;
    if (i >= from) tags.push(tagOfBytes(bytes.subarray(start, nl > start && bytes[nl - 1] === 13 ? nl - 1 : nl)));
    start = nl + 1;
  }
  return tags;
}
