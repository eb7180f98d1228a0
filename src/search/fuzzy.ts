import fuzzysort from "fuzzysort";
import { FolderRuns } from "./folder-runs.js";
import { filesHolding, filesOneBitShort, lowestBit } from "./letter-bits.js";
import { NameBytes, encodeTerm } from "./name-bytes.js";
import { EditDistance, TYPO_MIN_TERM, commonPrefix, dropsNeeded, maxTypoEdits } from "./typo.js";

/**
 * Fuzzy file-path matching over a workspace's paths (pure: strings in, ranked strings out).
 *
 * Incremental: paths are added and removed one by one as the VFS index changes (no rebuild on a new file). Paths are
 * kept by folder: a folder's lower-cased path and character mask once, and per file its name, the name's lower-cased
 * form (also in one byte buffer, NameBytes), its mask, first letter, lengths and depth penalty in typed arrays (slots,
 * reused after a remove; the first listing's files take theirs folder by folder, so the scan reads them in order); every folder's files' slots and name masks, and the masks sideways (letter bits: which of 32 files
 * hold each letter), are blocks of one buffer in folder order (FolderRuns), so the scan reads it front to back. A query
 * works out what its terms find in each folder's path once (FolderFacts, from the parent folder's facts and the one
 * name the folder adds), and with it the letters a name in that folder must hold for the path to match at all: the
 * letter bits reject most files 32 at a time, and only the rest are tested, on the name's bytes (whether the path
 * matches at all first, then whether the name holds every term); the tiers below the name's are sorted out of the rest
 * only when the name tier leaves room in `limit`. Within a substring tier only the files whose first
 * letter can still reach the top `limit` are scored; fuzzysort only scores the tiers that can still reach it, its
 * prepared targets built lazily in a bounded cache. A query that narrows the last one (typing on) scans only the last
 * one's matches.
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

/** A folder's share of every path in it, kept once for all its files. */
interface Folder {
  /** As given; "" for the root. */
  path: string;
  /** normalized(lower-cased path) and a `/`; "" for the root: `lower + nameLower` is the path's matching form. */
  lower: string;
  mask: number;
  /** The folder it is in (made with it, so of a lower id); -1 for the root. */
  parent: number;
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

/** A name's length from which nameLength only says "this long or longer". */
const LONG_NAME = 255;

/** Slots added after a scan that the next one still narrows from; past this a full scan is as cheap. */
const ADDED_SINCE_SCAN_MAX = 10_000;

export class FuzzyIndex {
  private readonly folders: Folder[] = [];
  /** Each folder's files (slots and name masks, and the masks sideways), by folder id, in one buffer. */
  private readonly runs = new FolderRuns();
  /** What each folder's matching form adds to its parent's, by folder id, in one buffer (what FolderFacts reads). */
  private readonly tails = new FolderTails();
  private readonly folderIds = new Map<string, number>();
  /**
   * Per folder id, side by side: at 2f its mask and its files' (kept through removes: a superset), so a query lacking a
   * letter of it skips them all; at 2f+1 its files' name masks alone (a superset too), so a folder whose files cannot
   * hold what its path lacks is skipped. In one buffer, as the scan and the typo pass read them for every folder: 44,000
   * Folder objects scattered in the heap cost a cache miss each.
   */
  private unions = new Int32Array(512);
  /** Per slot (a file): its folder, name, the name's matching form, masks, depthPenalty. A free slot's name is undefined. */
  private folderOf = new Int32Array(1024);
  private readonly names: (string | undefined)[] = [];
  private readonly nameLower: string[] = [];
  /** nameLower again, in one buffer: what the scan tests. */
  private readonly nameBytes = new NameBytes();
  /** The typo pass's edit distances, on rows kept from call to call. */
  private readonly edits = new EditDistance();
  private nameMasks = new Int32Array(1024);
  /** The mask bits the name's matching form holds at least twice (see twiceMaskOf): the typo pass's letter-count bound. */
  private twiceMasks = new Int32Array(1024);
  private penalty = new Float32Array(1024);
  /** The first character of the name's matching form: whether a term can start the name, without the string. */
  private firstChar = new Uint16Array(1024);
  /** The name's length and its stem's (before its last `.`), LONG_NAME for a name that long: a substring bound's class without the string. */
  private nameLength = new Uint8Array(1024);
  private stemLength = new Uint8Array(1024);
  private readonly free: number[] = [];
  private count = 0;
  private readonly preparedPath = new Map<number, Fuzzysort.Prepared>();
  private readonly preparedName = new Map<number, Fuzzysort.Prepared>();
  private last?: LastScan;
  /** The folder the last add went to (see folderOfPath). */
  private lastFolder = -1;

