import { appendFile, mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { isNodeError } from "../errors.js";

/**
 * Appends `pattern` (after `comment`) to an exclude file unless a line already says it; false when one did. A missing
 * file is created; one that cannot be read for another reason throws, and nothing is written over it.
 */
export async function addExcludeLine(file: string, pattern: string, comment: string): Promise<boolean> {
  const text = await readFile(file, "utf8").catch((e: unknown) => {
    if (isNodeError(e, "ENOENT")) return "";
    throw e;
  });
  if (text.split("\n").some((l) => l.trim() === pattern)) return false;
  await mkdir(path.dirname(file), { recursive: true });
  await appendFile(file, `${text && !text.endsWith("\n") ? "\n" : ""}${comment}\n${pattern}\n`);
  return true;
}
