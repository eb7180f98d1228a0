import { z } from "zod";
import { ToolError } from "../errors.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, lineToolState } from "./git-step.js";

export const gitChangelistEditTool = defineTool({
  id: "git_changelist_edit",
  description:
    "Creates, renames, deletes or activates a changelist. Deleting a list moves its changes to default (which cannot be deleted or renamed); the active list is the one new changes join, and activating another keeps every existing change where it is.",
  params: {
    action: z.enum(["create", "rename", "delete", "activate"]).describe("What to do with the list `name`."),
    name: z.string().min(1).describe("The changelist to create, rename, delete or activate."),
    new_name: z.string().min(1).optional().describe("With rename: the new name."),
  },
  // Bookkeeping, so no approval gate; but it changes the lists persisted in .git/tool-layer/, so it is not read-only.
  mutating: false,
  hints: { read_only: false, destructive: false, idempotent: true },
  state: lineToolState,
  async run({ action, name, new_name }, call) {
    const ctx = gitStep(call);
    const lists = ctx.repo.changelists;
    await lists.ready();
    if (action === "rename" && new_name === undefined) throw new ToolError("INVALID_PARAMS", "new_name: required to rename a changelist.");
    if (action !== "rename" && new_name !== undefined) throw new ToolError("INVALID_PARAMS", `new_name: only for rename, not ${action}.`);
    if (action === "create") await lists.create(name);
    else if (action === "rename") await lists.rename(name, new_name!);
    else if (action === "delete") await lists.delete(name);
    else await lists.activate(ctx, name);
    const done = {
      create: `created changelist ${name}`,
      rename: `renamed changelist ${name} to ${new_name}`,
      delete: `deleted changelist ${name}; its changes are in default now`,
      activate: `changelist ${name} is active: new changes join it`,
    }[action];
    return {
      action,
      lists: lists.names(),
      active: lists.active,
      text: `${done}\nlists: ${lists
        .names()
        .map((n) => (n === lists.active ? `${n} (active)` : n))
        .join(", ")}`,
    };
  },
});
