import fuzzysort from "fuzzysort";
import { TYPO_MIN_TERM, commonPrefix, dropsNeeded, maxTypoEdits, substringEditDistance } from "./typo.js";

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
 *   4. only when those found little (fewer than TYPO_FALLBACK_BELOW): every term is a subsequence of the file name once one of its letters is
 *      dropped, and the term with the typo is near a part of the name (a typo: `dispatcehr`, `UserSrevice`, `fiel_write`; see typo.ts);
 *   5. every term is a subsequence of the path, scattered across folders. Last, below typos of the name: on a large tree
 *      nearly any query is scattered somewhere (`UserSrevice` in test/user/test/dto/price/serviceStream.md), and a
 *      name one letter off is the likelier file.
 * `_`, `-`, `.` and a space inside a path are one separator to the matcher (`file_write` finds `file-write.ts`); spaces in
 * the query separate terms, which must all match.
 */

/** Prepared targets kept between queries (half for names, half for paths); a prepared path is about 0.9 KB, so under 35 MB. */
const PREPARED_CACHE_MAX = 40_000;

const TIER_NAME_SUBSTRING = 3000;
const TIER_PATH_SUBSTRING = 2000;
const TIER_NAME_FUZZY = 1000;
const TIER_PATH_FUZZY = 0;
/** The typo tier is searched only when the exact name and fragment tiers found fewer: "little", so a typo is likely. */
const TYPO_FALLBACK_BELOW = 5;
/** Below every exact tier (tiers are taken in order, so scores are only compared within one). */
const TIER_TYPO = -10_000;
/** Per letter of the term that starts the name exactly, in the typo tier: `dispatcehr` keeps `dispatc` of dispatcher.ts. */
const TYPO_PREFIX_WEIGHT = 20;
/** Per letter the name's length (or its stem's) differs from the query's, in the typo tier: a typo keeps the length. */
const TYPO_LENGTH_WEIGHT = 10;
/** Per edit between the terms and the name, in the typo tier: more than any prefix or length difference can make up. */
const TYPO_EDIT_WEIGHT = 1000;
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
  /** The paths of `hits` that match only with one letter of a term dropped (a typo), in rank order. */
  approximate: string[];
}

