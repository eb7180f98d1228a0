import type { GitStep } from "../git/step.js";
import { runSandboxed } from "../terminal/terminal.js";
import type { Workspace } from "../workspace.js";
import type { ToolContext } from "../dispatch/tool.js";

/** The one place a tool call becomes the git library's step context: the root's repository and the call's steps. */
export function gitStep(ctx: ToolContext): GitStep {
  const { ws } = ctx;
  return {
    repo: ws.git,
    files: ws.files,
    runArgv: (req) => runSandboxed(ws, req),
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
export const gitToolState = (ws: Workspace) => ws.git.state();

/** The line tools' `info`: git's state and the changelists. */
export const lineToolState = (ws: Workspace) => ws.git.lineState();
