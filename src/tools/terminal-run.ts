import { z } from "zod";
import { ToolError } from "../errors.js";
import { ChangeCollector, type ChangedFile } from "../terminal/changes.js";
import type { IgnoredChanges } from "../terminal/ignored-changes.js";
import { DEFAULT_COMMAND_TIMEOUT_MS, MAX_TIMEOUT_MS, type RunOutcome } from "../terminal/terminal.js";
import { defineTool } from "../dispatch/tool.js";

/** After the command: the watcher's delay and the pipeline's window, then cleanup; the rest of the call's bound. */
const SETTLE_ALLOWANCE_MS = 60_000;
/** Paths `text` names; the rest are counted (changed_files has them all up to its own bound). */
const TEXT_CHANGED_FILES = 20;

const noNul = (s: string) => !s.includes("\0");

export const terminalRunTool = defineTool({
  id: "terminal_run",
  description: [
    "Runs a bash command line in the workspace, in a sandbox, and returns its exit code and output (stdout and stderr together, in order, at most 30,000 characters as head and tail; the whole output is in output_file) with the files it created, modified or deleted.",
    "For builds, tests, installs, git-free inspection (ls, grep, cat): file content must change through file_write, so a command that writes a file from the shell (`>`/`>>` into a file, tee FILE, sed -i, perl -i, dd of=, truncate, also inside bash -c, $( ), functions or wrappers) is refused with SHELL_WRITE_REFUSED, as is a line that does not parse; `2>&1`, `> /dev/null` and the private /tmp are fine, as are cp, mv, compilers, package managers and test runners.",
    "The sandbox: the system read-only, the workspace writable except its .git folders, an empty HOME, a private /tmp, no network unless the daemon allows it, no stdin unless given, no secrets in the environment.",
    "A non-zero exit is a success with that exit_code; a timeout (default 120 s, at most 600 s) kills the command's whole tree and is a success with timed_out:true.",
    "background:true starts a long-running process (a dev server, a watcher) and answers at once with a job id; terminal_output reads its output, terminal_kill stops it.",
  ].join(" "),
  params: {
    command: z.string().min(1).refine(noNul, "contains a NUL byte").describe("The bash command line, e.g. `npm test 2>&1 | tail -20`."),
    cwd: z.string().optional().describe("Working folder, relative to the root (default: the root)."),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .max(MAX_TIMEOUT_MS)
      .optional()
      .describe(`Kill the command after this long (default ${DEFAULT_COMMAND_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS}); not for background jobs.`),
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a variable name"), z.string().refine(noNul, "contains a NUL byte"))
      .optional()
      .describe("Variables set for the command, on top of the sandbox's environment."),
    stdin: z.string().optional().describe("Text given to the command on stdin (default: none, so a command that reads stdin sees its end at once)."),
    background: z.boolean().optional().describe("Start it as a background job and answer at once with its id."),
  },
  mutating: true,
  runsLong: true,
  timeoutMs: MAX_TIMEOUT_MS + SETTLE_ALLOWANCE_MS,
  state: ({ terminal }) => terminal.state(),
  async run(p, ctx) {
    if (p.background && p.timeout_ms !== undefined)
      throw new ToolError("INVALID_PARAMS", "timeout_ms: background jobs have no timeout; stop one with terminal_kill.");
    const terminal = ctx.services.terminal;
    const plan = await terminal.plan({ command: p.command, cwd: p.cwd, env: p.env, stdin: p.stdin });
    const sandbox = await terminal.sandboxPreview(plan);
    const timeoutMs = p.timeout_ms ?? DEFAULT_COMMAND_TIMEOUT_MS;
    const cwd = plan.cwdRel || ".";
    if (ctx.dryRun) {
      return {
        command: p.command,
        cwd,
        commands: plan.commands,
        verdict: "allowed",
        sandbox,
        background: !!p.background,
        timeout_ms: p.background ? null : timeoutMs,
        env: Object.keys(p.env ?? {}).sort(),
        stdin_chars: p.stdin?.length ?? 0,
        text: previewText(p.command, cwd, plan.commands, sandbox, p.background ? null : timeoutMs),
      };
    }
    if (p.background) {
      const job = await terminal.startJob(plan, p.command, ctx.sessionId);
      const { pid, output_file } = job.info();
      return {
        job: job.id,
        pid,
        output_file,
        sandboxed: plan.sandboxed,
        text: `started ${job.id} in ${cwd}${plan.sandboxed ? "" : " (unsandboxed)"}: its output comes as terminal.output events; terminal_output {job:"${job.id}"} reads it, terminal_kill stops it.`,
      };
    }
    // Attribution without the worktree lock: a ten-minute test run must not stop every file_write meanwhile. A tool's own
    // write still counts as that tool's (the VFS matches expected writes first); anything else that changes meanwhile
    // is this command's, as it would be under ctx.exclusive.
    const actor = { session: ctx.sessionId, tool: ctx.toolId };
    const changes = new ChangeCollector(ctx.ws.bus, actor).start();
    const startedAt = Date.now();
    try {
      // The settle (the watcher has delivered everything up to the command's end) runs beside the read of its output.
      const settle = () => ctx.ws.settle(startedAt);
      const r = await ctx.ws.attributeDuring(actor, () =>
        terminal.run(plan, { timeoutMs, signal: ctx.signal, label: `terminal: ${p.command.slice(0, 60)}`, afterEnd: settle }),
      );
      const changed = changes.result();
      const ignored = terminal.ignoredChanges(plan, r);
      return {
        exit_code: r.exit_code,
        signal: r.signal,
        timed_out: r.timed_out,
        duration_ms: r.duration_ms,
        output: r.output,
        truncated: r.truncated,
        output_file: r.output_file,
        output_bytes: r.output_bytes,
        ...(r.output_limit_hit ? { output_limit_hit: true } : {}),
        changed_files: changed.files,
        changed_files_total: changed.total,
        ...(ignored ? { ignored_changes: ignored } : {}),
        sandboxed: plan.sandboxed,
        text: resultText(r, timeoutMs, changed, plan.sandboxed, ignored),
      };
    } finally {
      changes.stop();
    }
  },
});

