import { stat } from "node:fs/promises";
import path from "node:path";
import { OPERATION_MARKERS } from "../vfs/git-state.js";

/** A repository operation in progress that a new one should not start on top of. */
export async function operationInProgress(gitDir: string): Promise<string | null> {
  for (const [file, op] of OPERATION_MARKERS) {
    if (
      await stat(path.join(gitDir, file)).then(
        () => true,
        () => false,
      )
    )
      return op;
  }
  return null;
}
