import { operationInProgress } from "../git/operation-markers.js";
import { type Status, isClean, parseStatus } from "../git/status.js";
import { list } from "../git/text.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitStatusTool = defineTool({
  id: "git_status",
  description:
    "Shows the branch, its upstream (ahead/behind), and the staged, unstaged, untracked and conflicted files, plus any merge or rebase in progress. A submodule counts as changed when its HEAD moved; changes inside its own worktree are not examined (that would run its repository's configuration).",
  params: {},
  mutating: false,
  // Every git_status that comes while one runs is answered by it (a burst of 2,500 started 2,500 git processes).
  shareable: true,
  state: gitToolState,
  async run(_params, call) {
    const ctx = gitStep(call);
    // Every git call runs without optional locks: a status must not rewrite the index or block a commit beside it.
    const { ws } = call;
    const { out, cached } = await ctx.repo.status.status(ctx, {
      dirs: () => ctx.repo.location(),
      exclusive: (work) => ws.lock.exclusive(work),
      watching: () => ws.vfsState().ready === true,
      log: ws.log,
    });
    const gitDir = await ctx.repo.gitDir();
    const status = parseStatus(out);
    const operation = await operationInProgress(gitDir);
    return { ...status, operation, clean: isClean(status), ...(cached ? { cached: true } : {}), text: statusText(status, operation) };
  },
});

export function statusText(s: Status, operation: string | null): string {
  const where = s.branch ? `On ${s.branch}` : `HEAD detached at ${s.head?.slice(0, 7) ?? "(no commit)"}`;
  const up = s.upstream ? ` (upstream ${s.upstream}, ahead ${s.ahead ?? 0}, behind ${s.behind ?? 0})` : s.branch ? " (no upstream)" : "";
  const lines = [`${where}${up}${s.head ? "" : ", no commits yet"}`];
  if (operation) lines.push(`${operation} in progress`);
  const fmt = (e: { xy: string; path: string; from?: string }, side: 0 | 1) => `${e.xy[side]} ${e.from ? `${e.from} -> ` : ""}${e.path}`;
  for (const l of [
    list(
      "conflicted",
      s.conflicted.map((e) => `${e.xy} ${e.path}`),
    ),
    list(
      "staged",
      s.staged.map((e) => fmt(e, 0)),
    ),
    list(
      "unstaged",
      s.unstaged.map((e) => fmt(e, 1)),
    ),
    list("untracked", s.untracked),
  ])
    if (l) lines.push(l);
  if (isClean(s)) lines.push("working tree clean");
  return lines.join("\n");
}
