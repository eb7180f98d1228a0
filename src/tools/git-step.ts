import type { GitStep } from "../git/step.js";
import type { Services } from "../dispatch/services.js";
import type { ToolContext } from "../dispatch/tool.js";

/** The one place a tool call becomes the git library's step context: the root's repository and the call's steps. */
export function gitStep(ctx: ToolContext): GitStep {
  const { git, files, terminal } = ctx.services;
  return {
    repo: git,
    files,
    runArgv: (req) => terminal.runArgv(req),
    signal: ctx.signal,
    dryRun: ctx.dryRun,
    sessionId: ctx.sessionId,
    toolId: ctx.toolId,
    commit: ctx.commit,
    exclusive: ctx.exclusive,
    lockFile: ctx.lockFile,
  };
}

/** What every git tool reports in `info`: git's version and whether the root is a repository. */
export const gitToolState = (services: Services) => services.git.state();

/** The line tools' `info`: git's state and the changelists. */
export const lineToolState = (services: Services) => services.git.lineState();
