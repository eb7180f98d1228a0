/**
 * The symlinks git tracks, read from the index file itself (git's index-format.txt: versions 2, 3 and 4, SHA-1 or
 * SHA-256). `git ls-files --stage` says the same, but prints 7 MB on 100,000 files where the listing prints 2 MB, which
 * cost the daemon 15-30 MB of RSS and a few hundred ms before ready; the index is a few MB read once. Pure: bytes in.
 */

/** git's mode for a symlink (S_IFLNK). */
const LINK_MODE = 0o120000;
/** Modes an index entry may have: file, executable, symlink, submodule, and a sparse index's folder. */
const KNOWN_MODES = new Set([0o100644, 0o100755, LINK_MODE, 0o160000, 0o040000]);
/** ctime, mtime, dev, ino, mode, uid, gid, size: the fixed fields before the object name. */
const STAT_BYTES = 40;
const MODE_OFFSET = 24;
/** Name lengths of this or more are not stored in the flags; the name runs to its NUL. */
const NAME_MASK = 0xfff;
const EXTENDED_FLAG = 0x4000;
/** Object name sizes: SHA-1, SHA-256. Nothing in the file says which; the one whose parse ends exactly is right. */
const HASH_SIZES = [20, 32];

/**
 * Root-relative paths of the tracked symlinks, or null when the index is not one this reads (a split index, whose
 * entries live partly in another file, or anything unexpected): the caller then asks git.
 */
export function trackedSymlinks(index: Buffer): string[] | null {
  if (index.length < 12 || index.toString("latin1", 0, 4) !== "DIRC") return null;
  const version = index.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  for (const hashSize of HASH_SIZES) {
    const links = parse(index, version, index.readUInt32BE(8), hashSize);
    if (links) return links;
  }
  return null;
}

function parse(index: Buffer, version: number, count: number, hashSize: number): string[] | null {
  const links: string[] = [];
  const end = index.length - hashSize; // the trailing checksum
  let at = 12;
  // Version 4 names are the previous name cut by N bytes plus a new suffix: the name is kept as bytes.
  let name = Buffer.alloc(256);
  let nameLength = 0;
  for (let i = 0; i < count; i++) {
    const fixed = STAT_BYTES + hashSize + 2;
    if (at + fixed > end) return null;
    const mode = index.readUInt32BE(at + MODE_OFFSET);
    if (!KNOWN_MODES.has(mode)) return null;
    const flags = index.readUInt16BE(at + STAT_BYTES + hashSize);
    let nameAt = at + fixed;
    if (flags & EXTENDED_FLAG) {
      if (version < 3) return null;
      nameAt += 2;
    }
    if (version === 4) {
      let c = index[nameAt++];
      let strip = c & 127;
      while (c & 128) {
        if (nameAt >= end) return null;
        c = index[nameAt++];
        strip = ((strip + 1) << 7) + (c & 127);
      }
      const nul = index.indexOf(0, nameAt);
      if (nul < 0 || nul >= end || strip > nameLength) return null;
      nameLength -= strip;
      const suffix = nul - nameAt;
      if (nameLength + suffix > name.length) name = Buffer.concat([name.subarray(0, nameLength), Buffer.alloc(nameLength + suffix)]);
      index.copy(name, nameLength, nameAt, nul);
      nameLength += suffix;
      if (mode === LINK_MODE) links.push(name.toString("utf8", 0, nameLength));
      at = nul + 1;
    } else {
      let length = flags & NAME_MASK;
      if (length === NAME_MASK) length = index.indexOf(0, nameAt + NAME_MASK) - nameAt;
      if (length < 0 || nameAt + length >= end || index[nameAt + length] !== 0) return null;
      if (mode === LINK_MODE) links.push(index.toString("utf8", nameAt, nameAt + length));
      at += (nameAt - at + length + 8) & ~7; // padded with 1-8 NULs to a multiple of 8
    }
  }
  // Extensions, each a 4-byte signature and a 4-byte size, up to the checksum; "link" is a split index.
  while (at < end) {
    if (at + 8 > end) return null;
    if (index.toString("latin1", at, at + 4) === "link") return null;
    at += 8 + index.readUInt32BE(at + 4);
  }
  return at === end ? links : null;
}
