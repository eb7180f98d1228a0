import { ToolError } from "../errors.js";
import { hookPath } from "./hooks.js";
import type { GitCtx, RunResult } from "./run.js";

export interface PushRef {
  /** ` ` fast-forward, `+` forced, `-` deleted, `*` new, `!` rejected, `=` up to date. */
  flag: string;
  from: string;
  to: string;
  summary: string;
}

/** Parses `git push --porcelain` stdout. */
export function parsePushPorcelain(out: string): PushRef[] {
  return out.split("\n").flatMap((line) => {
    const m = /^([ +\-*!=])\t([^:]*):([^\t]*)\t(.*)$/.exec(line);
    return m ? [{ flag: m[1], from: m[2], to: m[3], summary: m[4] }] : [];
  });
}

/** Turns a failed push into the error a model can act on. */
export async function pushFailure(ctx: GitCtx, r: RunResult, refs: PushRef[], remote: string, hooksRan: boolean): Promise<ToolError> {
  const output = `${r.stdout}${r.stderr}`.trim().slice(-4000);
  const rejected = refs.find((x) => x.flag === "!");
  if (rejected) {
    if (/stale info/.test(rejected.summary)) {
      return new ToolError(
        "REJECTED",
        `The push was refused: ${remote} changed since your last fetch, so the force-with-lease did not hold. Run git_fetch and look at what arrived (git_log) before deciding to force again.`,
        { ref: rejected.to, output },
      );
    }
    if (/non-fast-forward|fetch first/.test(rejected.summary)) {
      return new ToolError(
        "REJECTED",
        `The push was refused as a non-fast-forward: ${remote} has commits you do not have. Pull first (git_pull), resolve any conflicts, then push again.`,
        { ref: rejected.to, output },
      );
    }
    return new ToolError("REJECTED", `${remote} refused the push of ${rejected.to}: ${rejected.summary}.`, { ref: rejected.to, output });
  }
  // The pre-push hook runs after git reached the remote: a `fatal:` (no connection, no repository) is never the hook's doing.
  if (hooksRan && !refs.length && !/^fatal:/m.test(r.stderr) && (await hookPath(ctx, "pre-push"))) {
    return new ToolError("HOOK_FAILED", `The pre-push hook refused the push; nothing was pushed. Fix what it reports, then push again.\n${output}`, {
      hook: "pre-push",
      output,
    });
  }
  return new ToolError("GIT_FAILED", `git push to ${remote} failed (exit ${r.code}): ${output}`, { exit_code: r.code, output });
}
