import { realpath } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { ToolError } from "../errors.js";
import type { TextFile } from "../fs/read-text.js";
import { checkNewName } from "../lsp/identifiers.js";
import { type RenamePlan, RenamePlans, outsideEdit, planRename, unseenCode } from "../lsp/rename-plan.js";
import { languageOf } from "../lsp/servers.js";
import { defineTool } from "../dispatch/tool.js";
import type { ToolContext } from "../dispatch/tool.js";
import { LSP_TIMEOUT_MS, lspState, openFile, positionOf, positionParams, serviceOf, whereText } from "./lsp-common.js";

const DESCRIPTION = `Renames a symbol exactly, in every file that uses it, through the language server (TypeScript/JavaScript
or Python): the declaration and every reference, imports and re-exports included, never a same-named other symbol or text
in strings and comments. Point at the symbol by line and symbol (its text) or column, at its declaration or at any use.
Dry run (approved false): the unified diff of each file and the number of edits; nothing is written. Approved: every file is
written through the versioned write under the hash its edits were computed against, all or none. An approval applies the
rename its session's identical preview showed: if any of those files changed since, nothing is written (HASH_MISMATCH, or
PREVIEW_STALE with preview_id), and you preview again.`;

export const lspRenameTool = defineTool({
  id: "lsp_rename",
  description: DESCRIPTION,
  params: {
    ...positionParams,
    // The language's own rules (Unicode identifiers, keywords) are checked by the tool: no regex says them in every host.
    new_name: z
      .string()
      .min(1)
      .describe(
        "The new name: an identifier of the file's language that is not one of its keywords (TypeScript/JavaScript: letters, digits, $ or _; Python: letters, digits or _).",
      ),
  },
  mutating: true,
  timeoutMs: LSP_TIMEOUT_MS,
  state: lspState,
  async run(params, ctx) {
    const language = languageOf(params.path)?.language;
    if (language) checkNewName(language, params.new_name);
    const lsp = serviceOf(ctx.services);
    const key = RenamePlans.key(ctx.sessionId, params);
    // A dry run always asks the server now; an approval applies its session's last identical preview when there is one.
    const previewed = ctx.dryRun ? undefined : lsp.renames.take(key);
    const plan = previewed ?? (await computePlan(params, ctx));
    // A file the server named through a link out of the root is refused here, dry run or not, before anything is written.
    const targets = await Promise.all(
      plan.files.map((f) =>
        ctx.ws.paths.resolve(f.path).catch(async (e: unknown) => {
          if (!(e instanceof ToolError && e.code === "PATH_OUTSIDE_ROOT")) throw e;
          throw outsideEdit(f.path, await realpath(path.join(ctx.ws.root, f.path)).catch(() => f.path));
        }),
      ),
    );
    // The dry run checks what the write would (hashes, sizes, that each file is still there), and writes nothing.
    const outcomes = await ctx.ws.files
      .writeMany(
        ctx,
        plan.files.map((f, i) => ({
          target: targets[i],
          expected: f.hash,
          needsExisting: true,
          // The servers never see a BOM (SPEC 4 decoded text): a file that had one keeps it.
          produce: (current: TextFile | undefined) => ({ bytes: Buffer.from(`${current?.doc.bom ? "\ufeff" : ""}${f.after}`) }),
        })),
      )
      .catch((e: unknown) => {
        if (!(previewed && e instanceof ToolError && e.code === "HASH_MISMATCH")) throw e;
        throw new ToolError(
          "HASH_MISMATCH",
          `A file of this rename changed since its preview, so nothing was written: ${e.message} Preview the rename again (approved false) and approve that.`,
          e.details,
        );
      });
    if (ctx.dryRun) lsp.renames.put(key, plan);
    const hashes = outcomes.map((o) => o.hash);
    return { ...shape(plan, params, hashes), text: render(plan, ctx.dryRun ? "would edit" : "edited", params.new_name, hashes) };
  },
});

type RenameParams = Parameters<typeof positionOf>[0] & { path: string; new_name: string };

async function computePlan(params: RenameParams, ctx: ToolContext): Promise<RenamePlan> {
  const opened = await openFile(ctx, params.path);
  const at = positionOf(params, opened.lines);
  const unseen = await opened.lsp.unseenLinks(opened.client.spec.language);
  if (unseen.length) throw unseenCode(unseen);
  const { hash, files } = await opened.client.rename(opened.doc, at, params.new_name, ctx.signal);
  return planRename({ path: opened.doc.path, hash, at, newName: params.new_name }, files, (path, fileHash) => {
    const open = opened.client.openDocument(path);
    if (open && (fileHash === null || open.hash === fileHash)) return open;
    const disk = opened.lsp.disk(path);
    return disk && (fileHash === null || disk.hash === fileHash) ? disk : undefined;
  });
}

/** As file_write has it: each file's `hash` is the new one (in a dry run, the one it would have), `previous_hash` the one edited. */
function shape(plan: RenamePlan, params: RenameParams, hashes: readonly string[]) {
  return {
    path: plan.path,
    hash: plan.hash,
    new_name: params.new_name,
    count: plan.count,
    files: plan.files.map((f, i) => ({ path: f.path, previous_hash: f.hash, hash: hashes[i], edits: f.edits, diff: f.diff })),
  };
}

function render(plan: RenamePlan, verb: string, newName: string, newHashes: readonly string[]): string {
  const at = whereText(plan.path, plan.at);
  const n = plan.files.length;
  const head = `rename ${at} to ${newName} · hash ${plan.hash} · ${verb} ${plan.count} place${plan.count === 1 ? "" : "s"} in ${n} file${n === 1 ? "" : "s"}`;
  const files = plan.files.map((f, i) => `${f.path} · hash ${f.hash} -> ${newHashes[i]} · ${f.edits} edit${f.edits === 1 ? "" : "s"}`);
  return [head, ...files, "", ...plan.files.map((f) => f.diff.trimEnd())].join("\n");
}
