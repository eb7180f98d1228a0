import { z } from "zod";
import { backupText, backupWork, saveRef } from "../git/backup.js";
import { OPERATION_HOOKS, hooksText, plannedHooks } from "../git/hooks.js";
import { filesInTheWay, inTheWayText, refuseUntracked } from "../git/in-the-way.js";
import { trackedChanges } from "../git/integrate.js";
import { refParam } from "../git/params.js";
import { type GitStep, worktreeStep } from "../git/step.js";
import { requireBranchName, headInfo, resolveCommit, tryResolve } from "../git/refs.js";
import { git } from "../git/run.js";
import { list } from "../git/text.js";
import { ToolError } from "../errors.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, gitToolState } from "./git-step.js";

export const gitCheckoutTool = defineTool({
  id: "git_checkout",
  description:
    "Switches to a branch, tag or commit (a remote branch name creates the local tracking branch), or with create starts a new branch at HEAD. Local changes are carried over, and saved to a backup ref first; it refuses when they, or untracked files, would be overwritten. Ignored files (.env) that the target tracks are replaced, after being saved to the backup ref. Preview: the files that would change, the local changes carried, the ignored files replaced and the hooks that would run.",
  params: {
    ref: refParam().describe("Branch, tag or commit to switch to; with create, the new branch's name."),
    create: z.boolean().optional().describe("Create a new branch named ref at HEAD and switch to it."),
  },
  mutating: true,
  hints: { idempotent: true },
  state: gitToolState,
  async run({ ref, create }, call) {
    const ctx = gitStep(call);
    await ctx.repo.gitDir();
    const { head, branch } = await headInfo(ctx);
    if (create) return createBranch(ctx, ref, branch);

    const target = (await tryResolve(ctx, ref)) ?? (await remoteBranchTip(ctx, ref)) ?? (await resolveCommit(ctx, ref));
    const changing = head ? (await git(ctx, ["diff", "--name-only", "-z", head, target])).stdout.split("\0").filter(Boolean) : [];
    const dirty = await trackedChanges(ctx);
    const blocked = dirty.filter((p) => changing.includes(p));
    if (blocked.length) {
      throw new ToolError(
        "CONFLICT",
        `Switching to ${ref} would overwrite uncommitted changes in ${blocked.join(", ")}; commit them (git_commit) or stash them (git_stash push) first.`,
        { files: blocked },
      );
    }
    const way = await filesInTheWay(ctx, head, target);
    refuseUntracked(way, `switch to ${ref}`);
    // Commits only a detached HEAD points at are lost to every branch once we leave them.
    const orphan =
      head && !branch ? !(await git(ctx, ["for-each-ref", "--count=1", "--contains", head, "refs/heads", "refs/tags", "refs/remotes"])).stdout.trim() : false;
    const hooks = await plannedHooks(ctx, OPERATION_HOOKS.checkout);
    const summary = (done: boolean) =>
      [
        `${changing.length} file${changing.length === 1 ? "" : "s"} ${done ? "changed" : "would change"}`,
        list("local changes carried over", dirty),
        inTheWayText(way, done ? "were" : "would be"),
        orphan ? `the detached commit ${head!.slice(0, 7)} is on no branch: ${done ? "it was" : "it will be"} saved to a backup ref` : "",
        hooksText(hooks, done ? "ran" : "would run"),
      ]
        .filter(Boolean)
        .join("\n");
    const shown = { ref, files: changing, carried: dirty, overwritten: way.ignored, hooks };
    if (ctx.dryRun) return { ...shown, commit: target, from: branch ?? head, text: `would switch to ${ref} (${target.slice(0, 7)})\n${summary(false)}` };

    return worktreeStep(ctx, async (ctx) => {
      const backup =
        dirty.length || way.ignored.length
          ? await backupWork(ctx, "checkout", head, way.ignored)
          : orphan && head
            ? await saveRef(ctx, "checkout", head, "commit")
            : null;
      await git(ctx, ["checkout", "--quiet", ref, "--"]);
      const now = await headInfo(ctx);
      const text = [`switched to ${now.branch ?? `detached HEAD ${now.head?.slice(0, 7)}`}`, summary(true), backup ? backupText(backup) : ""]
        .filter(Boolean)
        .join("\n");
      return { ...shown, commit: now.head, branch: now.branch, backup, text };
    });
  },
});

/** A branch name only one remote has: `git checkout name` creates the local tracking branch from it. */
async function remoteBranchTip(ctx: GitStep, name: string): Promise<string | null> {
  const r = await git(ctx, ["for-each-ref", "--format=%(refname) %(objectname)", "refs/remotes/"]);
  const hits = r.stdout.split("\n").filter((l) => {
    const ref = l.split(" ")[0] ?? "";
    return ref.split("/").slice(3).join("/") === name;
  });
  return hits.length === 1 ? hits[0].split(" ")[1] : null;
}

async function createBranch(ctx: GitStep, name: string, from: string | null) {
  await requireBranchName(ctx, name, "ref");
  if (await tryResolve(ctx, `refs/heads/${name}`)) throw new ToolError("ALREADY_EXISTS", `A branch "${name}" already exists; git_checkout it without create.`);
  const hooks = await plannedHooks(ctx, OPERATION_HOOKS.checkout);
  const hooksLine = (verb: string) => (hooks.length ? `\n${hooksText(hooks, verb)}` : "");
  if (ctx.dryRun)
    return {
      ref: name,
      created: true,
      hooks,
      text: `would create branch ${name} at ${from ?? "HEAD"} and switch to it; files stay as they are${hooksLine("would run")}`,
    };
  return worktreeStep(ctx, async (ctx) => {
    await git(ctx, ["checkout", "--quiet", "-b", name]);
    return { ref: name, created: true, branch: name, hooks, text: `created branch ${name} at ${from ?? "HEAD"} and switched to it${hooksLine("ran")}` };
  });
}
