import { remoteParam } from "../git/params.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "../git/hooks.js";
import { type GitStep, commitStep } from "../git/step.js";
import { defaultRemote, headInfo, requireRemote } from "../git/refs.js";
import { git } from "../git/run.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";
import { NETWORK_TIMEOUT_MS } from "../git/run.js";

export const gitFetchTool = defineTool({
  id: "git_fetch",
  description:
    "Downloads a remote's branches and tags and updates the remote-tracking branches (refs/remotes/…); local branches and files are not touched. Preview: what would be updated (fetch --dry-run).",
  params: {
    remote: remoteParam().optional().describe("Remote name (default: the current branch's upstream remote, else origin)."),
  },
  mutating: true,
  hints: { destructive: false, idempotent: true, open_world: true },
  timeoutMs: NETWORK_TIMEOUT_MS + 10_000,
  state: gitToolState,
  async run(params, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    const remote = params.remote ?? (await defaultRemote(ctx, (await headInfo(ctx)).branch));
    await requireRemote(ctx, remote);
    const hooks = await plannedHooks(ctx, OPERATION_HOOKS.fetch);
    const withHooks = (text: string, verb: string) => (hooks.length ? `${text}\n${hooksText(hooks, verb)}` : text);
    if (ctx.dryRun) {
      const r = await git(ctx, ["fetch", "--dry-run", "--no-recurse-submodules", "--end-of-options", remote], { timeoutMs: NETWORK_TIMEOUT_MS });
      // fetch reports on stderr, one line per ref: "   a1b2..c3d4  main  -> origin/main", " * [new branch] x -> origin/x".
      const lines = r.stderr
        .split("\n")
        .filter((l) => /->/.test(l))
        .map((l) => l.trim());
      return {
        remote,
        updates: lines,
        hooks,
        text: withHooks(
          lines.length ? `would update from ${remote}:\n${lines.map((l) => `  ${l}`).join("\n")}` : `${remote}: everything is up to date`,
          "would run",
        ),
      };
    }
    return commitStep(ctx, async (ctx) => {
      const before = await trackingRefs(ctx, remote);
      await git(ctx, ["fetch", "--no-recurse-submodules", "--end-of-options", remote], { timeoutMs: NETWORK_TIMEOUT_MS });
      const after = await trackingRefs(ctx, remote);
      const updates = [...new Set([...before.keys(), ...after.keys()])]
        .filter((ref) => before.get(ref) !== after.get(ref))
        .map((ref) => ({ ref, old: before.get(ref) ?? null, new: after.get(ref) ?? null }));
      const text = updates.length
        ? `fetched from ${remote}:\n${updates.map((u) => `  ${u.ref}: ${u.old?.slice(0, 7) ?? "(new)"} -> ${u.new?.slice(0, 7) ?? "(gone)"}`).join("\n")}`
        : `${remote}: everything was up to date`;
      return { remote, updates, hooks, text: withHooks(text, "ran") };
    });
  },
});

async function trackingRefs(ctx: GitStep, remote: string): Promise<Map<string, string>> {
  const r = await git(ctx, ["for-each-ref", "--format=%(refname:short) %(objectname)", `refs/remotes/${remote}/`, "refs/tags/"]);
  return new Map(
    r.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(" ") as [string, string]),
  );
}