  constructor(paths: Iterable<string> = []) {
    // the files added folder by folder (folders numbered as the paths come), so slots, and the names' bytes, are in
    // the order the scan reads them: a sorted listing puts a folder's subfolders' files between its own
    const list = Array.isArray(paths) ? (paths as readonly string[]) : [...paths];
    const folderOf = new Int32Array(list.length);
    for (let k = 0; k < list.length; k++) folderOf[k] = this.folderOfPath(list[k], list[k].lastIndexOf("/"));
    const at = new Int32Array(this.folders.length + 1); // where each folder's paths go in `order` (a counting sort)
    for (let k = 0; k < list.length; k++) at[folderOf[k] + 1]++;
    for (let f = 0; f < this.folders.length; f++) at[f + 1] += at[f];
    const order = new Int32Array(list.length);
    for (let k = 0; k < list.length; k++) order[at[folderOf[k]]++] = k;
    // the per-slot arrays at their size at once, not doubled up to it: each doubling's garbage stays in the RSS
    if (list.length > this.folderOf.length) this.grow(list.length);
    for (let k = 0; k < order.length; k++) this.add(list[order[k]]);
    this.runs.pack(true); // in folder order, as the scan reads them, each block no larger than its files
  }

  get size(): number {
    return this.count;
  }

  /** Adds a path (root-relative, `/`); one already in is left as it is. */
  add(path: string): void {
    const cut = path.lastIndexOf("/");
    const name = path.slice(cut + 1);
    const f = this.folderOfPath(path, cut);
    if (this.slotIn(f, name) >= 0) return;
    const slot = this.free.pop() ?? this.names.length;
    if (slot >= this.folderOf.length) this.grow();
    const lower = normalized(name.toLowerCase());
    this.folderOf[slot] = f;
    this.names[slot] = name;
    this.nameLower[slot] = lower;
    this.nameBytes.set(slot, lower);
    this.nameMasks[slot] = maskOf(lower);
    this.twiceMasks[slot] = twiceMaskOf(lower);
    this.penalty[slot] = depthPenalty(path);
    this.firstChar[slot] = lower.charCodeAt(0) || 0;
    const dot = name.lastIndexOf(".");
    this.nameLength[slot] = Math.min(name.length, LONG_NAME);
    this.stemLength[slot] = Math.min(dot > 0 ? dot : name.length, LONG_NAME);
    this.runs.append(f, slot, this.nameMasks[slot]);
    this.unions[2 * f] |= this.nameMasks[slot];
    this.unions[2 * f + 1] |= this.nameMasks[slot];
    this.count++;
    if (this.last && this.last.added.push(slot) > ADDED_SINCE_SCAN_MAX) this.last = undefined;
  }

  /** Removes a path; false when it was not in. */
  remove(path: string): boolean {
    const cut = path.lastIndexOf("/");
    const f = this.folderIds.get(cut < 0 ? "" : path.slice(0, cut));
    if (f === undefined) return false;
    const at = this.slotIn(f, path.slice(cut + 1));
    if (at < 0) return false;
    const slot = this.runs.slot(f, at);
    this.runs.removeAt(f, at);
    this.names[slot] = undefined;
    this.nameLower[slot] = "";
    this.nameBytes.clear(slot);
    this.folderOf[slot] = -1; // a narrowed scan skips it
    this.preparedPath.delete(slot);
    this.preparedName.delete(slot);
    this.free.push(slot);
    this.count--;
    this.last = undefined; // its slots may be reused
    return true;
  }

