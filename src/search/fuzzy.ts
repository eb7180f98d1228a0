import fuzzysort from "fuzzysort";

/**
 * Fuzzy file-path matching over a workspace's paths (pure: strings in, ranked strings out).
 *
 * One cheap pass over every path sorts the ones that match into tiers; fuzzysort only scores the tiers that can still
 * reach the top `limit`, and its prepared targets are built lazily and kept in a bounded cache. Preparing all 100,000
 * paths up front costs about 100 MB of heap; this index holds a lower-cased copy, a character mask and a basename offset.
 *
 * Tiers, best first (OCR's file_find semantics are the first one):
 *   1. every term is a substring of the file name (`service` -> `UserService.ts`);
 *   2. every term is a substring of the path (a path fragment: `user/serv`, a folder name);
 *   3. every term is a subsequence of the file name (an abbreviation: `usrsvc` -> `UserService.ts`);
 *   4. every term is a subsequence of the path, scattered across folders.
 */

/** Prepared targets kept between queries (half for names, half for paths); a prepared path is about 0.9 KB, so under 35 MB. */
const PREPARED_CACHE_MAX = 40_000;

const TIER_NAME_SUBSTRING = 3000;
const TIER_PATH_SUBSTRING = 2000;
const TIER_NAME_FUZZY = 1000;
const TIER_PATH_FUZZY = 0;
/** fuzzysort's 0..1 score, scaled to order candidates within a tier without crossing into the next. */
const FUZZY_WEIGHT = 500;
/** Per character of a file name in the abbreviation tier; 100 characters cost less than one tier step. */
const NAME_LENGTH_WEIGHT = 1;

export interface FuzzyHit {
  path: string;
  score: number;
}

export interface FuzzyResult {
  hits: FuzzyHit[];
  /** Every path that matched, before `limit`. */
  total: number;
}

export class FuzzyIndex {
  private readonly lower: string[];
  private readonly masks: Int32Array;
  private readonly nameStart: Uint32Array;
  /** depthPenalty of each path, computed once. */
  private readonly penalty: Float32Array;
  private readonly preparedPath = new Map<number, Fuzzysort.Prepared>();
  private readonly preparedName = new Map<number, Fuzzysort.Prepared>();

  /**
   * `previous`: the index of an earlier generation. The VFS lists paths in insertion order, so a new generation is the
   * old list with some paths gone and new ones appended; what is unchanged is copied instead of recomputed.
   */
  constructor(readonly paths: readonly string[], previous?: FuzzyIndex) {
    const n = paths.length;
    this.lower = new Array<string>(n);
    this.masks = new Int32Array(n);
    this.nameStart = new Uint32Array(n);
    this.penalty = new Float32Array(n);
    const old = previous?.paths ?? [];
    let o = 0;
    for (let i = 0; i < n; i++) {
      const p = paths[i];
      const at = findAhead(old, p, o);
      if (at >= 0 && previous) {
        this.lower[i] = previous.lower[at];
        this.masks[i] = previous.masks[at];
        this.nameStart[i] = previous.nameStart[at];
        this.penalty[i] = previous.penalty[at];
        o = at + 1;
        continue;
      }
      const lower = p.toLowerCase();
      this.lower[i] = lower;
      this.masks[i] = maskOf(lower);
      this.nameStart[i] = p.lastIndexOf("/") + 1;
      this.penalty[i] = depthPenalty(p);
    }
  }

  /**
   * Ranks the paths matching `query` (terms separated by spaces must all match); `accept` restricts the candidates
   * (a folder, a glob) by index.
   */
  search(query: string, limit: number, accept?: (path: string) => boolean): FuzzyResult {
    const terms = [...new Set(query.toLowerCase().split(/\s+/).filter(Boolean))];
    if (!terms.length) return { hits: [], total: 0 };
    const mask = maskOf(terms.join(""));
    const tiers: number[][] = [[], [], [], []];
    let total = 0;
    // Hot loop over every path: plain loops, the cheap native indexOf tests first (a substring is also a subsequence).
    for (let i = 0; i < this.lower.length; i++) {
      if ((this.masks[i] & mask) !== mask) continue;
      const lower = this.lower[i];
      const start = this.nameStart[i];
      let tier: number;
      if (allSubstrings(terms, lower, start)) tier = 0;
      else if (allSubstrings(terms, lower, 0)) tier = 1;
      else if (!allSubsequences(terms, lower, 0)) continue;
      else tier = allSubsequences(terms, lower, start) ? 2 : 3;
      if (accept && !accept(this.paths[i])) continue;
      total++;
      tiers[tier].push(i);
    }

    const hits: FuzzyHit[] = [];
    const scorers = [
      (i: number) => TIER_NAME_SUBSTRING + this.substringScore(i, terms, this.nameStart[i]),
      (i: number) => TIER_PATH_SUBSTRING + this.substringScore(i, terms, 0),
      (i: number) => TIER_NAME_FUZZY + this.fuzzyScore(query, i, true),
      (i: number) => TIER_PATH_FUZZY + this.fuzzyScore(query, i, false),
    ];
    for (let t = 0; t < tiers.length && hits.length < limit; t++) {
      hits.push(...best(tiers[t], scorers[t], limit - hits.length, this.paths));
    }
    fuzzysort.cleanup(); // its cache of prepared queries would otherwise grow with every distinct query
    return { hits, total };
  }

