import { git } from "../git/run.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitBranchTool = defineTool({
  id: "git_branch",
  description: "Lists local and remote-tracking branches with the current one marked, each branch's upstream and how far ahead or behind it is.",
  params: {},
  mutating: false,
  state: gitToolState,
  async run(_params, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    const fmt = "%(HEAD)%00%(refname)%00%(refname:short)%00%(objectname:short)%00%(upstream:short)%00%(upstream:track,nobracket)%00%(contents:subject)";
    const r = await git(ctx, ["for-each-ref", `--format=${fmt}`, "refs/heads", "refs/remotes"]);
    const branches = r.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [head, ref, name, commit, upstream, track, subject] = line.split("\0");
        return { name, remote: ref.startsWith("refs/remotes/"), current: head === "*", commit, upstream: upstream || null, track: track || null, subject };
      })
      .filter((b) => !(b.remote && b.name.endsWith("/HEAD")));
    const text = branches.length
      ? branches
          .map((b) => `${b.current ? "*" : " "} ${b.name} ${b.commit}${b.upstream ? ` [${b.upstream}${b.track ? `: ${b.track}` : ""}]` : ""} ${b.subject}`)
          .join("\n")
      : "no branches yet (no commits)";
    return { current: branches.find((b) => b.current)?.name ?? null, branches, text };
  },
});
