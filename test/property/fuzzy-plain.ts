/**
 * The find_file matcher as it was before its scan took folder-level letter masks and a byte buffer of names (commit
 * f7376f3, src/search/fuzzy.ts): every path tested by its whole-path mask, then by strings. Kept as the oracle that
 * fuzzy-fast-path.test.ts compares the index against; not used by the daemon.
 */
import fuzzysort from "fuzzysort";
import { TYPO_MIN_TERM, commonPrefix, dropsNeeded, maxTypoEdits, substringEditDistance } from "../../src/search/typo.js";

/**
 * Fuzzy file-path matching over a workspace's paths (pure: strings in, ranked strings out).
 *
 * Incremental: paths are added and removed one by one as the VFS index changes (no rebuild on a new file). Paths are
 * kept by folder: a folder's lower-cased path and character mask once, and per file its name, the name's lower-cased
 * form, masks and depth penalty in typed arrays (slots, reused after a remove). A query is one cheap pass over the
 * slots that sorts the matching ones into tiers, working out what the terms find in each folder's own path once for
 * all its files; fuzzysort only scores the tiers that can still reach the top `limit`, its prepared targets built
 * lazily in a bounded cache. A query that narrows the last one (typing on) scans only the last one's matches.
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

interface FuzzyHit {
  path: string;
  score: number;
}

interface FuzzyResult {
  hits: FuzzyHit[];
  /** Every path that matched, before `limit`. */
  total: number;
  /** The paths of `hits` that match only with one letter of a term dropped (a typo), in rank order. */
  approximate: string[];
}

/** A folder's share of every path in it, kept once for all its files. */
interface Folder {
  /** As given; "" for the root. */
  path: string;
  /** normalized(lower-cased path) and a `/`; "" for the root: `lower + nameLower` is the path's matching form. */
  lower: string;
  mask: number;
  /** Its mask and its files' (kept through removes: a superset), so a query lacking a letter of it skips them all. */
  union: number;
  /** The slots of its files. */
  slots: number[];
}

/** The last query's candidates (every path that matched an exact tier), for a query that narrows it. */
interface LastScan {
  terms: string[];
  scope: string;
  /** Slots, ascending by the order they were scanned in. */
  slots: Int32Array;
  /** Slots added since: scanned on top. */
  added: number[];
}

/** Slots added after a scan that the next one still narrows from; past this a full scan is as cheap. */
const ADDED_SINCE_SCAN_MAX = 10_000;

export class PlainFuzzyIndex {
  private readonly folders: Folder[] = [];
  private readonly folderIds = new Map<string, number>();
  /** Per slot (a file): its folder, name, the name's matching form, masks, depthPenalty. A free slot's name is undefined. */
  private folderOf = new Int32Array(1024);
  private readonly names: (string | undefined)[] = [];
  private readonly nameLower: string[] = [];
  private masks = new Int32Array(1024);
  private nameMasks = new Int32Array(1024);
  private penalty = new Float32Array(1024);
  private readonly free: number[] = [];
  private count = 0;
  private readonly preparedPath = new Map<number, Fuzzysort.Prepared>();
  private readonly preparedName = new Map<number, Fuzzysort.Prepared>();
  private last?: LastScan;
  /** The folder the last add went to (see folderOfPath). */
  private lastFolder = -1;

  constructor(paths: Iterable<string> = []) {
    for (const p of paths) this.add(p);
  }

  get size(): number {
    return this.count;
  }

  /** Adds a path (root-relative, `/`); one already in is left as it is. */
  add(path: string): void {
    const cut = path.lastIndexOf("/");
    const name = path.slice(cut + 1);
    const f = this.folderOfPath(path, cut);
    const folder = this.folders[f];
    if (this.slotIn(folder, name) >= 0) return;
    const slot = this.free.pop() ?? this.names.length;
    if (slot >= this.folderOf.length) this.grow();
    const lower = normalized(name.toLowerCase());
    this.folderOf[slot] = f;
    this.names[slot] = name;
    this.nameLower[slot] = lower;
    this.nameMasks[slot] = maskOf(lower);
    this.masks[slot] = this.nameMasks[slot] | folder.mask;
    this.penalty[slot] = depthPenalty(path);
    folder.slots.push(slot);
    folder.union |= this.nameMasks[slot];
    this.count++;
    if (this.last && this.last.added.push(slot) > ADDED_SINCE_SCAN_MAX) this.last = undefined;
  }

