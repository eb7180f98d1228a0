import type { Eol } from "../text.js";
import type { LineEnd, Lines, MergeResult } from "./three-way.js";

/**
 * Conflict markers: the size to write them with, a merged file rendered with them, and the marker regions of a worktree
 * file. git writes its markers with a fixed size (7, or the `conflict-marker-size` attribute), so a file whose content
 * has a `=======` line is ambiguous in git's own output; the daemon re-writes such a file with markers longer than any
 * marker-like run in the three versions, and parses it with that size.
 */

/** git's default conflict-marker-size. */
export const GIT_MARKER_SIZE = 7;

export type MarkerKind = "ours" | "base" | "separator" | "theirs";

const MARKER_CHAR: Record<MarkerKind, string> = { ours: "<", base: "|", separator: "=", theirs: ">" };
const MARKER_CHARS = new Set(Object.values(MARKER_CHAR));

function runLength(line: string, ch: string): number {
  let n = 0;
  while (n < line.length && line[n] === ch) n++;
  return n;
}

/**
 * The marker size for a merge of these versions: `minimum` (git's size for the path), or one more than the longest run
 * of `<`, `|`, `=` or `>` starting a line of any version, whichever is larger. Then no content line can be taken for a
 * marker, and the same versions always give the same size (so the daemon can parse a file it wrote without storing it).
 */
export function chooseMarkerSize(versions: readonly (readonly string[])[], minimum = GIT_MARKER_SIZE): number {
  let longest = 0;
  for (const lines of versions) {
    for (const line of lines) {
      if (!MARKER_CHARS.has(line[0])) continue;
      const n = runLength(line, line[0]);
      if (n > longest) longest = n;
    }
  }
  return longest >= minimum ? longest + 1 : minimum;
}

/** A marker line: the run, then a space and the label when there is one (as git writes them). */
export function markerLine(kind: MarkerKind, size: number, label = ""): string {
  const run = MARKER_CHAR[kind].repeat(size);
  return label && kind !== "separator" ? `${run} ${label}` : run;
}

/** Whether `line` is a marker of exactly `size`: the run, then nothing or whitespace and a label. */
export function isMarker(line: string, kind: MarkerKind, size: number): boolean {
  if (line.length < size) return false;
  const ch = MARKER_CHAR[kind];
  for (let i = 0; i < size; i++) if (line.charCodeAt(i) !== ch.charCodeAt(0)) return false;
  return line.length === size || line[size] === " " || line[size] === "\t";
}

export interface RenderOptions {
  markerSize: number;
  labels: { ours: string; base: string; theirs: string };
  /** The terminator of marker lines, and of a content line that had none but is no longer last. */
  eol: Eol;
  /** Per block index: its resolution, written instead of a marker region (null or missing: markers). */
  resolutions?: ReadonlyArray<Lines | null | undefined>;
  /**
   * "keep" (default): each line keeps the terminator of its version. "file": every line gets `eol`, for a path whose
   * index versions differ from the worktree in line endings (core.autocrlf, `eol`/`text` attributes).
   */
  lineEols?: "keep" | "file";
}

/** Where each still-conflicting block's marker region is in a rendered file: 0-based lines, both ends inclusive. */
export interface RenderedRegion {
  block: number;
  start: number;
  end: number;
}

export interface RenderedFile {
  lines: string[];
  eols: LineEnd[];
  regions: RenderedRegion[];
}

/** The merged file, diff3-style: every unresolved block as `<<< ours ||| base === theirs >>>` with the given size. */
export function renderMerged(merge: MergeResult, opts: RenderOptions): RenderedFile {
  return renderChunks(merge.chunks, opts);
}

/**
 * Blocks `first` to `last` with the settled lines between them, as renderMerged writes that part of the file: what
 * replaces the worktree run of a group of blocks git joined into one region (resolved blocks as their resolution, the
 * others as markers). For a single resolved block it is just the resolution.
 */
export function renderBlocks(merge: MergeResult, first: number, last: number, opts: RenderOptions): RenderedFile {
  const from = merge.chunks.indexOf(merge.blocks[first]);
  const to = merge.chunks.indexOf(merge.blocks[last]);
  return renderChunks(merge.chunks.slice(from, to + 1), opts);
}

