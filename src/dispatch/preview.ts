import { createHash } from "node:crypto";
import { canonicalJson } from "../core/canonical-json.js";

/**
 * A preview's id (SPEC 2): a digest of the call (tool and canonical params) and of everything the preview shows, which
 * is derived from the state it read (file hashes, HEAD, the index tree, remote tips, the command that would run).
 * The same call on the same state gives the same id; a change to what it would do gives another. Tools keep their
 * previews free of timestamps and generated names, so the id depends on nothing else.
 */
export function previewId(toolId: string, params: Record<string, unknown>, preview: Record<string, unknown>): string {
  const { preview_id: _p, ...call } = params;
  const { dry_run: _d, preview_id: _q, ...shown } = preview;
  return createHash("sha256")
    .update(canonicalJson({ tool: toolId, call, shown }))
    .digest("hex")
    .slice(0, 16);
}