  /** Removes a path; false when it was not in. */
  remove(path: string): boolean {
    const cut = path.lastIndexOf("/");
    const f = this.folderIds.get(cut < 0 ? "" : path.slice(0, cut));
    if (f === undefined) return false;
    const folder = this.folders[f];
    const at = this.slotIn(folder, path.slice(cut + 1));
    if (at < 0) return false;
    const slot = folder.slots[at];
    folder.slots.splice(at, 1);
    this.names[slot] = undefined;
    this.nameLower[slot] = "";
    this.masks[slot] = 0; // no query's mask is 0: scans skip the slot
    this.preparedPath.delete(slot);
    this.preparedName.delete(slot);
    this.free.push(slot);
    this.count--;
    this.last = undefined; // its slots may be reused
    return true;
  }

  private slotIn(folder: Folder, name: string): number {
    const slots = folder.slots;
    for (let k = 0; k < slots.length; k++) if (this.names[slots[k]] === name) return k;
    return -1;
  }

  /** The folder of `path` (its last `/` at `cut`); a listing comes sorted, so it is most often the last one's. */
  private folderOfPath(path: string, cut: number): number {
    const last = this.folders[this.lastFolder];
    if (last && (cut < 0 ? last.path === "" : cut === last.path.length && path.startsWith(last.path))) return this.lastFolder;
    this.lastFolder = this.folderId(cut < 0 ? "" : path.slice(0, cut));
    return this.lastFolder;
  }

  private folderId(dir: string): number {
    let f = this.folderIds.get(dir);
    if (f === undefined) {
      const lower = dir ? `${normalized(dir.toLowerCase())}/` : "";
      const mask = maskOf(lower);
      f = this.folders.push({ path: dir, lower, mask, union: mask, slots: [] }) - 1;
      this.folderIds.set(dir, f);
    }
    return f;
  }

  private grow(): void {
    const n = this.folderOf.length * 2;
    const grown = <T extends Int32Array | Float32Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.folderOf = grown(this.folderOf, (k) => new Int32Array(k));
    this.masks = grown(this.masks, (k) => new Int32Array(k));
    this.nameMasks = grown(this.nameMasks, (k) => new Int32Array(k));
    this.penalty = grown(this.penalty, (k) => new Float32Array(k));
  }

  private pathOf(slot: number): string {
    const dir = this.folders[this.folderOf[slot]].path;
    return dir ? `${dir}/${this.names[slot]}` : (this.names[slot] as string);
  }

  /** The path's matching form: normalized and lower-cased, as one string (only for the few that are scored). */
  private lowerOf(slot: number): string {
    return this.folders[this.folderOf[slot]].lower + this.nameLower[slot];
  }

