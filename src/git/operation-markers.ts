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
