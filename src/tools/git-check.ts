import { z } from "zod";
import { CHECKS_FILE, checksText, loadChecks, plannedChecks, plannedChecksText, runChecks } from "../git/checks.js";
import { ToolError } from "../errors.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep } from "./git-step.js";

export const gitCheckTool = defineTool({
  id: "git_check",
  description: `Runs the custom checks declared in ${CHECKS_FILE} (all, or the named one) and reports each one's result and output. The same checks run before commits and pushes. A check runs a program the workspace names, so this is a dry run unless approved. Preview: each check's exact command, nothing run.`,
  params: {
    name: z.string().min(1).optional().describe("Run only this check."),
  },
  mutating: true,
  timeoutMs: 1_800_000,
  state: async ({ workspace }) => {
    const checks = await loadChecks(workspace.root).catch((e: Error) => e);
    return checks instanceof Error
      ? { available: true, checks_file: "invalid", error: checks.message }
      : { available: true, checks: checks.map((c) => c.name) };
  },
  async run({ name }, call) {
    const ctx = gitStep(call);
    const declared = await loadChecks(ctx.repo.root);
    if (name && !declared.some((c) => c.name === name)) {
      throw new ToolError(
        "NOT_FOUND",
        `There is no check "${name}" in ${CHECKS_FILE}${declared.length ? ` (checks: ${declared.map((c) => c.name).join(", ")})` : ""}.`,
      );
    }
    if (ctx.dryRun) {
      const checks = await plannedChecks(ctx.repo.root, { name });
      return { checks, text: checks.length ? plannedChecksText(checks) : `no checks declared in ${CHECKS_FILE}` };
    }
    const checks = await runChecks(ctx, { name });
    const ok = checks.every((c) => c.ok);
    const text = checks.length ? `${ok ? "all checks passed" : "some checks FAILED"}\n${checksText(checks)}` : `no checks declared in ${CHECKS_FILE}`;
    return { ok, checks, text };
  },
});