export class FuzzyIndex {
  private readonly lower: string[];
  private readonly masks: Int32Array;
  private readonly nameMasks: Int32Array;
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
    this.nameMasks = new Int32Array(n);
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
        this.nameMasks[i] = previous.nameMasks[at];
        this.nameStart[i] = previous.nameStart[at];
        this.penalty[i] = previous.penalty[at];
        o = at + 1;
        continue;
      }
      const lower = normalized(p.toLowerCase());
      this.lower[i] = lower;
      this.masks[i] = maskOf(lower);
      this.nameStart[i] = p.lastIndexOf("/") + 1;
      this.nameMasks[i] = maskOf(lower.slice(this.nameStart[i]));
      this.penalty[i] = depthPenalty(p);
    }
  }

  /**
   * Ranks the paths matching `query` (terms separated by spaces must all match); `accept` restricts the candidates
   * (a folder, a glob) by index.
   */
  search(query: string, limit: number, accept?: (path: string) => boolean): FuzzyResult {
    const words = query.split(/\s+/).filter(Boolean).map(normalized);
    const terms = [...new Set(words.map((w) => w.toLowerCase()))];
    if (!terms.length) return { hits: [], total: 0, approximate: [] };
    const fuzzyQuery = words.join(" ");
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
      (i: number) => TIER_NAME_FUZZY + this.fuzzyScore(fuzzyQuery, i, true),
      (i: number) => TIER_PATH_FUZZY + this.fuzzyScore(fuzzyQuery, i, false),
    ];
    // exact matches of the name or a path fragment, then typos of the name, then exact subsequences scattered across folders
    for (let t = 0; t < 3 && hits.length < limit; t++) hits.push(...best(tiers[t], scorers[t], limit - hits.length, this.paths));
    const approximate: string[] = [];
    let scattered = tiers[3];
    if (hits.length < Math.min(limit, TYPO_FALLBACK_BELOW)) {
      const typos = this.typoCandidates(terms, accept);
      for (const i of typos) if (!allSubsequences(terms, this.lower[i], 0)) total++; // the others are counted in tier 4
      const shown = new Set<number>();
      for (const [i, h] of this.bestTypos(typos, terms, limit - hits.length)) {
        hits.push(h);
        approximate.push(h.path);
        shown.add(i);
      }
      if (shown.size) scattered = scattered.filter((i) => !shown.has(i));
    }
    if (hits.length < limit) hits.push(...best(scattered, scorers[3], limit - hits.length, this.paths));
    fuzzysort.cleanup(); // its cache of prepared queries would otherwise grow with every distinct query
    return { hits, total, approximate };
  }

  /**
   * Paths no exact tier took whose file name holds every term once one letter of it is dropped. A path fragment (a term
   * with `/`) has no typo form. The masks let a name lacking two of a term's letters out without a scan.
   */
  private typoCandidates(terms: string[], accept?: (path: string) => boolean): number[] {
    if (!terms.some((t) => t.length >= TYPO_MIN_TERM) || terms.some((t) => t.includes("/"))) return [];
    const termMasks = terms.map(maskOf);
    const out: number[] = [];
    for (let i = 0; i < this.lower.length; i++) {
      const lower = this.lower[i];
      const start = this.nameStart[i];
      const nameMask = this.nameMasks[i];
      let typos = 0; // one typo per query: two, and nearly any name matches a short query
      let typoTerm = "";
      for (let k = 0; k < terms.length && typos < 2; k++) {
        const term = terms[k];
        const missing = termMasks[k] & ~nameMask;
        if ((missing & (missing - 1)) !== 0) typos = 2; // two of its letters absent
        else if (term.length < TYPO_MIN_TERM) typos = missing === 0 && isSubsequence(term, lower, start) ? typos : 2;
        else {
          const drops = dropsNeeded(term, lower, start);
          typos += drops;
          if (drops) typoTerm = term;
        }
      }
      // typos 0: the name holds every term, an exact tier has it; a path whose terms are only scattered across folders
      // (tier 5) is taken here too, as the better match
      if (typos !== 1 || allSubstrings(terms, lower, 0)) continue;
      if (substringEditDistance(typoTerm, lower, start) > maxTypoEdits(typoTerm.length)) continue; // held scattered, not near
      if (accept && !accept(this.paths[i])) continue;
      out.push(i);
    }
    return out;
  }

  /**
   * The `need` best typo hits: fewest edits from the terms to parts of the name first, then how much of the name the
   * terms start exactly, a name about as long as the query, a shallow path.
   */
  private bestTypos(candidates: number[], terms: string[], need: number): [number, FuzzyHit][] {
    const queryLength = terms.reduce((n, t) => n + t.length, 0);
    const score = (i: number) => {
      const lower = this.lower[i];
      const start = this.nameStart[i];
      let prefix = 0;
      let edits = 0;
      for (const t of terms) {
        prefix = Math.max(prefix, commonPrefix(t, lower, start));
        edits += substringEditDistance(t, lower, start);
      }
      const dot = this.paths[i].lastIndexOf(".");
      const stemLength = dot > start ? dot - start : lower.length - start;
      const misfit = Math.min(Math.abs(lower.length - start - queryLength), Math.abs(stemLength - queryLength));
      return TIER_TYPO - edits * TYPO_EDIT_WEIGHT + prefix * TYPO_PREFIX_WEIGHT - misfit * TYPO_LENGTH_WEIGHT - this.penalty[i];
    };
    const byPath = new Map(candidates.map((i) => [this.paths[i], i]));
    return best(candidates, score, need, this.paths).map((h) => [byPath.get(h.path) as number, h]);
  }

  /** Within a substring tier: an exact name, then a name that starts with the query, then a match at a word start; shallow and short first. */
  private substringScore(i: number, terms: string[], from: number): number {
    const lower = this.lower[i];
    const path = this.paths[i];
    const start = this.nameStart[i];
    const nameLength = lower.length - start;
    const dot = path.lastIndexOf(".");
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

  /** The path (or its name) prepared for fuzzysort, separators made alike as in `lower`, case kept for its word starts. */
  private prepared(i: number, nameOnly: boolean): Fuzzysort.Prepared {
    const cache = nameOnly ? this.preparedName : this.preparedPath;
    let prepared = cache.get(i);
    if (!prepared) {
      if (cache.size >= PREPARED_CACHE_MAX / 2) cache.clear();
      prepared = fuzzysort.prepare(normalized(nameOnly ? this.paths[i].slice(this.nameStart[i]) : this.paths[i]));
      cache.set(i, prepared);
    }
    return prepared;
  }

  private fuzzyScore(query: string, i: number, nameOnly: boolean): number {
    const result = fuzzysort.single(query, this.prepared(i, nameOnly));
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

/** `_`, `.` and a space become `-`: separators people mix up (`file_write` for `file-write.ts`) compare equal. */
function normalized(text: string): string {
  return SEPARATORS.test(text) ? text.replace(SEPARATORS_ALL, "-") : text;
}
const SEPARATORS = /[_. ]/;
const SEPARATORS_ALL = /[_. ]/g;

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
