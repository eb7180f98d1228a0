import xxhash from "xxhash-wasm";

type Hasher = Awaited<ReturnType<typeof xxhash>>;
let hasher: Hasher | undefined;

/** Loads the WebAssembly hasher once; the daemon awaits this before it says `ready`. */
export async function initHash(): Promise<void> {
  hasher ??= await xxhash();
}

function h(): Hasher {
  if (!hasher) throw new Error("initHash() was not awaited");
  return hasher;
}

/** SPEC 4: XXH32(line bytes, seed 0) & 0xFFFF, four upper-case hex digits. */
export function tagOfBytes(bytes: Uint8Array): string {
  return (h().h32Raw(bytes, 0) & 0xffff).toString(16).toUpperCase().padStart(4, "0");
}

export function tagOf(line: string): string {
  return tagOfBytes(Buffer.from(line, "utf8"));
}

/** SPEC 4: XXH64(raw file bytes, seed 0), sixteen lower-case hex digits. */
export function fileHash(bytes: Uint8Array): string {
  return h().h64Raw(bytes, 0n).toString(16).padStart(16, "0");
}
