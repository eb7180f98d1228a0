/**
 * A file's three versions (SPEC 8: HEAD, the index, the worktree) and the three diffs between them, each computed once
 * on first use: status, word diff, staging and changelists of one state all share them.
 *
 * `worktreeCr` is the CR policy of the worktree side of the two diffs against it (see line-diff.ts): "ignore" when git
 * converts this path's line endings, so a CRLF worktree over an LF index is not a change, as `git diff` shows it; HEAD
 * and the index are compared as they are (git's own form, so a CRLF git holds is still a change there, as to git).
 */
import { type CrPolicy, type LineDiff, LineIds, type LineSeq, diffLines } from "./line-diff.js";

export const EMPTY: LineSeq = { lines: [], eols: [] };

export class FileVersions {
  private hw?: LineDiff;
  private iw?: LineDiff;
  private hi?: LineDiff;
  private interned = false;

  constructor(
    readonly head: LineSeq,
    readonly index: LineSeq,
    readonly worktree: LineSeq,
    readonly worktreeCr: CrPolicy = "exact",
    /** Pass the table of the file's earlier versions to hash only what is new (see LineIds). */
    readonly ids: LineIds = new LineIds(),
  ) {}

  /** Hashes each version once, each against the one it was most likely edited from (see LineIds.of). */
  private hashed(): LineIds {
    if (!this.interned) {
      this.ids.of(this.head);
      this.ids.of(this.index, this.head);
      this.ids.of(this.worktree, this.index);
      this.interned = true;
    }
    return this.ids;
  }

  /** The same HEAD and index with another worktree: HEAD -> index and the hashed lines are reused. */
  withWorktree(worktree: LineSeq): FileVersions {
    const next = new FileVersions(this.head, this.index, worktree, this.worktreeCr, this.ids);
    next.hi = this.hi;
    return next;
  }

  /**
   * The same HEAD and worktree with another index (what staging leaves): HEAD -> worktree and its pairing are reused,
   * and HEAD -> the new index when the caller has it already.
   */
  withIndex(index: LineSeq, headToIndex?: LineDiff): FileVersions {
    const next = new FileVersions(this.head, index, this.worktree, this.worktreeCr, this.ids);
    next.hw = this.hw;
    next.hi = headToIndex;
    return next;
  }

  /** HEAD -> worktree: the ranges every tool numbers (`range` ids). */
  get headToWorktree(): LineDiff {
    return (this.hw ??= diffLines(this.head, this.worktree, { cr: this.worktreeCr, oldCr: "exact", ids: this.hashed() }));
  }

  /** Index -> worktree: what is not staged. (Pass the same LineSeq for an index equal to HEAD: one diff serves both.) */
  get indexToWorktree(): LineDiff {
    if (this.index === this.head) return this.headToWorktree;
    return (this.iw ??= diffLines(this.index, this.worktree, { cr: this.worktreeCr, oldCr: "exact", ids: this.hashed() }));
  }

  /** HEAD -> index: what is staged. */
  get headToIndex(): LineDiff {
    return (this.hi ??= diffLines(this.head, this.index, { ids: this.hashed() }));
  }
}