function renderChunks(chunks: MergeResult["chunks"], opts: RenderOptions): RenderedFile {
  const lines: string[] = [];
  const eols: LineEnd[] = [];
  const regions: RenderedRegion[] = [];
  const fileEols = opts.lineEols === "file";
  const push = (line: string, eol: LineEnd) => {
    if (eols.length && eols[eols.length - 1] === "") eols[eols.length - 1] = opts.eol;
    lines.push(line);
    eols.push(fileEols && eol !== "" ? opts.eol : eol);
  };
  const pushAll = (part: Lines) => {
    for (let i = 0; i < part.lines.length; i++) push(part.lines[i], part.eols[i]);
  };
  const marker = (kind: MarkerKind, label = "") => push(markerLine(kind, opts.markerSize, label), opts.eol);
  for (const chunk of chunks) {
    if (chunk.kind === "stable") {
      pushAll(chunk);
      continue;
    }
    const resolution = opts.resolutions?.[chunk.index];
    if (resolution) {
      pushAll(resolution);
      continue;
    }
    const start = lines.length;
    marker("ours", opts.labels.ours);
    pushAll(chunk.ours);
    marker("base", opts.labels.base);
    pushAll(chunk.base);
    marker("separator");
    pushAll(chunk.theirs);
    marker("theirs", opts.labels.theirs);
    regions.push({ block: chunk.index, start, end: lines.length - 1 });
  }
  return { lines, eols, regions };
}

/** A half-open range of 0-based line indexes. */
export interface LineRange {
  from: number;
  to: number;
}

/** A complete marker region of a worktree file. */
export interface MarkerRegion {
  /** 0-based indexes of the opening (`<<<`) and closing (`>>>`) marker lines. */
  start: number;
  end: number;
  ours: LineRange;
  /** Present in diff3 and zdiff3 style. */
  base: LineRange | null;
  theirs: LineRange;
  labels: { ours: string; base: string | null; theirs: string };
}

export interface ParsedMarkers {
  regions: MarkerRegion[];
  /** 0-based lines that are markers of this size but belong to no complete region (a half-deleted region). */
  stray: number[];
}

const labelOf = (line: string, size: number) => line.slice(size).trim();

/** The marker regions of `lines` with markers of exactly `size`, in order. */
export function parseMarkerRegions(lines: readonly string[], size: number): ParsedMarkers {
  const regions: MarkerRegion[] = [];
  const stray: number[] = [];
  const anyMarker = (line: string) =>
    isMarker(line, "ours", size) || isMarker(line, "base", size) || isMarker(line, "separator", size) || isMarker(line, "theirs", size);
  let i = 0;
  while (i < lines.length) {
    if (!isMarker(lines[i], "ours", size)) {
      if (anyMarker(lines[i])) stray.push(i);
      i++;
      continue;
    }
    const open = i;
    let baseAt = -1;
    let sepAt = -1;
    let closeAt = -1;
    let j = open + 1;
    for (; j < lines.length; j++) {
      const line = lines[j];
      if (isMarker(line, "ours", size)) break; // a new region opens before this one closed
      if (sepAt === -1) {
        if (baseAt === -1 && isMarker(line, "base", size)) baseAt = j;
        else if (isMarker(line, "separator", size)) sepAt = j;
        else if (isMarker(line, "theirs", size)) break;
      } else if (isMarker(line, "theirs", size)) {
        closeAt = j;
        break;
      }
    }
    if (closeAt === -1) {
      // Not a region: report its markers and go on from the line after the opening one.
      stray.push(open);
      i = open + 1;
      continue;
    }
    regions.push({
      start: open,
      end: closeAt,
      ours: { from: open + 1, to: baseAt === -1 ? sepAt : baseAt },
      base: baseAt === -1 ? null : { from: baseAt + 1, to: sepAt },
      theirs: { from: sepAt + 1, to: closeAt },
      labels: {
        ours: labelOf(lines[open], size),
        base: baseAt === -1 ? null : labelOf(lines[baseAt], size),
        theirs: labelOf(lines[closeAt], size),
      },
    });
    i = closeAt + 1;
  }
  return { regions, stray };
}

/**
 * The marker size of a file whose writer is unknown: the largest size (at least `minimum`) that forms a complete
 * region, or null when there is none. The daemon knows better where it can: the size it chose when it wrote the file
 * (chooseMarkerSize of the three versions), else git's (the `conflict-marker-size` attribute, default 7).
 */
export function detectMarkerSize(lines: readonly string[], minimum = GIT_MARKER_SIZE): number | null {
  const sizes = new Set<number>();
  for (const line of lines) {
    if (line[0] !== "<") continue;
    const n = runLength(line, "<");
    if (n >= minimum && (line.length === n || line[n] === " " || line[n] === "\t")) sizes.add(n);
  }
  for (const size of [...sizes].sort((a, b) => b - a)) {
    if (parseMarkerRegions(lines, size).regions.length) return size;
  }
  return null;
}
