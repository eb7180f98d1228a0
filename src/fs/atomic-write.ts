import { randomBytes } from "node:crypto";
import { mkdir, open, rename, unlink } from "node:fs/promises";
import path from "node:path";

/**
 * Temp files are `.NAME.tl-RANDOM.tmp` beside the target: the same folder keeps the rename atomic (one file system),
 * and the fixed shape lets the watcher ignore them.
 */
export const TEMP_FILE_PATTERN = /(^|\/)\.[^/]*\.tl-[0-9a-f]{12}\.tmp$/;

/** Mode a new file gets before the umask, like any editor's `open(O_CREAT, 0666)`. */
const NEW_FILE_MODE = 0o666;

function tempPathFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.tl-${randomBytes(6).toString("hex")}.tmp`);
}

/**
 * Replaces `target` (a real path, never a symlink) with `data` so that no reader ever sees a half-written file:
 * write a temp file in the same folder, fsync it, then rename it over the target. `mode` keeps an existing file's
 * permission bits; without it the file is new and its parent folders are created.
 */
export async function atomicWrite(target: string, data: Uint8Array, mode?: number): Promise<void> {
  if (mode === undefined) await mkdir(path.dirname(target), { recursive: true });
  const temp = tempPathFor(target);
  const handle = await open(temp, "wx", mode ?? NEW_FILE_MODE);
  let renamed = false;
  try {
    try {
      await handle.writeFile(data);
      // open() applies the umask; an existing file's bits are restored exactly.
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
    renamed = true;
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
}

/** Permission bits of a stat's mode, the part a rewrite keeps. */
export const permissionBits = (mode: number) => mode & 0o7777;