  /** Within a substring tier: an exact name, then a name that starts with the query, then a match at a word start; shallow and short first. */
  private substringScore(i: number, terms: string[], from: number): number {
    const lower = this.lower[i];
    const path = this.paths[i];
    const start = this.nameStart[i];
    const nameLength = lower.length - start;
    const dot = lower.lastIndexOf(".");
    const stemLength = dot > start ? dot - start : nameLength;
    let score = 0;
    for (const t of terms) {
      const at = lower.indexOf(t, from);
      if (at === start && t.length === nameLength) score += 400;
      else if (at === start && t.length === stemLength) score += 350;
      else if (at === start) score += 300;
      else if (isWordStart(path, at)) score += 200;
      else score += 100;
    }
    return score / terms.length - this.penalty[i];
  }

  private fuzzyScore(query: string, i: number, nameOnly: boolean): number {
    const cache = nameOnly ? this.preparedName : this.preparedPath;
    let prepared = cache.get(i);
    if (!prepared) {
      if (cache.size >= PREPARED_CACHE_MAX / 2) cache.clear();
      prepared = fuzzysort.prepare(nameOnly ? this.paths[i].slice(this.nameStart[i]) : this.paths[i]);
      cache.set(i, prepared);
    }
    const result = fuzzysort.single(query, prepared);
    // a shorter name is a tighter fit for the same abbreviation: UserService.ts before UserServiceSettings.ts
    const looseness = nameOnly ? (this.paths[i].length - this.nameStart[i]) * NAME_LENGTH_WEIGHT : 0;
    return (result?.score ?? 0) * FUZZY_WEIGHT - looseness - this.penalty[i];
  }
}

/** Paths removed between generations a reuse scan skips over before taking a path as new; bounds the work per path. */
const REUSE_LOOKAHEAD = 64;

function findAhead(old: readonly string[], path: string, from: number): number {
  const end = Math.min(old.length, from + REUSE_LOOKAHEAD);
  for (let k = from; k < end; k++) if (old[k] === path) return k;
  return -1;
}

/** The `need` best of `indices`: only the scores at or above the need-th best are built into hits and sorted. */
function best(indices: number[], score: (i: number) => number, need: number, paths: readonly string[]): FuzzyHit[] {
  const scores = new Float64Array(indices.length);
  for (let k = 0; k < indices.length; k++) scores[k] = score(indices[k]);
  const cut = indices.length > need ? kthLargest(scores, need) : -Infinity;
  const hits: FuzzyHit[] = [];
  for (let k = 0; k < indices.length; k++) if (scores[k] >= cut) hits.push({ path: paths[indices[k]], score: scores[k] });
  return hits.sort(compareHits).slice(0, need);
}

/** The k-th largest score: one pass keeping the k best in a small sorted array (k is a result limit, usually 20). */
function kthLargest(scores: Float64Array, k: number): number {
  const top: number[] = []; // ascending
  for (let j = 0; j < scores.length; j++) {
    const v = scores[j];
    if (top.length === k && v <= top[0]) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (top[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, v);
    if (top.length > k) top.shift();
  }
  return top[0];
}

/** Deeper and longer paths lose ties: the file you mean is usually nearer the top. Small enough never to cross a tier step. */
function depthPenalty(path: string): number {
  let depth = 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) depth++;
  return depth * 2 + path.length * 0.01;
}

function compareHits(a: FuzzyHit, b: FuzzyHit): number {
  return b.score - a.score || a.path.length - b.path.length || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/** One bit per letter, one for digits, one for anything else: a path lacking a bit of the query cannot match it. */
function maskOf(lower: string): number {
  let mask = 0;
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    if (c >= 97 && c <= 122) mask |= 1 << (c - 97);
    else if (c >= 48 && c <= 57) mask |= 1 << 26;
    else if (c !== 32) mask |= 1 << 27;
  }
  return mask;
}

function allSubstrings(terms: string[], lower: string, from: number): boolean {
  for (let k = 0; k < terms.length; k++) if (lower.indexOf(terms[k], from) < 0) return false;
  return true;
}

function allSubsequences(terms: string[], lower: string, from: number): boolean {
  for (let k = 0; k < terms.length; k++) if (!isSubsequence(terms[k], lower, from)) return false;
  return true;
}

function isSubsequence(term: string, lower: string, from: number): boolean {
  let at = from;
  for (let k = 0; k < term.length; k++) {
    at = lower.indexOf(term[k], at);
    if (at < 0) return false;
    at++;
  }
  return true;
}

/** A match starting a word: after a separator, or an upper-case letter after a lower-case one (camelCase). */
function isWordStart(path: string, at: number): boolean {
  if (at <= 0) return true;
  const before = path.charCodeAt(at - 1);
  const here = path.charCodeAt(at);
  const beforeAlnum = (before >= 48 && before <= 57) || (before >= 65 && before <= 90) || (before >= 97 && before <= 122);
  return !beforeAlnum || (here >= 65 && here <= 90 && before >= 97 && before <= 122);
}