  /**
   * Ranks the paths matching `query` (terms separated by spaces must all match); `accept` restricts the candidates
   * (a folder, a glob). `scope` names what `accept` accepts: a query in the same scope that narrows the last one (each
   * of its terms inside one of this one's) scans only the paths that one matched, as fzf does while you type.
   */
  search(query: string, limit: number, accept?: (path: string) => boolean, scope: string | undefined = accept ? undefined : ""): FuzzyResult {
    const words = query.split(/\s+/).filter(Boolean).map(normalized);
    const terms = [...new Set(words.map((w) => w.toLowerCase()))];
    if (!terms.length) return { hits: [], total: 0, approximate: [] };
    const fuzzyQuery = words.join(" ");
    const tiers: number[][] = [[], [], [], []];
    const matched = this.scan(terms, tiers, accept, scope);
    let total = tiers[0].length + tiers[1].length + tiers[2].length + tiers[3].length;
    this.last = scope === undefined ? undefined : { terms, scope, slots: matched, added: [] };

    const hits: FuzzyHit[] = [];
    const scorers = [
      (i: number) => TIER_NAME_SUBSTRING + this.substringScore(i, terms, true),
      (i: number) => TIER_PATH_SUBSTRING + this.substringScore(i, terms, false),
      (i: number) => TIER_NAME_FUZZY + this.fuzzyScore(fuzzyQuery, i, true),
      (i: number) => TIER_PATH_FUZZY + this.fuzzyScore(fuzzyQuery, i, false),
    ];
    const pathOf = (i: number) => this.pathOf(i);
    // exact matches of the name or a path fragment, then typos of the name, then exact subsequences scattered across folders
    for (let t = 0; t < 3 && hits.length < limit; t++) hits.push(...best(tiers[t], scorers[t], limit - hits.length, pathOf));
    const approximate: string[] = [];
    let scattered = tiers[3];
    if (hits.length < Math.min(limit, TYPO_FALLBACK_BELOW)) {
      const typos = this.typoCandidates(terms, accept);
      for (const i of typos) if (!this.allSubsequencesOfPath(terms, i)) total++; // the others are counted in tier 4
      const shown = new Set<number>();
      for (const [i, h] of this.bestTypos(typos, terms, limit - hits.length)) {
        hits.push(h);
        approximate.push(h.path);
        shown.add(i);
      }
      if (shown.size) scattered = scattered.filter((i) => !shown.has(i));
    }
    if (hits.length < limit) hits.push(...best(scattered, scorers[3], limit - hits.length, pathOf));
    fuzzysort.cleanup(); // its cache of prepared queries would otherwise grow with every distinct query
    return { hits, total, approximate };
  }

  /**
   * Sorts every path matching an exact tier into `tiers` and returns them all. What the terms find in a folder's own
   * path is worked out once per folder (on its first file), so each file looks at its name only.
   */
  private scan(terms: string[], tiers: number[][], accept: ((path: string) => boolean) | undefined, scope: string | undefined): Int32Array {
    const mask = maskOf(terms.join(""));
    const narrowed = this.narrows(terms, scope);
    const k = terms.length;
    const folderCount = this.folders.length;
    /** Per folder: 1 + whether each term is in its path (bit t), 0 until worked out; and each term's letters it holds. */
    const folderIn = new Int32Array(folderCount);
    const folderSeq = new Int32Array(folderCount * k);
    /** Per folder and term: the letters of what is left of the term once the folder's path took what it could. */
    const folderRest = new Int32Array(folderCount * k);
    const masks = this.masks;
    const nameMasks = this.nameMasks;
    const termMasks = terms.map(maskOf);
    const folderOf = this.folderOf;
    const nameLower = this.nameLower;
    const matched: number[] = [];
    const visit = (i: number): void => {
      const f = folderOf[i];
      let inDir = folderIn[f];
      const folderLower = this.folders[f].lower;
      if (inDir === 0) {
        inDir = 1;
        for (let t = 0; t < k; t++) {
          if (folderLower.indexOf(terms[t]) >= 0) inDir |= 2 << t;
          folderSeq[f * k + t] = subsequencePrefix(terms[t], folderLower);
          folderRest[f * k + t] = maskOf(terms[t].slice(folderSeq[f * k + t]));
        }
        folderIn[f] = inDir;
      }
      const name = nameLower[i];
      // a name lacking a letter of a term holds it neither as a substring nor as a subsequence: no need to look
      const nameMask = nameMasks[i];
      const inName = (nameMask & mask) === mask;
      let tier: number;
      if (inName && allSubstrings(terms, name, 0)) tier = 0;
      else if (allSubstringsOfPath(terms, termMasks, name, nameMask, folderLower, inDir)) tier = 1;
      else {
        for (let t = 0; t < k; t++) {
          const from = folderSeq[f * k + t];
          const rest = folderRest[f * k + t];
          if (from < terms[t].length && ((nameMask & rest) !== rest || !isSubsequenceFrom(terms[t], from, name))) return;
        }
        tier = inName && allSubsequences(terms, name, 0) ? 2 : 3;
      }
      if (accept && !accept(this.pathOf(i))) return;
      tiers[tier].push(i);
      matched.push(i);
    };
    // Hot loop: the masks first (a free slot's is 0), then the cheap native indexOf tests (a substring is also a subsequence).
    if (narrowed) {
      for (const i of narrowed.slots) if ((masks[i] & mask) === mask) visit(i);
      for (const i of narrowed.added) if ((masks[i] & mask) === mask) visit(i);
    } else {
      for (const folder of this.folders) {
        if ((folder.union & mask) !== mask) continue;
        for (const i of folder.slots) if ((masks[i] & mask) === mask) visit(i);
      }
    }
    return Int32Array.from(matched);
  }