function previewText(command: string, cwd: string, commands: string[], sandbox: Record<string, unknown>, timeoutMs: number | null): string {
  const limits = sandbox.limits as { pids: number | false; memory_bytes: number | false };
  const held = [limits.pids ? `${limits.pids} processes` : "", limits.memory_bytes ? `${Math.round(limits.memory_bytes / 1024 ** 2)} MiB` : ""]
    .filter(Boolean)
    .join(", ");
  return [
    `would run in ${cwd}: ${command}`,
    `check: allowed (no write from the shell); commands: ${commands.join(" | ") || "none"}`,
    sandbox.mode === "off"
      ? "sandbox: off (--terminal-sandbox off): unsandboxed"
      : `sandbox: bwrap, network ${sandbox.network ? "on" : "off"}, limits ${held || "none"}`,
    timeoutMs === null ? "background job (no timeout)" : `timeout: ${timeoutMs} ms`,
    `argv: ${(sandbox.argv as string[]).map(quote).join(" ")}`,
  ].join("\n");
}

function resultText(r: RunOutcome, timeoutMs: number, changed: { files: ChangedFile[]; total: number }, sandboxed: boolean, ignored?: IgnoredChanges): string {
  const seconds = (r.duration_ms / 1000).toFixed(r.duration_ms < 10_000 ? 2 : 1);
  const status = r.timed_out
    ? `timed out after ${timeoutMs} ms: the command and everything it started were killed`
    : r.output_limit_hit
      ? "stopped: its output passed the output file's limit"
      : r.exit_code !== null
        ? `exit ${r.exit_code}`
        : `killed by ${r.signal}`;
  const lines = [r.output.replace(/\n$/, ""), `[${status} · ${seconds} s${sandboxed ? "" : " · unsandboxed"}]`];
  if (!r.output) lines.shift();
  if (changed.total) {
    const shown = changed.files.slice(0, TEXT_CHANGED_FILES).map((c) => `${c.kind} ${c.path}`);
    const more = changed.total - shown.length;
    lines.push(`changed: ${shown.join(", ")}${more > 0 ? ` (and ${more} more)` : ""}`);
  }
  if (ignored?.count) {
    // not_counted alone is not said: a big node_modules/ would be named after every command.
    const uncounted = ignored.not_counted ? `; not counted (too many files): ${ignored.not_counted.join(", ")}` : "";
    lines.push(
      `${ignored.count} change${ignored.count === 1 ? "" : "s"} under ignored paths, not in changed_files (${ignored.created} created, ${ignored.modified} modified, ${ignored.deleted} deleted)${uncounted}`,
    );
  }
  if (r.hint) lines.push(r.hint);
  return lines.join("\n");
}

function quote(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}