  private slotIn(f: number, name: string): number {
    for (let k = 0; k < this.runs.size(f); k++) if (this.names[this.runs.slot(f, k)] === name) return k;
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
      // its parent first (the root's is none): a query works out what its terms find in a path from its parent's, when
      // the path's matching form starts with the parent's (lower-casing can depend on what follows: a final sigma)
      let parent = dir ? this.folderId(dir.slice(0, Math.max(0, dir.lastIndexOf("/")))) : -1;
      const lower = dir ? `${normalized(dir.toLowerCase())}/` : "";
      if (parent >= 0 && !lower.startsWith(this.folders[parent].lower)) parent = -1;
      const mask = maskOf(lower);
      f = this.folders.push({ path: dir, lower, mask, parent }) - 1;
      if (2 * f + 1 >= this.unions.length) {
        const unions = new Int32Array(this.unions.length * 2);
        unions.set(this.unions);
        this.unions = unions;
      }
      this.unions[2 * f] = mask;
      this.runs.addFolder();
      this.tails.add(parent, lower.slice(parent >= 0 ? this.folders[parent].lower.length : 0));
      this.folderIds.set(dir, f);
    }
    return f;
  }

  private grow(atLeast = 0): void {
    const n = Math.max(this.folderOf.length * 2, atLeast);
    const grown = <T extends Int32Array | Float32Array | Uint16Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.folderOf = grown(this.folderOf, (k) => new Int32Array(k));
    this.nameMasks = grown(this.nameMasks, (k) => new Int32Array(k));
    this.twiceMasks = grown(this.twiceMasks, (k) => new Int32Array(k));
    this.penalty = grown(this.penalty, (k) => new Float32Array(k));
    this.firstChar = grown(this.firstChar, (k) => new Uint16Array(k));
    this.nameLength = grown(this.nameLength, (k) => new Uint8Array(k));
    this.stemLength = grown(this.stemLength, (k) => new Uint8Array(k));
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
    const tests = new NameTests(terms, this.folders, this.tails, this.nameBytes, this.nameLower);
    const { nameTier, rest } = this.scan(tests, accept, scope);
    let total = nameTier.length + rest.length;
    if (scope === undefined) this.last = undefined;
    else {
      const slots = new Int32Array(total);
      slots.set(nameTier);
      slots.set(rest, nameTier.length);
      this.last = { terms, scope, slots, added: [] };
    }
    // the tiers below the name's, sorted only when the name tier leaves room in `limit` (for most queries it does not)
    let below: number[][] | undefined;
    const tier = (t: number): number[] => (t === 0 ? nameTier : (below ??= this.tiersBelowName(tests, rest))[t - 1]);

    const hits: FuzzyHit[] = [];
    const scorers = [
      (i: number) => TIER_NAME_SUBSTRING + this.substringScore(i, terms, true),
      (i: number) => TIER_PATH_SUBSTRING + this.substringScore(i, terms, false),
      (i: number) => TIER_NAME_FUZZY + this.fuzzyScore(fuzzyQuery, i, true),
      (i: number) => TIER_PATH_FUZZY + this.fuzzyScore(fuzzyQuery, i, false),
    ];
    const pathOf = (i: number) => this.pathOf(i);
    // what substringScore can give at most, from the name's first letter and length alone: a term can start the name
    // only if its first letter does, and then its class is the lengths' (an exact name, its stem, a start); most
    // candidates never reach the strings
    const firsts = terms.map((t) => t.charCodeAt(0));
    const substringBound = (i: number) => {
      let bound = 0;
      for (let t = 0; t < terms.length; t++) bound += this.firstChar[i] === firsts[t] ? this.startClass(i, terms[t].length) : 200;
      return bound / terms.length - this.penalty[i];
    };
    const bounds = [(i: number) => TIER_NAME_SUBSTRING + substringBound(i), (i: number) => TIER_PATH_SUBSTRING + substringBound(i)];
    // exact matches of the name or a path fragment, then typos of the name, then exact subsequences scattered across folders
    for (let t = 0; t < 3 && hits.length < limit; t++) hits.push(...best(tier(t), scorers[t], limit - hits.length, pathOf, bounds[t]));
    const approximate: string[] = [];
    const shown = new Set<number>();
    if (hits.length < Math.min(limit, TYPO_FALLBACK_BELOW)) {
      const typos = this.typoCandidates(terms, new Set([...nameTier, ...tier(1)]), accept);
      for (const i of typos) if (!this.allSubsequencesOfPath(terms, i)) total++; // the others are counted in tier 4
      for (const [i, h] of this.bestTypos(typos, terms, limit - hits.length)) {
        hits.push(h);
        approximate.push(h.path);
        shown.add(i);
      }
    }
    if (hits.length < limit) {
      const scattered = shown.size ? tier(3).filter((i) => !shown.has(i)) : tier(3);
      hits.push(...best(scattered, scorers[3], limit - hits.length, pathOf));
    }
    fuzzysort.cleanup(); // its cache of prepared queries would otherwise grow with every distinct query
    return { hits, total, approximate };
  }

