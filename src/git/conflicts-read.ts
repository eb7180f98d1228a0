import { ToolError } from "../errors.js";
import { type TextFile, readRaw, readText } from "../fs/read-text.js";
import type { ResolvedPath } from "../paths.js";
import { type BlockView, type ConflictKind, KIND_TEXT, type Located, type StageMerge, blockViews, classify, kindOfEntry, locate } from "./conflicts-model.js";
import { type MergeAttributes, type UnmergedPath, readBlobs, unmergedPaths, mergeAttributes } from "./conflicts-stages.js";
import type { RepoCtx } from "./repo.js";

/** A conflicted path as the conflict tools work on it: its stages, kind, merge, and worktree file. */
export interface FileState {
  path: string;
  entry: UnmergedPath;
  attrs: MergeAttributes;
  kind: ConflictKind;
  /** The worktree file: absent (null), or read as text (text conflicts) or as bytes (the others, for their hash). */
  hash: string | null;
  file: TextFile | null;
  target: ResolvedPath | null;
  sm: StageMerge | null;
  loc: Located | null;
}

/**
 * Every conflicted path (or those in `only`), read from the index stages: `cached` uses the listing remembered for the
 * index as it is now (git_conflict_resolve), else the index is read again (right after git wrote it).
 */
export async function readConflicts(ctx: RepoCtx, opts: { only?: string[]; cached?: boolean; locate?: boolean } = {}): Promise<FileState[]> {
  let entries: UnmergedPath[];
  let attrs: Map<string, MergeAttributes>;
  if (opts.cached) ({ entries, attrs } = await ctx.repo.conflictIndex.read(ctx, await ctx.repo.gitDir()));
  else {
    entries = await unmergedPaths(ctx);
    attrs = await mergeAttributes(
      ctx,
      entries.map((e) => e.path),
    );
  }
  if (opts.only) {
    const wanted = new Set(opts.only);
    entries = entries.filter((e) => wanted.has(e.path));
  }
  // Stages merged before need no blob: the merge is cached by their ids.
  const unknown = entries.filter((e) => !kindOfEntry(e, attrs.get(e.path)!) && !ctx.repo.merges.cached(e, attrs.get(e.path)!.markerSize));
  const oids = unknown.flatMap((e) => [e.base?.oid, e.ours?.oid, e.theirs?.oid]).filter((o): o is string => !!o);
  const blobs = await readBlobs(ctx, oids, ctx.repo.maxFileBytes);
  const out: FileState[] = [];
  for (const entry of entries) out.push(await fileState(ctx, entry, attrs.get(entry.path)!, blobs, opts.locate ?? true));
  return out;
}

async function fileState(
  ctx: RepoCtx,
  entry: UnmergedPath,
  attrs: MergeAttributes,
  blobs: Map<string, Buffer | null>,
  locateBlocks: boolean,
): Promise<FileState> {
  const known = kindOfEntry(entry, attrs) ? null : ctx.repo.merges.cached(entry, attrs.markerSize);
  const c = known ? { kind: "text" as const, texts: known.texts } : classify(entry, attrs, blobs);
  const state: FileState = { path: entry.path, entry, attrs, kind: c.kind, hash: null, file: null, target: null, sm: null, loc: null };
  state.target = await ctx.repo.paths.resolve(entry.path).catch(() => null);
  if (!state.target) return state;
  if (c.kind === "text") {
    try {
      state.file = await readText(state.target, ctx.repo.maxFileBytes);
      state.hash = state.file.hash;
    } catch (e) {
      // Not text on disk (binary, not UTF-8, too large): whole-file choices only.
      if (!(e instanceof ToolError)) throw e;
      if (e.code === "NOT_FOUND") return state;
      state.kind = e.code === "TOO_LARGE" ? "too_large" : "binary";
      state.hash = typeof e.details.hash === "string" ? e.details.hash : null;
      return state;
    }
    state.sm = ctx.repo.merges.merge(entry, c.texts!, attrs.markerSize);
    if (locateBlocks) state.loc = locate(state.sm, state.file.doc.lines, attrs.markerSize);
    return state;
  }
  state.hash = await readRaw(state.target, ctx.repo.maxFileBytes).then(
    (r) => r.hash,
    () => null,
  );
  return state;
}

