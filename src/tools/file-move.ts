import { z } from "zod";
import { ToolError } from "../errors.js";
import type { ResolvedPath } from "../paths.js";
import type { Workspace } from "../workspace.js";
import { defineTool } from "../dispatch/tool.js";
import { plural } from "../core/text.js";

/**
 * Why a folder takes no hash: a move changes no file's content, and every later edit at the new path is still checked
 * against that file's own hash, so nothing can be overwritten unseen; a hash of the listing would only make any
 * unrelated file created inside the folder meanwhile block the move. A file takes its hash, so a model moves the
 * version it read (and its views and tags stay valid at the new path).
 */
const DESCRIPTION = `Moves (renames) a file or a folder inside the workspace, atomically, never overwriting.
For a file pass \`hash\` (from your last file_read or file_write of it): if it changed since, nothing moves and you get
HASH_MISMATCH. A folder takes no hash (a move changes no file's content; later edits at the new path are checked by the
files' own hashes). If \`to\` exists, the answer is ALREADY_EXISTS and nothing moves; missing parent folders of \`to\`
are created. A symlink is moved as the link itself. Your tags and hash stay valid at the new path: no re-read needed.`;

const hash = z.string().regex(/^[0-9a-fA-F]{16}$/, "must be a 16-hex-digit file hash");

export const fileMoveTool = defineTool({
  id: "file_move",
  description: DESCRIPTION,
  params: {
    from: z.string().describe("The file or folder to move, relative to the workspace root (or absolute inside it)."),
    to: z.string().describe("Its new path (must not exist yet), relative to the workspace root (or absolute inside it)."),
    hash: hash.optional().describe("The file's current hash, from file_read or file_write. Required for a file; leave it out for a folder."),
  },
  mutating: true,
  // It never overwrites and loses nothing: the file or folder is all there, under its new name.
  hints: { destructive: false },
  async run(params, ctx) {
    const { ws } = ctx;
    const from = await ws.paths.resolve(params.from);
    if (!from.exists) throw new ToolError("NOT_FOUND", `${from.rel} does not exist; check the path (find_file can search by name).`);
    const to = await resolveDestination(ws, params.to);
    const outcome = await ws.files.move(ctx, { from, to, expected: params.hash?.toLowerCase() });
    const what =
      outcome.kind === "folder"
        ? `folder, ${outcome.more ? `${outcome.files}+ files` : plural(outcome.files, "file")}`
        : outcome.kind === "symlink"
          ? "symlink"
          : `file, hash ${outcome.hash}`;
    const verb = ctx.dryRun ? "Would move" : "Moved";
    return {
      from: from.rel,
      to: to.rel,
      kind: outcome.kind,
      hash: outcome.hash,
      files: outcome.files,
      moved: !ctx.dryRun,
      text: `${verb} ${from.rel} to ${to.rel} (${what}).${outcome.kind === "file" ? ` Its tags and hash are unchanged: edit it at ${to.rel} with hash ${outcome.hash}.` : ""}`,
    };
  },
});

/** `to` is checked like any path; a dangling symlink there (NOT_FOUND from the resolver) is something in the way. */
async function resolveDestination(ws: Workspace, input: string): Promise<ResolvedPath> {
  try {
    return await ws.paths.resolve(input);
  } catch (e) {
    if (e instanceof ToolError && e.code === "NOT_FOUND") {
      throw new ToolError(
        "ALREADY_EXISTS",
        `${input} already exists (a symlink to a missing target); file_move never overwrites: pick another name, or delete it first.`,
      );
    }
    throw e;
  }
}
