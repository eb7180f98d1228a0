import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { ToolError, isNodeError } from "../errors.js";

/** The custom checks file at the workspace root. */
export const CHECKS_FILE = ".tool-layer.json";
/** A check with no timeout_ms of its own: long enough for a test suite, short enough that a hung one does not hold a commit forever. */
export const DEFAULT_CHECK_TIMEOUT_MS = 120_000;
/** Output kept per check in a result: the tail, where test runners and linters print their verdict. */
export const CHECK_OUTPUT_CHARS = 4000;

const checkSchema = z.strictObject({
  name: z.string().min(1),
  command: z.array(z.string()).min(1),
  on: z.array(z.enum(["commit", "push"])).default([]),
  timeout_ms: z.number().int().positive().optional(),
});
const fileSchema = z.looseObject({ checks: z.array(checkSchema).default([]) });

export type Check = z.output<typeof checkSchema>;

export interface CheckResult {
  name: string;
  command: string[];
  ok: boolean;
  exit_code: number | null;
  timed_out: boolean;
  output: string;
}

export async function loadChecks(root: string): Promise<Check[]> {
  let raw: string;
  try {
    raw = await readFile(path.join(root, CHECKS_FILE), "utf8");
  } catch (e) {
    if (isNodeError(e, "ENOENT")) return [];
    throw e;
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    throw new ToolError("CHECK_FAILED", `${CHECKS_FILE} is not valid JSON (${(e as Error).message}); fix it so the checks can run.`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new ToolError("CHECK_FAILED", `${CHECKS_FILE} is malformed (${why}); each check is {name, command: string[], on: ["commit"|"push"], timeout_ms?}.`);
  }
  return parsed.data.checks;
}

/** A check's run as the terminal runs an argv (SPEC 11), and what it answers. */
export type CheckRunner = (req: {
  argv: string[];
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
}) => Promise<{ exit_code: number | null; timed_out: boolean; output: string }>;

/** What running checks needs of a call: the root (its checks file), the terminal's runner and the call's signal. */
export interface CheckCtx {
  repo: { root: string };
  runArgv: CheckRunner;
  signal?: AbortSignal;
}

/**
 * Runs one check through the terminal's runner (SPEC 11): a check is a program the workspace names, so it runs as a
 * terminal command does, in the sandbox (workspace writable, its git dirs read-only, no network, no secrets), with the
 * same timeout and process ownership.
 */
export async function runCheck(ctx: CheckCtx, check: Check): Promise<CheckResult> {
  const r = await ctx.runArgv({ argv: check.command, env: { CI: "1" }, timeoutMs: check.timeout_ms ?? DEFAULT_CHECK_TIMEOUT_MS, signal: ctx.signal });
  ctx.signal?.throwIfAborted();
  return {
    name: check.name,
    command: check.command,
    ok: r.exit_code === 0 && !r.timed_out,
    exit_code: r.exit_code,
    timed_out: r.timed_out,
    output: tail(r.output.trim()),
  };
}

function tail(s: string): string {
  return s.length > CHECK_OUTPUT_CHARS ? `…${s.slice(-CHECK_OUTPUT_CHARS)}` : s;
}

export interface CheckFilter {
  on?: "commit" | "push";
  name?: string;
}

/** A check as a preview lists it: what would run, exactly, instead of running it (SPEC 2, 12). */
export interface PlannedCheck {
  name: string;
  command: string[];
  timeout_ms: number;
}

/** The checks declared for `on` (or the named one), in the order they run. */
export async function selectChecks(root: string, filter: CheckFilter): Promise<Check[]> {
  return (await loadChecks(root)).filter((c) => (filter.name ? c.name === filter.name : filter.on ? c.on.includes(filter.on) : true));
}

export async function plannedChecks(root: string, filter: CheckFilter): Promise<PlannedCheck[]> {
  return (await selectChecks(root, filter)).map((c) => ({ name: c.name, command: c.command, timeout_ms: c.timeout_ms ?? DEFAULT_CHECK_TIMEOUT_MS }));
}

export function plannedChecksText(checks: PlannedCheck[]): string {
  return checks.map((c) => `check ${c.name} would run: ${c.command.map(quoteArg).join(" ")}`).join("\n");
}

/** Shell-style quoting for display only: nothing is ever run through a shell. */
export function quoteArg(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

/** Runs every check declared for `on` (or the named one); one after another, since checks often share build outputs. */
export async function runChecks(ctx: CheckCtx, filter: CheckFilter): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const c of await selectChecks(ctx.repo.root, filter)) results.push(await runCheck(ctx, c));
  return results;
}

export function checksText(results: CheckResult[]): string {
  return results
    .map(
      (r) =>
        `check ${r.name}: ${r.ok ? "passed" : r.timed_out ? "timed out" : `failed (exit ${r.exit_code})`}${r.ok || !r.output ? "" : `\n${indent(r.output)}`}`,
    )
    .join("\n");
}

function indent(s: string): string {
  return s
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
}

/** Throws CHECK_FAILED with every failing check's output under its name, or returns the (passing) results. */
export async function enforceChecks(ctx: CheckCtx, on: "commit" | "push", what: string): Promise<CheckResult[]> {
  const results = await runChecks(ctx, { on });
  const failed = results.filter((r) => !r.ok);
  if (failed.length) {
    throw new ToolError(
      "CHECK_FAILED",
      `The ${what} is blocked by failing check${failed.length > 1 ? "s" : ""} ${failed.map((f) => f.name).join(", ")} from ${CHECKS_FILE}; fix what they report, then try again.\n${checksText(failed)}`,
      { checks: results },
    );
  }
  return results;
}
