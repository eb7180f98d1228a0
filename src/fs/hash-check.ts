import { capDiff, docDiff } from "../core/render.js";
import { parseText } from "../core/text.js";
import { MAX_TEXT_CHARS } from "../core/limits.js";
import { ToolError } from "../errors.js";
import type { ResolvedPath } from "../paths.js";
import type { RawFile } from "./read-text.js";

/**
 * Refuses a write or delete made against another version than the one on disk: HASH_MISMATCH with `current_hash`,
 * and a unified diff from the caller's version when the daemon still has it, so the edit can be redone without a re-read.
 */
export function checkHash(ws: { history: { get(hash: string): Buffer | undefined } }, target: ResolvedPath, expected: string, current: RawFile): void {
  const want = expected.toLowerCase();
  if (want === current.hash) return;
  const details: Record<string, unknown> = { current_hash: current.hash };
  const old = ws.history.get(want);
  if (old) {
    try {
      const capped = capDiff(docDiff(target.rel, parseText(old, target.rel), parseText(current.bytes, target.rel)).diff, MAX_TEXT_CHARS);
      details.diff = capped.diff;
      if (capped.truncated) details.diff_truncated = true;
    } catch (e) {
      // One side is not text (it became binary): the current hash alone must do.
      if (!(e instanceof ToolError)) throw e;
    }
  }
  const how =
    details.diff !== undefined
      ? "the diff from your version is in `diff`; redo your edit against the current tags"
      : "re-read it (file_read) and redo your edit";
  throw new ToolError("HASH_MISMATCH", `${target.rel} changed since the version you gave (hash ${want}); it is now ${current.hash}: ${how}.`, details);
}