  /** The last scan, when every path these terms match is among its matches (each of its terms inside one of these). */
  private narrows(terms: string[], scope: string | undefined): LastScan | undefined {
    const last = this.last;
    if (!last || scope === undefined || last.scope !== scope) return undefined;
    return last.terms.every((t) => terms.some((u) => u.includes(t))) ? last : undefined;
  }

  private allSubsequencesOfPath(terms: string[], i: number): boolean {
    return allSubsequences(terms, this.lowerOf(i), 0);
  }

  /**
   * Paths no exact tier took whose file name holds every term once one letter of it is dropped. A path fragment (a term
   * with `/`) has no typo form. The masks let a name lacking two of a term's letters out without a scan.
   */
  private typoCandidates(terms: string[], accept?: (path: string) => boolean): number[] {
    if (!terms.some((t) => t.length >= TYPO_MIN_TERM) || terms.some((t) => t.includes("/"))) return [];
    const termMasks = terms.map(maskOf);
    const out: number[] = [];
    for (let i = 0; i < this.names.length; i++) {
      if (this.masks[i] === 0) continue; // a free slot
      const name = this.nameLower[i];
      const nameMask = this.nameMasks[i];
      let typos = 0; // one typo per query: two, and nearly any name matches a short query
      let typoTerm = "";
      for (let k = 0; k < terms.length && typos < 2; k++) {
        const term = terms[k];
        const missing = termMasks[k] & ~nameMask;
        if ((missing & (missing - 1)) !== 0)
          typos = 2; // two of its letters absent
        else if (term.length < TYPO_MIN_TERM) typos = missing === 0 && isSubsequence(term, name, 0) ? typos : 2;
        else {
          const drops = dropsNeeded(term, name, 0);
          typos += drops;
          if (drops) typoTerm = term;
        }
      }
      // typos 0: the name holds every term, an exact tier has it; a path whose terms are only scattered across folders
      // (tier 5) is taken here too, as the better match
      if (typos !== 1 || allSubstrings(terms, this.lowerOf(i), 0)) continue;
      if (substringEditDistance(typoTerm, name, 0) > maxTypoEdits(typoTerm.length)) continue; // held scattered, not near
      if (accept && !accept(this.pathOf(i))) continue;
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
      const name = this.nameLower[i];
      let prefix = 0;
      let edits = 0;
      for (const t of terms) {
        prefix = Math.max(prefix, commonPrefix(t, name, 0));
        edits += substringEditDistance(t, name, 0);
      }
      const dot = (this.names[i] as string).lastIndexOf(".");
      const stemLength = dot > 0 ? dot : name.length;
      const misfit = Math.min(Math.abs(name.length - queryLength), Math.abs(stemLength - queryLength));
      return TIER_TYPO - edits * TYPO_EDIT_WEIGHT + prefix * TYPO_PREFIX_WEIGHT - misfit * TYPO_LENGTH_WEIGHT - this.penalty[i];
    };
    return bestSlots(candidates, score, need, (i) => this.pathOf(i)).map((h) => [h.slot, { path: h.path, score: h.score }]);
  }

