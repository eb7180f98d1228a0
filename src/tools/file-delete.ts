import { type Stats, lstatSync, unlinkSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ToolError, isNodeError } from "../errors.js";
import { type ConfinedDir, openDirConfined } from "../fs/confined.js";
import { checkHash } from "../fs/hash-check.js";
import { fileError, notFound, readRaw } from "../fs/read-text.js";
import { checkWritable } from "../fs/versioned-write.js";
import { defineTool } from "../dispatch/tool.js";
import { plural } from "../core/text.js";

const DESCRIPTION = `Deletes one file, only if it is still the version you name by its hash.
Pass the hash from your last file_read or file_write of the file; if the file changed since, nothing is deleted and you
get HASH_MISMATCH with the current hash. Files only, not folders. Deleting a symlink removes the link, not its target.
A read-only file (no write permission) is refused with PERMISSION_DENIED unless force_readonly is true.`;

export const fileDeleteTool = defineTool({
  id: "file_delete",
  description: DESCRIPTION,
  params: {
    path: z.string().describe("File path, relative to the workspace root (or absolute inside it)."),
    hash: z
      .string()
      .regex(/^[0-9a-fA-F]{16}$/, "must be a 16-hex-digit file hash")
      .describe("The file's current hash, from file_read or file_write."),
    force_readonly: z.boolean().optional().describe("true: delete a read-only file (no write permission bit) on purpose. Default false: PERMISSION_DENIED."),
  },
  mutating: true,
  async run(params, ctx) {
    const { ws, sessionId } = ctx;
    const target = await ws.paths.resolve(params.path);
    if (!target.exists) throw notFound(target);
    // The entry itself (a link is removed, not its target), in its folder's real path, acted on through that folder.
    const entry = ws.paths.entryOf(target);
    return ctx.lockFile(target.real, async () => {
      let dir: ConfinedDir;
      try {
        dir = openDirConfined(target.root, entry.dir, { rel: target.rel });
      } catch (e) {
        throw fileError(e, target, "delete");
      }
      try {
        let link: Stats;
        try {
          link = lstatSync(dir.path(entry.name));
        } catch (e) {
          throw isNodeError(e, "ENOENT") ? notFound(target) : fileError(e, target, "delete");
        }
        if (link.isDirectory()) throw new ToolError("NOT_A_FILE", `${target.rel} is a directory; file_delete removes files only.`);
        const current = await readRaw(target, ws.maxFileBytes);
        checkHash(ws, target, params.hash, current);
        if (!link.isSymbolicLink()) checkWritable(target, current, params.force_readonly ?? false, "delete");
        const result = { path: target.rel, previous_hash: current.hash, deleted: !ctx.dryRun, symlink: link.isSymbolicLink() };
        const what = link.isSymbolicLink() ? "the symlink; its target stays" : plural(current.bytes.length, "byte");
        if (ctx.dryRun) return { ...result, text: `Would delete ${target.rel} (${what}).` };
        await ctx.commit(async () => {
          // A link's own path goes away; a file is known by its real path (SPEC 3).
          ws.expectToolWrite({
            session: sessionId,
            tool: ctx.toolId,
            rel: link.isSymbolicLink() ? ws.paths.toRel(path.join(entry.dir, entry.name)) : target.realRel,
            hash: null,
          });
          try {
            unlinkSync(dir.path(entry.name));
          } catch (e) {
            throw fileError(e, target, "delete");
          }
        });
        return { ...result, text: `Deleted ${target.rel} (${what}).` };
      } finally {
        dir.close();
      }
    });
  },
});
