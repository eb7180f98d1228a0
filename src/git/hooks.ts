import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { access, open } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../errors.js";
import { git, type GitCtx } from "./run.js";

/**
 * The hooks git may run during each operation we start (githooks(5)), so a preview can list them and an approval covers
 * them. reference-transaction runs wherever a ref moves, backups included. Auto maintenance is off (run.ts), so
 * pre-auto-gc never runs.
 */
export const OPERATION_HOOKS = {
  commit: ["pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction"],
  amend: ["pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-rewrite", "reference-transaction"],
  push: ["pre-push", "reference-transaction"],
  fetch: ["reference-transaction"],
  checkout: ["post-checkout", "reference-transaction"],
  reset: ["reference-transaction"],
  merge: ["pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-merge", "reference-transaction"],
  rebase: ["pre-rebase", "post-checkout", "post-rewrite", "reference-transaction"],
  stash: ["reference-transaction"],
} as const satisfies Record<string, readonly string[]>;

export type HookOperation = keyof typeof OPERATION_HOOKS;

/** One hook git would run: where it is and the SHA-256 of its content, so an approval names exactly what runs. */
export interface PlannedHook {
  hook: string;
  /** Root-relative when the hooks folder is inside the workspace (core.hooksPath=.githooks), else absolute. */
  path: string;
  sha256: string;
}

/** A hook bigger than this is not a script anyone reviews; the digest is refused rather than read for minutes. */
const MAX_HOOK_BYTES = 64 * 1024 * 1024;
const READ_CHUNK = 1024 * 1024;

/** The hooks folder git uses (core.hooksPath respected), absolute. */
async function hooksDir(ctx: GitCtx): Promise<string> {
  const r = await git(ctx, ["rev-parse", "--git-path", "hooks"], { hooks: "repo" });
  return path.resolve(ctx.repo.root, r.stdout.trim());
}

/** The path of a hook if git would run it (it exists and is executable; git ignores the others). */
export async function hookPath(ctx: GitCtx, name: string): Promise<string | null> {
  const p = path.join(await hooksDir(ctx), name);
  return access(p, constants.X_OK).then(
    () => p,
    () => null,
  );
}

/** Every hook of `names` that git would run here, each with its content's digest. */
export async function plannedHooks(ctx: GitCtx, names: readonly string[]): Promise<PlannedHook[]> {
  const dir = await hooksDir(ctx);
  const found: PlannedHook[] = [];
  for (const hook of [...new Set(names)]) {
    const abs = path.join(dir, hook);
    if (
      !(await access(abs, constants.X_OK).then(
        () => true,
        () => false,
      ))
    )
      continue;
    const sha256 = await digest(abs);
    if (sha256 === null) continue;
    const rel = path.relative(ctx.repo.root, abs);
    const inside = rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
    found.push({ hook, path: inside ? rel.split(path.sep).join("/") : abs, sha256 });
  }
  return found;
}

/**
 * SHA-256 of a hook file; null when it is not a regular file (git cannot run a FIFO or a folder). Opened without
 * blocking and bounded by the bytes actually read, so a hook linked to a device or /proc file cannot hang the daemon.
 */
async function digest(abs: string): Promise<string | null> {
  const fh = await open(abs, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => null);
  if (!fh) return null;
  try {
    if (!(await fh.stat()).isFile()) return null;
    const hash = createHash("sha256");
    const buf = Buffer.allocUnsafe(READ_CHUNK);
    for (let total = 0; ; ) {
      const { bytesRead } = await fh.read(buf, 0, READ_CHUNK, null);
      if (!bytesRead) break;
      total += bytesRead;
      if (total > MAX_HOOK_BYTES)
        throw new ToolError("TOO_LARGE", `The hook ${abs} is over ${MAX_HOOK_BYTES} bytes; tool-layer will not vouch for it. Remove or shrink it.`);
      hash.update(buf.subarray(0, bytesRead));
    }
    return hash.digest("hex");
  } finally {
    await fh.close();
  }
}

export function hooksText(hooks: PlannedHook[], verb: string): string {
  return hooks.map((h) => `hook ${h.hook} ${verb}: ${h.path} (sha256 ${h.sha256.slice(0, 16)})`).join("\n");
}
