import { ToolError } from "../errors.js";

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

/** How many candidate lines a message lists before "…": enough to pick from, short enough to read. */
const MAX_LISTED = 20;

function list(lines: number[], tag: string): string {
  const shown = lines.slice(0, MAX_LISTED).map((n) => `${n}:${tag}`).join(", ");
  return lines.length > MAX_LISTED ? `${shown}, … (${lines.length} in all)` : shown;
}

/** The 1-based line an anchor names in the snapshot whose line tags are `tags`. */
export function resolveAnchor(anchor: Anchor, source: readonly string[] | TagSource, field: string): number {
  const { tag, line } = anchor;
  const lazy = tagSource(source);
  if (line !== undefined && line <= lazy.length && lazy.at(line - 1) === tag) return line;
  const tags = lazy.all();
  if (line !== undefined) {
    const now = linesWithTag(tags, tag);
    const actual = line <= tags.length ? `line ${line} has tag ${tags[line - 1]}` : `the file has only ${tags.length} lines`;
    const where = now.length ? `tag ${tag} is now at ${list(now, tag)}` : `no line has tag ${tag} now`;
    throw new ToolError("TAG_MISMATCH", `${field}: ${anchor.raw} does not match: ${actual}, and ${where}. Re-read the lines you are editing and use their current tags.`, {
      field,
      anchor: anchor.raw,
      ...(line <= tags.length ? { actual_tag: tags[line - 1] } : {}),
      now_at: now.map((n) => `${n}:${tag}`),
    });
  }
  const found = linesWithTag(tags, tag);
  if (found.length === 1) return found[0];
  if (found.length === 0) {
    throw new ToolError("TAG_NOT_FOUND", `${field}: no line has tag ${tag}. The file may have changed since you read it: re-read it and use the current tags.`, {
      field,
      anchor: anchor.raw,
    });
  }
  throw new ToolError("TAG_AMBIGUOUS", `${field}: tag ${tag} is on ${found.length} lines (${list(found, tag)}); use the line:tag form to say which one.`, {
    field,
    anchor: anchor.raw,
    candidates: found.map((n) => `${n}:${tag}`),
  });
}