  /**
   * Within a substring tier: an exact name, then a name that starts with the query, then a match at a word start;
   * shallow and short first. `inName` (the name tier) looks at the name alone, the path tier at the whole path.
   */
  private substringScore(i: number, terms: string[], inName: boolean): number {
    const name = this.names[i] as string;
    const start = inName ? 0 : this.folders[this.folderOf[i]].lower.length;
    const lower = inName ? this.nameLower[i] : this.lowerOf(i);
    const path = inName ? name : this.pathOf(i);
    const nameLength = name.length;
    const dot = name.lastIndexOf(".");
    const stemLength = dot > 0 ? dot : nameLength;
    let score = 0;
    for (const t of terms) {
      const at = lower.indexOf(t);
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
      prepared = fuzzysort.prepare(normalized(nameOnly ? (this.names[i] as string) : this.pathOf(i)));
      cache.set(i, prepared);
    }
    return prepared;
  }

  private fuzzyScore(query: string, i: number, nameOnly: boolean): number {
    const result = fuzzysort.single(query, this.prepared(i, nameOnly));
    // a shorter name is a tighter fit for the same abbreviation: UserService.ts before UserServiceSettings.ts
    const looseness = nameOnly ? (this.names[i] as string).length * NAME_LENGTH_WEIGHT : 0;
    return (result?.score ?? 0) * FUZZY_WEIGHT - looseness - this.penalty[i];
  }
}

/** The `need` best of `slots`: only the scores at or above the need-th best are built into hits and sorted. */
function best(slots: number[], score: (i: number) => number, need: number, pathOf: (i: number) => string): FuzzyHit[] {
  return bestSlots(slots, score, need, pathOf).map(({ path, score }) => ({ path, score }));
}

function bestSlots(slots: number[], score: (i: number) => number, need: number, pathOf: (i: number) => string): (FuzzyHit & { slot: number })[] {
  const scores = new Float64Array(slots.length);
  for (let k = 0; k < slots.length; k++) scores[k] = score(slots[k]);
  const cut = slots.length > need ? kthLargest(scores, need) : -Infinity;
  const hits: (FuzzyHit & { slot: number })[] = [];
  for (let k = 0; k < slots.length; k++) if (scores[k] >= cut) hits.push({ path: pathOf(slots[k]), score: scores[k], slot: slots[k] });
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

/** Every term a substring of the path: of its folder's part (bit t+1 of `inDir`), of its name, or (with `/`) across both. */
function allSubstringsOfPath(terms: string[], termMasks: number[], name: string, nameMask: number, folderLower: string, inDir: number): boolean {
  for (let t = 0; t < terms.length; t++) {
    if (inDir & (2 << t) || ((nameMask & termMasks[t]) === termMasks[t] && name.indexOf(terms[t]) >= 0)) continue;
    if (terms[t].indexOf("/") < 0 || (folderLower + name).indexOf(terms[t]) < 0) return false;
  }
  return true;
}

function allSubstrings(terms: string[], lower: string, from: number): boolean {
  for (let k = 0; k < terms.length; k++) if (lower.indexOf(terms[k], from) < 0) return false;
  return true;
}

function allSubsequences(terms: string[], lower: string, from: number): boolean {
  for (let k = 0; k < terms.length; k++) if (!isSubsequence(terms[k], lower, from)) return false;
  return true;
}

/** How many of `term`'s first letters are a subsequence of `text` (matched greedily, as far as they go). */
function subsequencePrefix(term: string, text: string): number {
  let at = 0;
  let k = 0;
  for (; k < term.length; k++) {
    at = text.indexOf(term[k], at);
    if (at < 0) break;
    at++;
  }
  return k;
}

/** Whether `term` from its letter `from` on is a subsequence of `text`. */
function isSubsequenceFrom(term: string, from: number, text: string): boolean {
  let at = 0;
  for (let k = from; k < term.length; k++) {
    at = text.indexOf(term[k], at);
    if (at < 0) return false;
    at++;
  }
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
