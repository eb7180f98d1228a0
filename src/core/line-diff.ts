/**
 * The line diff behind every line-level git tool (SPEC 8) and every unified diff (render.ts): two versions of a file
 * become change ranges, JetBrains' `Range` semantics. A range is a maximal run of new lines [start, end) replacing old
 * lines [oldStart, oldEnd) (0-based, half-open here; the wire is 1-based, see rangeJson), `added` when no old line
 * goes, `deleted` when no new line comes (it sits before new line `start`, that is after 1-based new line `start`),
 * `modified` otherwise.
 *
 * Algorithm: git's, so ranges sit where `git diff --histogram` puts them: the sequence diff (sequence-diff.ts: xdiff's
 * histogram over the whole file, then every ambiguous group slid where git's indent heuristic puts it) of the lines as
 * interned keys. The property tests (test/property/line-diff.test.ts) compare the ranges with git's on random edits.
 *
 * Lines compare as git compares them: as bytes, terminator included (LineIds.keysOf), so `b\r\n` and `b\n` are
 * different lines unless git converts this path's line endings (`cr: "ignore"`: core.autocrlf, `.gitattributes`
 * text/eol, where `git diff` sees the worktree after its clean filter). One rule departs from git, JetBrains' (eolImplied):
 * a last line without newline compares as the same line with LF, so appending to such a file (of LF lines) is an
 * addition (git shows the old last line removed and added again), and a change of only the final newline is a modified
 * last line (`eolPairs`).
 */
import type { Block } from "./diff-compact.js";
import type { Layout } from "./range-layout.js";
import { Interner, Occurrences, diffBlocks, histogram } from "./sequence-diff.js";
import type { Eol } from "./text.js";

/** Lines of one version as splitText gives them: `lines[i]` without its terminator, `eols[i]` the terminator. */
export interface LineSeq {
  readonly lines: readonly string[];
  readonly eols: readonly ("" | Eol)[];
}

export type CrPolicy = "exact" | "ignore";
export type RangeKind = "added" | "deleted" | "modified";

export interface ChangeRange {
  /** 1..k in file order. */
  id: number;
  kind: RangeKind;
  /** New lines [start, end), 0-based; empty for `deleted`. */
  start: number;
  end: number;
  /** Old lines [oldStart, oldEnd), 0-based; empty for `added`. */
  oldStart: number;
  oldEnd: number;
  /**
   * (old, new) lines of the range whose content is equal and only the terminator differs (CRLF against LF, or the final
   * newline): fixed pairs, in order.
   */
  eolPairs: readonly (readonly [number, number])[];
}

export interface LineDiff {
  readonly old: LineSeq;
  readonly new: LineSeq;
  readonly cr: CrPolicy;
  readonly ranges: readonly ChangeRange[];
  /** For each new line outside every range, the old line it equals (terminator included); -1 inside a range. */
  readonly oldOf: Int32Array;
  /** For each old line outside every range, the new line it equals; -1 inside a range. */
  readonly newOf: Int32Array;
  /** Each line as the diff compared it (LineIds.keysOf): equal keys, lines the diff may swap. */
  readonly oldKeys: Int32Array;
  readonly newKeys: Int32Array;
  /** Each modified range's layout (line-pairs.ts's layoutOf), computed on first use and kept as long as the diff is. */
  readonly layouts: Map<ChangeRange, Layout>;
}

export function sameEol(a: "" | Eol, b: "" | Eol, cr: CrPolicy): boolean {
  if (a === b) return true;
  return cr === "ignore" && a !== "" && b !== "";
}

/**
 * Terminators of matched lines old[x] and new[y] that differ without it being a change of that line: a last line
 * without newline that the other version continues after (so it must end there). Appending to a file that lacked
 * its final newline is an addition, not also a modification of the old last line (git shows that line removed and
 * added again; JetBrains and this diff do not).
 */
export function eolImplied(old: LineSeq, now: LineSeq, x: number, y: number): boolean {
  return (old.eols[x] === "" && y < now.lines.length - 1) || (now.eols[y] === "" && x < old.lines.length - 1);
}

/**
 * Line contents as small integers (equal content, equal id), so a diff compares and indexes numbers. Hashing the lines
 * is most of a diff's cost: the diffs of one file's versions share one table so each version is hashed once (a table
 * only grows; drop it for a new one when it holds many times the file's lines).
 */
