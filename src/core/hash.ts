import xxhash from "xxhash-wasm";
import { tagOfRange } from "./line-tags.js";
import { once } from "./once.js";

type Hasher = Awaited<ReturnType<typeof xxhash>>;
const hasher = once(() => xxhash());

/** Loads the WebAssembly XXH64 once; the daemon awaits this before it says `ready`. */
export async function initHash(): Promise<void> {
  await hasher();
}

function h(): Hasher {
  const loaded = hasher.value;
  if (!loaded) throw new Error("initHash() was not awaited");
  return loaded;
}

/** SPEC 4: XXH32(line bytes, seed 0) & 0xFFFF, four upper-case hex digits (the in-place XXH32 of line-tags.ts). */
export function tagOfBytes(bytes: Uint8Array): string {
  return tagOfRange(bytes, 0, bytes.length);
}

export function tagOf(line: string): string {
  return tagOfBytes(Buffer.from(line, "utf8"));
}

/** SPEC 4: XXH64(raw file bytes, seed 0), sixteen lower-case hex digits. */
export function fileHash(bytes: Uint8Array): string {
  return h().h64Raw(bytes, 0n).toString(16).padStart(16, "0");
}
