import { ToolError } from "../errors.js";
import { plural } from "./text.js";

/** An anchor as written by the caller: a bare tag, or a line number with the tag that line must have (SPEC 4). */
export interface Anchor {
  raw: string;
  tag: string;
  /** 1-based line number for the `N:TAG` / `N|TAG` / `N#TAG` forms. */
  line?: number;
}

const BARE = /^([0-9a-f]{4})$/i;
const NUMBERED = /^([1-9][0-9]*)[:|#]([0-9a-f]{4})$/i;

/** Parses an anchor; a malformed one is INVALID_PARAMS naming the field and the accepted forms. */
export function parseAnchor(raw: string, field: string): Anchor {
  const s = raw.trim();
  const bare = BARE.exec(s);
  if (bare) return { raw, tag: bare[1].toUpperCase() };
  const numbered = NUMBERED.exec(s);
  if (numbered) return { raw, tag: numbered[2].toUpperCase(), line: Number(numbered[1]) };
  throw new ToolError(
    "INVALID_PARAMS",
    `${field}: ${JSON.stringify(raw)} is not an anchor; use a line's 4-hex-digit tag ("14C3") or line:tag ("5:14C3") as file_read shows them.`,
  );
}

/** A snapshot's line tags: an array, or a source that hashes lines on demand (LineTags). */
export interface TagSource {
  readonly length: number;
  at(i: number): string;
  all(): readonly string[];
}

export function tagSource(tags: readonly string[] | TagSource): TagSource {
  if (!Array.isArray(tags)) return tags as TagSource;
  const list = tags as readonly string[];
  return { length: list.length, at: (i) => list[i], all: () => list };
}

/** The 1-based line numbers of every line with `tag`. */
export function linesWithTag(tags: readonly string[], tag: string): number[] {
  const found: number[] = [];
  for (let i = 0; i < tags.length; i++) if (tags[i] === tag) found.push(i + 1);
  return found;
}

/** Lines (0-based) with tag value v are order[start[v] .. start[v + 1]). */
interface TagIndex {
  start: Uint32Array;
  order: Uint32Array;
}

const TAG_VALUES = 0x10000;

/** A tag's 16-bit value from its four hex digits (either case). */
function tagValue(tag: string): number {
  let v = 0;
  for (let i = 0; i < 4; i++) {
    const c = tag.charCodeAt(i);
    v = (v << 4) | (c <= 57 ? c - 48 : (c | 32) - 87);
  }
  return v;
}

/**
 * A snapshot's tags with their tag -> lines index, built on first use: a batch of N bare-tag anchors resolved through one
 * lookup (resolveEdits makes one per batch) costs one pass over the file instead of N (100,000 inserts on a 100,000-line
 * file took a minute with a scan per anchor). A counting sort by the tag's 16-bit value: two typed arrays, no per-tag
 * allocation (a Map of arrays cost more than the edits themselves).
 */
export class TagLookup implements TagSource {
  private readonly source: TagSource;
  private index: TagIndex | undefined;

  constructor(tags: readonly string[] | TagSource) {
    this.source = tagSource(tags);
  }

  get length(): number {
    return this.source.length;
  }

  at(i: number): string {
    return this.source.at(i);
  }

  all(): readonly string[] {
    return this.source.all();
  }

  /** The 1-based lines that have `tag`, in file order. */
  find(tag: string): number[] {
    const { start, order } = (this.index ??= indexOf(this.all()));
    const v = tagValue(tag);
    const found: number[] = [];
    for (let k = start[v]; k < start[v + 1]; k++) found.push(order[k] + 1);
    return found;
  }
}

function indexOf(tags: readonly string[]): TagIndex {
  const values = new Uint16Array(tags.length);
  const start = new Uint32Array(TAG_VALUES + 1);
  for (let i = 0; i < tags.length; i++) start[(values[i] = tagValue(tags[i])) + 1]++;
  for (let v = 0; v < TAG_VALUES; v++) start[v + 1] += start[v];
  const fill = start.slice(0, TAG_VALUES);
  const order = new Uint32Array(tags.length);
  for (let i = 0; i < tags.length; i++) order[fill[values[i]]++] = i;
  return { start, order };
}

const lookupOf = (source: readonly string[] | TagSource) => (source instanceof TagLookup ? source : new TagLookup(source));

/** The 1-based lines of `source` (a snapshot's tags) that have `tag`, in file order. */
export function findTag(source: readonly string[] | TagSource, tag: string): number[] {
  return lookupOf(source).find(tag);
}

/** How many candidate lines a message lists before "…": enough to pick from, short enough to read. */
const MAX_LISTED = 20;

function list(lines: readonly number[], tag: string): string {
  const shown = lines
    .slice(0, MAX_LISTED)
    .map((n) => `${n}:${tag}`)
    .join(", ");
  return lines.length > MAX_LISTED ? `${shown}, … (${lines.length} in all)` : shown;
}

/** The 1-based line an anchor names in the snapshot whose line tags are `source` (a TagLookup to share its index). */
export function resolveAnchor(anchor: Anchor, source: readonly string[] | TagSource, field: string): number {
  const { tag, line } = anchor;
  const lazy = tagSource(source);
  if (line !== undefined && line <= lazy.length && lazy.at(line - 1) === tag) return line;
  const found = findTag(source, tag);
  if (line !== undefined) {
    const total = lazy.length;
    const actualTag = line <= total ? lazy.at(line - 1) : undefined;
    const actual = actualTag !== undefined ? `line ${line} has tag ${actualTag}` : `the file has only ${plural(total, "line")}`;
    const where = found.length ? `tag ${tag} is now at ${list(found, tag)}` : `no line has tag ${tag} now`;
    throw new ToolError(
      "TAG_MISMATCH",
      `${field}: ${anchor.raw} does not match: ${actual}, and ${where}. Re-read the lines you are editing and use their current tags.`,
      {
        field,
        anchor: anchor.raw,
        ...(actualTag !== undefined ? { actual_tag: actualTag } : {}),
        now_at: found.slice(0, MAX_LISTED).map((n) => `${n}:${tag}`),
      },
    );
  }
  if (found.length === 1) return found[0];
  if (found.length === 0) {
    throw new ToolError(
      "TAG_NOT_FOUND",
      `${field}: no line has tag ${tag}. The file may have changed since you read it: re-read it and use the current tags.`,
      {
        field,
        anchor: anchor.raw,
      },
    );
  }
  throw new ToolError("TAG_AMBIGUOUS", `${field}: tag ${tag} is on ${found.length} lines (${list(found, tag)}); use the line:tag form to say which one.`, {
    field,
    anchor: anchor.raw,
    candidates: found.slice(0, MAX_LISTED).map((n) => `${n}:${tag}`),
  });
}