export class LineIds {
  private readonly interner = new Interner();
  private readonly cache = new WeakMap<LineSeq, Int32Array>();
  private readonly positions = new WeakMap<LineSeq, Int32Array>();
  private readonly keyed = { exact: new WeakMap<LineSeq, Int32Array>(), ignore: new WeakMap<LineSeq, Int32Array>() };

  get size(): number {
    return this.interner.size;
  }

  /** Keys run below this: a line's content id times two, plus one for a CRLF terminator (keysOf). */
  get keySpace(): number {
    return 2 * this.interner.size;
  }

  /**
   * The ids of a version's lines. With `like`, a version already hashed that this one was edited from, each line is
   * first compared with the line of `like` where the alignment so far says it should be: an equal string costs one
   * comparison instead of hashing it (about 3x faster on a 5,000-line file with 60 changes, measured), and a miss
   * hashes it and realigns on where `like` has that line.
   */
  of(seq: LineSeq, like?: LineSeq): Int32Array {
    let ids = this.cache.get(seq);
    if (ids) return ids;
    ids = new Int32Array(seq.lines.length);
    const likeIds = like && this.cache.get(like);
    const ref = likeIds ? like!.lines : [];
    const posOf = likeIds ? this.positionsOf(like!, likeIds) : new Int32Array(0);
    let delta = 0;
    for (let i = 0; i < ids.length; i++) {
      const line = seq.lines[i];
      const p = i + delta;
      if (p >= 0 && p < ref.length && ref[p] === line) {
        ids[i] = likeIds![p];
        continue;
      }
      // An id below posOf.length was known when `like` was hashed: realign on where `like` has it.
      const id = this.interner.id(line);
      if (id < posOf.length && posOf[id] >= 0) delta = posOf[id] - i;
      ids[i] = id;
    }
    this.cache.set(seq, ids);
    return ids;
  }

  /**
   * The lines as git compares them, content and terminator: `2 * id`, plus one for a CRLF under `cr: "exact"` (under
   * "ignore" CRLF is LF, as after git's clean filter). A last line without terminator compares as the same line with
   * LF, the one rule that is not git's (see the header): the same in every version, so two byte-identical last lines
   * always match.
   */
  keysOf(seq: LineSeq, cr: CrPolicy, like?: LineSeq): Int32Array {
    let keys = this.keyed[cr].get(seq);
    if (keys) return keys;
    const ids = this.of(seq, like);
    keys = new Int32Array(ids.length);
    for (let i = 0; i < ids.length; i++) keys[i] = 2 * ids[i] + (cr === "exact" && seq.eols[i] === "\r\n" ? 1 : 0);
    this.keyed[cr].set(seq, keys);
    return keys;
  }

  /** For each id known when `seq` was hashed, a line of `seq` that has it (-1 if none). */
  private positionsOf(seq: LineSeq, ids: Int32Array): Int32Array {
    let pos = this.positions.get(seq);
    if (pos) return pos;
    pos = new Int32Array(this.interner.size).fill(-1);
    for (let i = ids.length - 1; i >= 0; i--) pos[ids[i]] = i;
    this.positions.set(seq, pos);
    return pos;
  }
}

/**
 * The diff of two versions. `cr` is how their terminators compare; `oldCr` overrides it for the old side: a diff of
 * git's form (HEAD, the index) against the worktree of a path git converts compares the old side as it is, the new
 * one after the clean filter (`{cr: "ignore", oldCr: "exact"}`), as `git diff` does.
 */
export function diffLines(old: LineSeq, now: LineSeq, opts: { cr?: CrPolicy; oldCr?: CrPolicy; ids?: LineIds } = {}): LineDiff {
  const cr = opts.cr ?? "exact";
  const ids = opts.ids ?? new LineIds();
  const a = ids.keysOf(old, opts.oldCr ?? cr);
  const b = ids.keysOf(now, cr, old);
  const tables = new Occurrences(ids.keySpace);
  const diff = build(old, now, cr, diffBlocks({ keys: a, lines: old.lines }, { keys: b, lines: now.lines }, tables), a, b);
  for (const r of diff.ranges) if (r.kind === "modified") r.eolPairs = contentPairs(ids, tables, diff, r);
  return diff;
}

