import { z } from "zod";

/** Refuses a value git could read as an option (`-x`, `--upload-pack=…`) or that carries a NUL or newline. */
function notOption(what: string) {
  return z
    .string()
    .min(1)
    .refine((v) => !v.startsWith("-"), { message: `must not start with "-" (git would read it as an option)` })
    .refine((v) => !/[\0\n\r]/.test(v), { message: `a ${what} cannot contain NUL or line breaks` });
}

export const refParam = () => notOption("ref");
export const remoteParam = () => notOption("remote");
export const urlParam = () => notOption("url");
export const pathParam = () => notOption("path");
export const pathsParam = () => z.array(pathParam()).min(1);

/**
 * A root-relative path as a git pathspec that means exactly that path: without `:(literal)`, `*.ts` would be a glob
 * and `:(top)x` or `:!x` magic. Per argument, unlike GIT_LITERAL_PATHSPECS, which hooks would inherit.
 */
export function pathspec(rel: string): string {
  return `:(literal)${rel || "."}`;
}

/** git's own messages quote the pathspec; show the path. */
export function unspec(text: string): string {
  return text.replaceAll(":(literal)", "");
}

/** What resolving a caller's path needs: the workspace's path rules (SPEC 3). */
export interface PathRules {
  repo: { paths: { resolve(input: string, options?: { allowGitDir?: boolean }): Promise<{ rel: string }> } };
}

/** Callers' paths as root-relative ones ("." for the root), each checked against the path rules. */
export async function relPaths(ctx: PathRules, paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) out.push((await ctx.repo.paths.resolve(p, { allowGitDir: false })).rel || ".");
  return out;
}
