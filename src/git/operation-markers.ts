import { stat } from "node:fs/promises";
import path from "node:path";

/**
 * Files in the git dir whose presence means an operation is in progress, in the order git's own prompt checks them:
 * one table for the git tools (what a new operation must not start on top of) and the VFS (git.changed's `operation`).
 */
export const OPERATION_MARKERS: readonly (readonly [file: string, operation: string])[] = [
  ["rebase-merge", "rebase"],
  ["rebase-apply", "rebase"],
  ["MERGE_HEAD", "merge"],
  ["CHERRY_PICK_HEAD", "cherry-pick"],
  ["REVERT_HEAD", "revert"],
  ["BISECT_LOG", "bisect"],
];

/** A repository operation in progress that a new one should not start on top of. */
export async function operationInProgress(gitDir: string): Promise<string | null> {
  for (const [file, op] of OPERATION_MARKERS) {
    if (await stat(path.join(gitDir, file)).then(() => true, () => false)) return op;
  }
  return null;
}