/** Ranges from matched blocks: the gaps between them, plus matched lines whose terminators differ (the final newline). */
function build(old: LineSeq, now: LineSeq, cr: CrPolicy, blocks: Block[], oldKeys: Int32Array, newKeys: Int32Array): LineDiff {
  const oldOf = new Int32Array(now.lines.length).fill(-1);
  const newOf = new Int32Array(old.lines.length).fill(-1);
  const ranges: ChangeRange[] = [];
  let open: { start: number; end: number; oldStart: number; oldEnd: number; eolPairs: [number, number][] } | undefined;
  const extend = (oldStart: number, oldEnd: number, start: number, end: number) => {
    if (open) {
      open.oldEnd = oldEnd;
      open.end = end;
    } else open = { start, end, oldStart, oldEnd, eolPairs: [] };
  };
  const close = () => {
    if (!open) return;
    const kind: RangeKind = open.oldEnd === open.oldStart ? "added" : open.end === open.start ? "deleted" : "modified";
    ranges.push({ id: ranges.length + 1, kind, ...open });
    open = undefined;
  };
  let i = 0;
  let j = 0;
  for (const [x, y, n] of [...blocks, [old.lines.length, now.lines.length, 0] as Block]) {
    if (x > i || y > j) extend(i, x, j, y);
    for (let k = 0; k < n; k++) {
      if (sameEol(old.eols[x + k], now.eols[y + k], cr) || eolImplied(old, now, x + k, y + k)) {
        close();
        oldOf[y + k] = x + k;
        newOf[x + k] = y + k;
      } else {
        extend(x + k, x + k + 1, y + k, y + k + 1);
        open!.eolPairs.push([x + k, y + k]);
      }
    }
    i = x + n;
    j = y + n;
  }
  close();
  return { old, new: now, cr, ranges, oldOf, newOf, oldKeys, newKeys, layouts: new Map() };
}

/**
 * The fixed pairs of a modified range: the lines matched with another terminator (the final newline), and, between
 * them, the lines whose content alone is equal (a line whose CR came or went), by a histogram diff of the contents.
 */
function contentPairs(ids: LineIds, tables: Occurrences, diff: LineDiff, r: ChangeRange): [number, number][] {
  const a = ids.of(diff.old);
  const b = ids.of(diff.new);
  const out: [number, number][] = [];
  let o = r.oldStart;
  let n = r.start;
  for (const [po, pn] of [...r.eolPairs, [r.oldEnd, r.end] as const]) {
    for (const [x, y, len] of histogram(a, b, tables, [o, po, n, pn])) for (let k = 0; k < len; k++) out.push([x + k, y + k]);
    if (po < r.oldEnd) out.push([po, pn]);
    o = po + 1;
    n = pn + 1;
  }
  return out;
}

/** The range holding new line `line` (0-based), by binary search; undefined for an unchanged line. */
export function rangeAtLine(diff: LineDiff, line: number): ChangeRange | undefined {
  const r = diff.ranges;
  let lo = 0;
  let hi = r.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (r[mid].end <= line) lo = mid + 1;
    else if (r[mid].start > line) hi = mid - 1;
    else return r[mid];
  }
  return undefined;
}

/**
 * Does a change [s,e) of another diff fall in region [from,to) of this one (both on the same side)? A region with lines
 * takes changes sharing a line and points (pure deletions) within or on its edges; a point region (a deletion's place)
 * takes only a deletion at the same place or a change spanning across it, never a change of a line next to it.
 */
export function regionHit(from: number, to: number, s: number, e: number): boolean {
  if (from === to) return s === e ? s === from : s < from && from < e;
  return s === e ? from <= s && s <= to : s < to && from < e;
}

/**
 * The wire form of a range (SPEC 8): 1-based inclusive lines, `end = start - 1` on an empty side, `after` for a
 * deletion (the new line it sits after, 0 for the top). `oldName` prefixes the old side: "head" for `head_start`.
 */
export type RangeJson = { range: number; kind: RangeKind; start: number; end: number; after?: number; eol_changed?: true } & Record<string, unknown>;

export function rangeJson(r: ChangeRange, oldName = "head"): RangeJson {
  // HEAD's with literal keys: an object of computed keys is slow to build, copy and serialize, and the line-changing
  // tools answer with one per range.
  const out: RangeJson =
    oldName === "head"
      ? { range: r.id, kind: r.kind, start: r.start + 1, end: r.end, head_start: r.oldStart + 1, head_end: r.oldEnd }
      : { range: r.id, kind: r.kind, start: r.start + 1, end: r.end, [`${oldName}_start`]: r.oldStart + 1, [`${oldName}_end`]: r.oldEnd };
  if (r.kind === "deleted") out.after = r.start;
  if (r.eolPairs.length) out.eol_changed = true;
  return out;
}