/** A conflicted file as git_conflicts and the operations' answers show it. */
export interface FileView {
  path: string;
  kind: ConflictKind;
  hash: string | null;
  /** Text conflicts: the blocks left in the worktree. */
  blocks: BlockView[];
  /** Text conflicts: blocks already resolved in the worktree (no marker region holds them any more). */
  resolved_blocks?: number;
  /** Marker regions that read as no block (1-based lines), and marker lines outside any region: to clean up by hand. */
  unmatched_regions?: [number, number][];
  stray_markers?: number[];
  /** Whole-file conflicts: which versions exist, for git_conflict_resolve {take}. */
  versions?: { base: boolean; ours: boolean; theirs: boolean };
}

export function fileView(s: FileState): FileView {
  if (s.kind !== "text" || !s.sm || !s.loc) {
    return { path: s.path, kind: s.kind, hash: s.hash, blocks: [], versions: { base: !!s.entry.base, ours: !!s.entry.ours, theirs: !!s.entry.theirs } };
  }
  const view: FileView = { path: s.path, kind: s.kind, hash: s.hash, blocks: blockViews(s.sm, s.loc), resolved_blocks: s.loc.resolved.length };
  if (s.loc.unmatched.length) view.unmatched_regions = s.loc.unmatched.map((r) => [r.start + 1, r.end + 1]);
  if (s.loc.stray.length) view.stray_markers = s.loc.stray.map((i) => i + 1);
  return view;
}

/** Conflicts are "text" with blocks or a whole-file kind; a text file with none left only waits to be staged. */
export function isSettled(v: FileView): boolean {
  return v.kind === "text" && v.hash !== null && !v.blocks.length && !v.unmatched_regions && !v.stray_markers;
}

/** The text of one file's conflicts: its header, then every block with its sides and proposal. */
export function fileViewText(v: FileView, withSides = true): string {
  if (v.kind !== "text") {
    const has = v.versions ? (["ours", "theirs"] as const).filter((k) => v.versions![k]).join(" and ") : "";
    return `file ${v.path} · hash ${v.hash ?? "none (not in the worktree)"} · ${KIND_TEXT[v.kind]}${has ? ` (versions: ${has})` : ""}; settle it whole with git_conflict_resolve {path, hash, take: "ours"|"theirs"|"delete"}`;
  }
  if (v.hash === null)
    return `file ${v.path} · not in the worktree; settle it whole with git_conflict_resolve {path, hash: null, take: "ours"|"theirs"|"delete"}`;
  const lines = [
    `file ${v.path} · hash ${v.hash} · ${v.blocks.length} block${v.blocks.length === 1 ? "" : "s"} left${v.resolved_blocks ? ` (${v.resolved_blocks} already resolved in the worktree)` : ""}`,
  ];
  for (const b of v.blocks) {
    const auto = b.auto ? `auto: ${autoLabel(b.auto.rule)}` : "auto: none (both sides changed the same words)";
    const notes = [
      b.edited ? "its region was edited by hand" : "",
      b.shares_region_with ? `shares its marker region with block ${b.shares_region_with.join(", ")}` : "",
    ].filter(Boolean);
    lines.push(`block ${b.block} · lines ${b.lines[0]}-${b.lines[1]} · ${auto}${notes.length ? ` · ${notes.join("; ")}` : ""}`);
    if (!withSides) continue;
    for (const side of ["ours", "base", "theirs"] as const) lines.push(`  ${side}:${b[side].length ? "" : " (no lines)"}`, ...b[side].map((l) => `    ${l}`));
    if (b.auto) lines.push(`  auto:${b.auto.lines.length ? "" : " (no lines)"}`, ...b.auto.lines.map((l) => `    ${l}`));
  }
  if (v.unmatched_regions)
    lines.push(`marker regions that match no block (remove them by hand): ${v.unmatched_regions.map(([s, e]) => `lines ${s}-${e}`).join(", ")}`);
  if (v.stray_markers) lines.push(`marker lines outside any region: ${v.stray_markers.join(", ")}`);
  return lines.join("\n");
}

/** Word merges are right most of the time, not always (docs/tools/conflicts.md): their label asks for a look. */
export function autoLabel(rule: string, short = false): string {
  switch (rule) {
    case "identical":
      return "identical changes";
    case "one-sided":
      return "only one side changed";
    case "whitespace":
      return "one side changed only whitespace";
    default:
      return short ? "WORD MERGE: check it" : "WORD MERGE, check it (both sides changed these lines, at different words)";
  }
}
