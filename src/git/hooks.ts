import { access, constants } from "node:fs/promises";
import path from "node:path";
import { git, type GitCtx } from "./run.js";

/** The path of a hook if it exists and is executable (git ignores the others); core.hooksPath respected. */
export async function hookPath(ctx: GitCtx, name: string): Promise<string | null> {
  const r = await git(ctx, ["rev-parse", "--git-path", `hooks/${name}`]);
  const p = path.resolve(ctx.ws.root, r.stdout.trim());
  return access(p, constants.X_OK).then(() => p, () => null);
}

/** A hook run for a preview gets as long as a check: hooks often run linters or tests. */
export const HOOK_TIMEOUT_MS = 120_000;

export interface HookResult {
  hook: string;
  ok: boolean;
  exit_code: number | null;
  output: string;
}

/** Runs a hook as git would (`git hook run`); null when the repository has no such hook. */
export async function runHook(ctx: GitCtx, name: string, args: string[] = []): Promise<HookResult | null> {
  if (!(await hookPath(ctx, name))) return null;
  const r = await git(ctx, ["hook", "run", "--ignore-missing", name, ...(args.length ? ["--", ...args] : [])], { ok: "any", timeoutMs: HOOK_TIMEOUT_MS });
  return { hook: name, ok: r.code === 0, exit_code: r.code, output: `${r.stdout}${r.stderr}`.trim().slice(-4000) };
}
