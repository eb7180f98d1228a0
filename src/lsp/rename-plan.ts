/**
 * An LSP rename as a plan of file versions (the edits applied to the content the server computed them against), and
 * the plans of recent previews, so that an approval applies what its preview showed: a file changed since is then
 * HASH_MISMATCH, never a silently different rename.
 */
import path from "node:path";
import { LRUCache } from "lru-cache";
import { canonicalJson } from "../core/canonical-json.js";
import { unifiedDiff } from "../core/render.js";
import { ToolError } from "../errors.js";
import type { RenameFile } from "./client.js";
import { applyTextEdits } from "./convert.js";
import type { PositionSpec } from "./positions.js";

export interface PlannedFile {
  /** Root-relative. */
  path: string;
  /** The content hash the server computed this file's edits against: the write's expected hash. */
  hash: string;
  before: string;
  after: string;
  edits: number;
  diff: string;
}

export interface RenamePlan {
  path: string;
  hash: string;
  /** Where the rename was asked, in that file. */
  at: PositionSpec;
  newName: string;
  files: PlannedFile[];
  count: number;
}

/**
 * `contentOf(path, hash)`: the text with that hash, if it is still to be had (the open document, or the disk), else
 * undefined: the file changed since the server computed its edits. `hash` null: the server read the file itself (we
 * had it closed); then the disk's text now, with its hash.
 */
export function planRename(
  asked: { path: string; hash: string; at: PositionSpec; newName: string },
  files: readonly RenameFile[],
  contentOf: (path: string, hash: string | null) => { text: string; hash: string } | undefined,
): RenamePlan {
  const planned = files.map((f): PlannedFile => {
    if (path.isAbsolute(f.path)) throw outsideEdit(f.path, f.path);
    const content = contentOf(f.path, f.hash);
    if (!content) {
      throw new ToolError("HASH_MISMATCH", `${f.path} changed while the language server computed the rename; nothing was changed: run it again.`, {
        path: f.path,
      });
    }
    const after = applyTextEdits(content.text, f.edits, f.path);
    return { path: f.path, hash: content.hash, before: content.text, after, edits: f.edits.length, diff: unifiedDiff(f.path, content.text, after).diff };
  });
  return { ...asked, files: planned, count: planned.reduce((n, f) => n + f.edits, 0) };
}

/**
 * A rename that would edit `file` (root-relative, or absolute when the server named it so), whose real path `real` is
 * outside the root: refused whole, since the rest of it alone would leave the code broken.
 */
export function outsideEdit(file: string, real: string): ToolError {
  const where = file === real ? "outside the workspace" : `a link out of the workspace (to ${real})`;
  return new ToolError(
    "PATH_OUTSIDE_ROOT",
    `The rename would also edit ${file}, ${where}, which tool-layer never writes; nothing was changed. Rename a symbol the workspace defines, or make ${file} a copy inside the root.`,
    { path: file, real_path: real },
  );
}

/**
 * Links in the root to code the sandboxed language server cannot see (service.ts unseenLinks): its rename leaves that
 * code out without a word, and that code may use the name (a declaration, an import), so any rename is refused whole.
 */
export function unseenCode(links: readonly { path: string; target: string }[]): ToolError {
  const shown = links
    .slice(0, 5)
    .map((l) => `${l.path} (to ${l.target})`)
    .join(", ");
  const more = links.length > 5 ? ` and ${links.length - 5} more` : "";
  return new ToolError(
    "PATH_OUTSIDE_ROOT",
    `${shown}${more} ${links.length === 1 ? "links" : "link"} out of the workspace to where the sandboxed language server cannot see, so its rename would leave any use of the name there as it was; nothing was changed. Make ${links.length === 1 ? "the link a copy" : "the links copies"} inside the root, or rename by hand.`,
    { path: links[0].path, real_path: links[0].target, links: links.map((l) => l.path) },
  );
}

/** A preview's plan is applied by an approval within this long; later the rename is computed again. */
export const PLAN_TTL_MS = 10 * 60_000;
/** Previews remembered at once (least recently made dropped first): a session previews one rename at a time. */
export const MAX_PLANS = 16;

/** The plans of recent dry runs, by session and call (its canonical params). */
export class RenamePlans {
  /** Timed by the wall clock (Date.now), as a time to live for a person's approval is meant. */
  private readonly plans = new LRUCache<string, RenamePlan>({ max: MAX_PLANS, ttl: PLAN_TTL_MS, perf: { now: () => Date.now() } });

  static key(session: string, params: object): string {
    return `${session}\n${canonicalJson(params)}`;
  }

  put(key: string, plan: RenamePlan): void {
    this.plans.set(key, plan);
  }

  /** The plan of the last identical preview, if recent; taken, so one approval applies it once. */
  take(key: string): RenamePlan | undefined {
    const got = this.plans.get(key);
    this.plans.delete(key);
    return got;
  }
}
