import { z } from "zod";
import { ToolError, isNodeError } from "../errors.js";
import { commitStep } from "../git/step.js";
import type { Workspace } from "../workspace.js";
import { defineTool } from "../dispatch/tool.js";

/** gh talks to the network: two minutes, then it is killed. */
export const GH_TIMEOUT_MS = 120_000;
/** Output kept in `text`: gh's JSON listings can be long. */
const GH_TEXT_CHARS = 40_000;

/** gh must never prompt, page, colour or nag about updates (on top of the workspace environment). */
const GH_ENV = { GH_PROMPT_DISABLED: "1", GH_NO_UPDATE_NOTIFIER: "1", GH_PAGER: "cat", NO_COLOR: "1" };

function runGh(ws: Workspace, args: string[], opts: { signal?: AbortSignal; timeoutMs: number }) {
  return ws.processes.run({ cmd: "gh", args, cwd: ws.root, env: GH_ENV, label: "gh" }, opts);
}

export const ghTool = defineTool({
  id: "gh",
  description:
    'Runs the GitHub CLI (`gh`) with the given arguments in the workspace, e.g. ["pr", "list"] or ["issue", "view", "12"]. It can change things on GitHub, so it is a dry run unless approved. Preview: the command line.',
  params: {
    args: z
      .array(z.string().refine((a) => !a.includes("\0"), "no NUL bytes"))
      .min(1)
      .describe("Arguments after `gh`, one per element."),
  },
  mutating: true,
  hints: { open_world: true },
  timeoutMs: GH_TIMEOUT_MS + 5_000,
  state: async ({ workspace: ws }) => {
    const version = await runGh(ws, ["--version"], { timeoutMs: 10_000 }).catch(() => null);
    if (version?.code !== 0) return { available: false, installed: false, reason: "gh (GitHub CLI) is not installed; apt-get install gh" };
    const auth = await runGh(ws, ["auth", "status"], { timeoutMs: 15_000 }).catch(() => null);
    return { available: true, installed: true, version: version.stdout.split("\n")[0].trim(), logged_in: auth?.code === 0 };
  },
  async run({ args }, ctx) {
    const command = ["gh", ...args];
    const line = command.map(quote).join(" ");
    const probe = await runGh(ctx.ws, ["--version"], { signal: ctx.signal, timeoutMs: 10_000 }).catch((e) => {
      if (isNodeError(e, "ENOENT"))
        throw new ToolError("TOOL_MISSING", "The GitHub CLI (gh) is not installed; install it (Debian: apt-get install gh) and log in with `gh auth login`.");
      throw e;
    });
    if (probe.code !== 0) throw new ToolError("TOOL_MISSING", `gh does not run: ${probe.stderr.trim()}`);
    if (ctx.dryRun) return { command, text: `would run: ${line}` };
    const r = await commitStep(ctx, (ctx) => runGh(ctx.ws, args, { signal: ctx.signal, timeoutMs: GH_TIMEOUT_MS }));
    if (r.timedOut) throw new ToolError("TIMEOUT", `${line} did not finish within ${GH_TIMEOUT_MS} ms and was killed.`);
    if (r.code !== 0) {
      throw new ToolError("GH_FAILED", `${line} failed (exit ${r.code}): ${(r.stderr || r.stdout).trim().slice(-4000)}`, {
        exit_code: r.code,
        stdout: r.stdout.slice(-4000),
        stderr: r.stderr.slice(-4000),
      });
    }
    const out =
      r.stdout.length > GH_TEXT_CHARS
        ? `${r.stdout.slice(0, GH_TEXT_CHARS)}\n… [output cut at ${GH_TEXT_CHARS} characters; narrow the command, e.g. --limit or --json fields]`
        : r.stdout;
    return { command, exit_code: r.code, stdout: r.stdout, stderr: r.stderr, text: out.trimEnd() || `${line}: done` };
  },
});

function quote(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}