  /**
   * Every path the terms match at all (each a subsequence of the path), those whose name holds every term (the name
   * tier) apart from the rest. What the terms find in a folder's own path is worked out once per folder, and with it
   * the letters a file's name must then hold for the path to match at all (see FolderFacts): the folder's letter bits
   * reject most of its files 32 at a time, before any string is looked at.
   */
  private scan(tests: NameTests, accept: ((path: string) => boolean) | undefined, scope: string | undefined): { nameTier: number[]; rest: number[] } {
    const { facts, mask } = tests;
    const narrowed = this.narrows(tests.terms, scope);
    const folderOf = this.folderOf;
    const nameMasks = this.nameMasks;
    const nameTier: number[] = [];
    const rest: number[] = [];
    const runs = this.runs;
    const data = runs.data;
    const visit = (i: number, nameMask: number, f: number): void => {
      // first whether the path matches at all, as most names that pass the letters do not
      if (!tests.inPath(i, f)) return;
      if (accept && !accept(this.pathOf(i))) return;
      if ((nameMask & mask) === mask && tests.inNameAll(i)) nameTier.push(i);
      else rest.push(i);
    };
    if (narrowed) {
      for (const list of [narrowed.slots, narrowed.added])
        for (const i of list) {
          const f = folderOf[i];
          if (f < 0) continue; // a free slot
          const need = facts.needOf(f);
          if ((nameMasks[i] & need) === need) visit(i, nameMasks[i], f);
        }
    } else {
      const unions = this.unions;
      for (let f = 0; f < this.folders.length; f++) {
        if ((unions[2 * f] & mask) !== mask) continue;
        const need = facts.needOf(f);
        if ((unions[2 * f + 1] & need) !== need) continue;
        const size = runs.size(f);
        const files = runs.filesAt(f);
        const letters = runs.lettersAt(f);
        for (let w = 0; w << 5 < size; w++)
          for (let held = filesHolding(data, letters, w, size, need); held !== 0; held &= held - 1) {
            const at = files + 2 * ((w << 5) + lowestBit(held));
            visit(data[at], data[at + 1], f);
          }
      }
    }
    return { nameTier, rest };
  }

