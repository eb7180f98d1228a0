import { z } from "zod";

/** The `auto_resolve` param of every operation that can stop on conflicts (SPEC 9), described for where it applies. */
export function autoResolveParam(where = "When it stops on conflicts") {
  return z
    .union([z.boolean(), z.literal("safe")])
    .optional()
    .describe(
      `${where}: true (default) settles every block that is safe to resolve (identical changes, one side changed, whitespace only, changes to different words) and completes the operation when nothing is left, unless a word merge settled something: then it stops before the next step (CONFLICT, the merged lines listed, nothing committed) for you to read them, and git_conflict_finalize goes on; "safe" does the same without word merges (they are right most of the time, not always: those blocks are left for you); false touches no block.`,
    );
}
