import { lstat, unlink } from "node:fs/promises";
import { z } from "zod";
import { ToolError, isNodeError } from "../errors.js";
import { checkHash } from "../fs/hash-check.js";
import { notFound, readRaw } from "../fs/read-text.js";
import { defineTool } from "./tool.js";

const DESCRIPTION = `Deletes one file, only if it is still the version you name by its hash.
Pass the hash from your last file_read or file_write of the file; if the file changed since, nothing is deleted and you
get HASH_MISMATCH with the current hash. Files only, not folders. Deleting a symlink removes the link, not its target.`;

export const fileDeleteTool = defineTool({
  id: "file_delete",
  description: DESCRIPTION,
  params: {
    path: z.string().describe("File path, relative to the workspace root (or absolute inside it)."),
    hash: z.string().regex(/^[0-9a-fA-F]{16}$/, "must be a 16-hex-digit file hash").describe("The file's current hash, from file_read or file_write."),
  },
  mutating: true,
  async run(params, ctx) {
    const { ws, sessionId } = ctx;
    const target = await ws.paths.resolve(params.path);
    if (!target.exists) throw notFound(target);
    return ctx.lockFile(target.real, async () => {
      const link = await lstat(target.abs).catch((e: unknown) => {
        if (isNodeError(e, "ENOENT")) throw notFound(target);
        throw e;
      });
      if (link.isDirectory()) throw new ToolError("NOT_A_FILE", `${target.rel} is a directory; file_delete removes files only.`);
      const current = await readRaw(target, ws.maxFileBytes);
      checkHash(ws, target, params.hash, current);
      const result = { path: target.rel, previous_hash: current.hash, deleted: !ctx.dryRun, symlink: link.isSymbolicLink() };
      const what = link.isSymbolicLink() ? "the symlink; its target stays" : `${current.bytes.length} bytes`;
      if (ctx.dryRun) return { ...result, text: `Would delete ${target.rel} (${what}).` };
      await ctx.commit(async () => {
        // A link's own path goes away; a file is known by its real path (SPEC 3).
        ws.expectToolWrite({ session: sessionId, tool: ctx.toolId, rel: link.isSymbolicLink() ? target.rel : ws.paths.toRel(target.real), hash: null });
        await unlink(target.abs);
      });
      return { ...result, text: `Deleted ${target.rel} (${what}).` };
    });
  },
});