  /** The paths of `rest` (matching, their names not holding every term) by tier: fragments, abbreviations, scattered. */
  private tiersBelowName(tests: NameTests, rest: number[]): number[][] {
    const tiers: number[][] = [[], [], []];
    for (const i of rest) {
      const f = this.folderOf[i];
      tiers[tests.tierBelowName(i, this.nameMasks[i], f, this.folders[f].lower) - 1].push(i);
    }
    return tiers;
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
   * with `/`) has no typo form. The masks let a name lacking two of a term's letters out without a scan. `inExactTier`:
   * the substring tiers' slots, the paths that hold every term (a handful: this runs when the exact tiers found little).
   */
  private typoCandidates(terms: string[], inExactTier: Set<number>, accept?: (path: string) => boolean): number[] {
    if (!terms.some((t) => t.length >= TYPO_MIN_TERM) || terms.some((t) => t.includes("/"))) return [];
    const termMasks = terms.map(maskOf);
    const termTwice = terms.map(twiceMaskOf);
    const encoded = terms.map(encodeTerm);
    const bytes = this.nameBytes;
    const twiceMasks = this.twiceMasks;
    const out: number[] = [];
    const visit = (i: number, nameMask: number): void => {
      // letters counted before the name's bytes are read: a term keeps each letter it holds twice only if the name holds
      // it twice, so each such letter the name holds once or not at all is one more letter to drop (at most one in all)
      const twice = twiceMasks[i];
      let short = 0;
      for (let k = 0; k < terms.length && short < 2; k++) short += bitCount(termTwice[k] & ~twice) + bitCount(termMasks[k] & ~nameMask);
      if (short >= 2) return;
      const name = this.nameLower[i];
      const wide = bytes.wide(i);
      let typos = 0; // one typo per query: two, and nearly any name matches a short query
      let typoTerm = "";
      for (let k = 0; k < terms.length && typos < 2; k++) {
        const term = terms[k];
        const code = encoded[k];
        const missing = termMasks[k] & ~nameMask;
        if ((missing & (missing - 1)) !== 0)
          typos = 2; // two of its letters absent
        else if (term.length < TYPO_MIN_TERM)
          typos = missing === 0 && (code === null || wide ? isSubsequence(term, name, 0) : bytes.subsequenceFrom(i, code, 0)) ? typos : 2;
        else {
          const drops = code === null || wide ? dropsNeeded(term, name, 0) : bytes.dropsNeeded(i, code);
          typos += drops;
          if (drops) typoTerm = term;
        }
      }
      // typos 0: the name holds every term, an exact tier has it; a path whose terms are only scattered across folders
      // (tier 5) is taken here too, as the better match, but not one whose path holds every term (a substring tier)
      if (typos !== 1 || inExactTier.has(i)) return;
      if (this.edits.substring(typoTerm, name, 0) > maxTypoEdits(typoTerm.length)) return; // held scattered, not near
      if (accept && !accept(this.pathOf(i))) return;
      out.push(i);
    };
    // A name lacking two letters of one term, a letter of each of two terms, or a letter of a term too short for a typo
    // is no typo away; a folder whose names together lack that much (nameUnion is a superset of every name's mask) is
    // skipped whole, and the letter bits tell the names of the rest 32 at a time.
    const whole = terms.map((t) => t.length < TYPO_MIN_TERM);
    const runs = this.runs;
    const data = runs.data;
    const unions = this.unions;
    for (let f = 0; f < this.folders.length; f++) {
      const nameUnion = unions[2 * f + 1];
      let typos = 0;
      for (let k = 0; k < terms.length && typos < 2; k++) {
        const missing = termMasks[k] & ~nameUnion;
        if (missing !== 0) typos += (missing & (missing - 1)) !== 0 ? 2 : 1;
      }
      if (typos >= 2) continue;
      const size = runs.size(f);
      const files = runs.filesAt(f);
      const letters = runs.lettersAt(f);
      for (let w = 0; w << 5 < size; w++)
        for (let near = filesOneBitShort(data, letters, w, size, termMasks, whole); near !== 0; near &= near - 1) {
          const at = files + 2 * ((w << 5) + lowestBit(near));
          visit(data[at], data[at + 1]);
        }
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
        edits += this.edits.substring(t, name, 0);
      }
      const dot = (this.names[i] as string).lastIndexOf(".");
      const stemLength = dot > 0 ? dot : name.length;
      const misfit = Math.min(Math.abs(name.length - queryLength), Math.abs(stemLength - queryLength));
      return TIER_TYPO - edits * TYPO_EDIT_WEIGHT + prefix * TYPO_PREFIX_WEIGHT - misfit * TYPO_LENGTH_WEIGHT - this.penalty[i];
    };
    return bestSlots(candidates, score, need, (i) => this.pathOf(i)).map((h) => [h.slot, { path: h.path, score: h.score }]);
  }

  /** substringScore's class for a term of `length` letters at the start of file i's name (as it weighs them). */
  private startClass(i: number, length: number): number {
    const nameLength = this.nameLength[i];
    if (nameLength === LONG_NAME) {
      const name = this.names[i] as string;
      if (length === name.length) return 400;
      const dot = name.lastIndexOf(".");
      return length === (dot > 0 ? dot : name.length) ? 350 : 300;
    }
    return length === nameLength ? 400 : length === this.stemLength[i] ? 350 : 300;
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

/** A query's tests of one file, on its name's bytes (on the strings when the name or a term has a character past Latin-1). */
class NameTests {
  readonly facts: FolderFacts;
  /** Every letter of the query. */
  readonly mask: number;
  private readonly encoded: (Uint8Array | null)[];
  /** Per term: where its last `/` is (-1: none), and its part up to and with it, and after it. */
  private readonly lastSlash: number[];
  private readonly heads: string[];
  private readonly tails: string[];

  constructor(
    readonly terms: string[],
    folders: readonly Folder[],
    tails: FolderTails,
    private readonly bytes: NameBytes,
    private readonly nameLower: readonly string[],
  ) {
    this.facts = new FolderFacts(terms, folders, tails);
    this.mask = maskOf(terms.join(""));
    this.encoded = terms.map(encodeTerm);
    this.lastSlash = terms.map((t) => t.lastIndexOf("/"));
    this.heads = terms.map((t, k) => t.slice(0, this.lastSlash[k] + 1));
    this.tails = terms.map((t, k) => t.slice(this.lastSlash[k] + 1));
  }

  /** Whether the path of file `i` (in folder `f`, its facts worked out) matches at all: each term a subsequence of it. */
  inPath(i: number, f: number): boolean {
    const { facts, terms } = this;
    if (facts.need[f] === 0) return true;
    const k = terms.length;
    for (let t = 0; t < k; t++) {
      const from = facts.seq[f * k + t];
      if (from < terms[t].length && !this.subsequenceFrom(i, t, from)) return false;
    }
    return true;
  }

  /** Whether the name holds every term. */
  inNameAll(i: number): boolean {
    for (let t = 0; t < this.terms.length; t++) if (!this.includes(i, t)) return false;
    return true;
  }

  /** The tier of a matching path whose name does not hold every term: 1 a path fragment, 2 an abbreviation of the name, 3 scattered. */
  tierBelowName(i: number, nameMask: number, f: number, folderLower: string): 1 | 2 | 3 {
    const fragment = this.facts.fragmentNeed[f];
    if ((fragment < 0 || (nameMask & fragment) === fragment) && this.fragmentMatch(i, nameMask, f, folderLower)) return 1;
    if ((nameMask & this.mask) !== this.mask) return 3;
    for (let t = 0; t < this.terms.length; t++) if (!this.subsequenceFrom(i, t, 0)) return 3;
    return 2;
  }

  private fragmentMatch(i: number, nameMask: number, f: number, folderLower: string): boolean {
    const { facts, terms } = this;
    const inDir = facts.inDir[f];
    for (let t = 0; t < terms.length; t++) {
      if (inDir & (2 << t) || ((nameMask & facts.termMasks[t]) === facts.termMasks[t] && this.includes(i, t))) continue;
      // a term with `/` in the path but not in its folder's part spans the folder's last `/` (the name has none)
      const cut = this.lastSlash[t];
      if (cut < 0 || !folderLower.endsWith(this.heads[t]) || !this.nameLower[i].startsWith(this.tails[t])) return false;
    }
    return true;
  }

  private includes(i: number, t: number): boolean {
    const term = this.encoded[t];
    return term === null || this.bytes.wide(i) ? this.nameLower[i].indexOf(this.terms[t]) >= 0 : this.bytes.includes(i, term);
  }

  private subsequenceFrom(i: number, t: number, from: number): boolean {
    const term = this.encoded[t];
    return term === null || this.bytes.wide(i) ? isSubsequenceFrom(this.terms[t], from, this.nameLower[i]) : this.bytes.subsequenceFrom(i, term, from);
  }
}

/**
 * What a query's terms find in each folder's own path, worked out on a folder's first file and kept for the rest of
 * the query. A path matches an exact tier only if each term is a subsequence of it (a substring is one too), and
 * greedy matching is exact for that: the folder's part takes what it can of the term, and the name must then hold the
 * rest in order. So a name lacking a letter of any term's rest (`need`) cannot match, whatever its tier.
 */
class FolderFacts {
  readonly termMasks: number[];
  /** Per folder: 1 + whether each term is a substring of its path (bit t+1); 0 until worked out. */
  readonly inDir: Int32Array;
  /** Per folder and term: how many of the term's first letters the folder's path holds in order. */
  readonly seq: Int32Array;
  /** Per folder: the letters its files' names must hold (the union of the terms' rests' masks). */
  readonly need: Int32Array;
  /**
   * Per folder: the letters a name must hold for the path to be a fragment match (the terms its path lacks), or -1
   * when a term with `/` could span the folder and the name (then only the strings tell).
   */
  readonly fragmentNeed: Int32Array;

  /** Per term: the mask of its letters from each position on (what a name must hold once a folder took the rest). */
  private readonly restMasks: Int32Array[];

  /** Per term: its characters' codes. */
  private readonly codes: Uint16Array[];

  /** Per term: whether it has a `/`. */
  private readonly slashed: boolean[];

  constructor(
    private readonly terms: string[],
    private readonly folders: readonly Folder[],
    private readonly tails: FolderTails,
  ) {
    const folderCount = folders.length;
    this.termMasks = terms.map(maskOf);
    this.slashed = terms.map((t) => t.includes("/"));
    this.codes = terms.map((t) => Uint16Array.from({ length: t.length }, (_, j) => t.charCodeAt(j)));
    this.restMasks = terms.map((t) => {
      const rest = new Int32Array(t.length + 1);
      for (let j = t.length - 1; j >= 0; j--) rest[j] = rest[j + 1] | maskOf(t[j]);
      return rest;
    });
    this.inDir = new Int32Array(folderCount);
    this.seq = new Int32Array(folderCount * terms.length);
    this.need = new Int32Array(folderCount);
    this.fragmentNeed = new Int32Array(folderCount);
  }

  /**
   * Folder f's facts, from its parent's (worked out first): its path is the parent's and one more name, so the greedy
   * match of a term goes on from where the parent's stopped, and a term is in it if in the parent's or in what it adds.
   */
  needOf(f: number): number {
    if (this.inDir[f] !== 0) return this.need[f];
    const terms = this.terms;
    const k = terms.length;
    const { parent: parents, from: tailFrom, to: tailTo, chars } = this.tails;
    const parent = parents[f];
    if (parent >= 0 && this.inDir[parent] === 0) this.needOf(parent);
    const parentInDir = parent >= 0 ? this.inDir[parent] : 0;
    const end = tailTo[f];
    let inDir = 1;
    let need = 0;
    let fragmentNeed = 0;
    for (let t = 0; t < k; t++) {
      const term = this.codes[t];
      let matched = parent >= 0 ? this.seq[parent * k + t] : 0;
      for (let at = tailFrom[f]; at < end && matched < term.length; at++) if (chars[at] === term[matched]) matched++;
      this.seq[f * k + t] = matched;
      need |= this.restMasks[t][matched];
      // a term in the path is a subsequence of it too: only then is the string looked at
      if (parentInDir & (2 << t) || (matched === term.length && this.inPathFrom(f, terms[t]))) inDir |= 2 << t;
      else if (fragmentNeed >= 0) fragmentNeed = this.slashed[t] ? -1 : fragmentNeed | this.termMasks[t];
    }
    this.inDir[f] = inDir;
    this.need[f] = need;
    this.fragmentNeed[f] = fragmentNeed;
    return need;
  }

  /** Whether `term` is in folder f's path where its parent's does not hold all of it: ending in what f adds. */
  private inPathFrom(f: number, term: string): boolean {
    const { lower, parent } = this.folders[f];
    const start = parent >= 0 ? this.folders[parent].lower.length : 0;
    return lower.indexOf(term, Math.max(0, start - term.length + 1)) >= 0;
  }
}

/**
 * Per folder, its parent (-1 for none) and the characters its matching form adds to its parent's (the whole form when
 * it has none), side by side in one buffer in folder order: a query's FolderFacts reads them for every folder, and
 * 44,000 strings scattered in the heap cost a cache miss each.
 */
class FolderTails {
  parent = new Int32Array(256);
  from = new Int32Array(256);
  to = new Int32Array(256);
  chars = new Uint16Array(4096);
  private count = 0;

  add(parent: number, tail: string): void {
    const f = this.count++;
    if (f === this.parent.length) {
      this.parent = grownTo(this.parent, 2 * f);
      this.from = grownTo(this.from, 2 * f);
      this.to = grownTo(this.to, 2 * f);
    }
    const at = f > 0 ? this.to[f - 1] : 0;
    if (at + tail.length > this.chars.length) {
      const chars = new Uint16Array(Math.max(2 * this.chars.length, at + tail.length));
      chars.set(this.chars);
      this.chars = chars;
    }
    for (let k = 0; k < tail.length; k++) this.chars[at + k] = tail.charCodeAt(k);
    this.parent[f] = parent;
    this.from[f] = at;
    this.to[f] = at + tail.length;
  }
}

function grownTo(a: Int32Array, n: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}

/**
 * The `need` best of `slots`: only the scores at or above the need-th best are built into hits and sorted. With `bound`
 * (at least the score, and cheap), the slots whose bound is the best it gives are scored first, and the rest only when
 * their bound reaches the need-th best of those: the others cannot be among the best.
 */
function best(slots: number[], score: (i: number) => number, need: number, pathOf: (i: number) => string, bound?: (i: number) => number): FuzzyHit[] {
  return bestSlots(slots, score, need, pathOf, bound).map(({ path, score }) => ({ path, score }));
}

function bestSlots(
  slots: number[],
  score: (i: number) => number,
  need: number,
  pathOf: (i: number) => string,
  bound?: (i: number) => number,
): (FuzzyHit & { slot: number })[] {
  const scores = new Float64Array(slots.length);
  if (bound && slots.length > need) {
    const bounds = new Float64Array(slots.length);
    for (let k = 0; k < slots.length; k++) bounds[k] = bound(slots[k]);
    // the first pass: the slots whose bound is among the `need` best (at least `need` of them, so the need-th best
    // score of those is a floor); then the rest whose bound reaches that floor. A score is at most its bound, so the
    // slots left unscored are below the need-th best score of all.
    const first = kthLargest(bounds, need);
    for (let k = 0; k < slots.length; k++) scores[k] = bounds[k] >= first ? score(slots[k]) : Number.NEGATIVE_INFINITY;
    const floor = kthLargest(scores, need);
    for (let k = 0; k < slots.length; k++) if (bounds[k] < first && bounds[k] >= floor) scores[k] = score(slots[k]);
  } else for (let k = 0; k < slots.length; k++) scores[k] = score(slots[k]);
  const cut = slots.length > need ? kthLargest(scores, need) : Number.NEGATIVE_INFINITY;
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
export function maskOf(lower: string): number {
  let mask = 0;
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    if (c >= 97 && c <= 122) mask |= 1 << (c - 97);
    else if (c >= 48 && c <= 57) mask |= 1 << 26;
    else if (c !== 32) mask |= 1 << 27;
  }
  return mask;
}

/**
 * The mask bits (as maskOf's) that two or more of `lower`'s characters set. A subsequence keeps a term's characters at
 * distinct places of the text, each on one of the same bit, so a term whose characters set a bit more often than the
 * text's do has to lose one of them for each such bit the text sets once, and two for each it does not set.
 */
export function twiceMaskOf(lower: string): number {
  let once = 0;
  let twice = 0;
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    const bit = c >= 97 && c <= 122 ? 1 << (c - 97) : c >= 48 && c <= 57 ? 1 << 26 : c !== 32 ? 1 << 27 : 0;
    twice |= once & bit;
    once |= bit;
  }
  return twice;
}

function bitCount(m: number): number {
  let n = 0;
  for (let v = m; v !== 0; v &= v - 1) n++;
  return n;
}

function allSubsequences(terms: string[], lower: string, from: number): boolean {
  for (let k = 0; k < terms.length; k++) if (!isSubsequence(terms[k], lower, from)) return false;
  return true;
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
