/**
 * One rules file's patterns (a .gitignore, info/exclude, the global excludes file), parsed and matched as git does
 * (gitignore(5); dir.c's add_patterns_from_buffer, parse_path_pattern, match_basename and match_pathname, and
 * wildmatch.c with WM_PATHNAME), in our words. A path is judged by its own name only: its folders are the caller's.
 * Names are matched by UTF-16 code unit where git matches bytes, so `?` or a class against a non-ASCII letter may differ.
 */

interface Pattern {
  /** The pattern without its `!` and its trailing `/`. */
  text: string;
  negative: boolean;
  /** A trailing `/`: folders only. */
  mustBeDir: boolean;
  /** No `/` but a trailing one: matched against the basename at any depth. */
  noDir: boolean;
  /** How many leading characters hold no wildcard (`*`, `?`, `[`, `\`): compared as they are. */
  prefix: number;
  /** `*` then no wildcard at all: a suffix of the basename. */
  endsWith: boolean;
}

const STAR = 42; // *
const QUESTION = 63; // ?
const OPEN = 91; // [
const CLOSE = 93; // ]
const BACKSLASH = 92;
const SLASH = 47;
const BANG = 33;
const CARET = 94;
const DASH = 45;
const COLON = 58;

const isGlobSpecial = (c: number) => c === STAR || c === QUESTION || c === OPEN || c === BACKSLASH;

/** Removes trailing spaces unless the last is escaped with `\` (dir.c's trim_trailing_spaces). */
function trimTrailingSpaces(line: string): string {
  let lastSpace = -1;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 32) {
      if (lastSpace < 0) lastSpace = i;
    } else if (c === BACKSLASH) {
      i++;
      if (i >= line.length) return line;
      lastSpace = -1;
    } else lastSpace = -1;
  }
  return lastSpace < 0 ? line : line.slice(0, lastSpace);
}

function parse(line: string): Pattern {
  let p = line;
  const negative = p.charCodeAt(0) === BANG;
  if (negative) p = p.slice(1);
  const mustBeDir = p.length > 0 && p.charCodeAt(p.length - 1) === SLASH;
  if (mustBeDir) p = p.slice(0, -1);
  const noDir = !p.includes("/");
  let prefix = 0;
  while (prefix < p.length && !isGlobSpecial(p.charCodeAt(prefix))) prefix++;
  let endsWith = p.charCodeAt(0) === STAR;
  for (let i = 1; endsWith && i < p.length; i++) if (isGlobSpecial(p.charCodeAt(i))) endsWith = false;
  return { text: p, negative, mustBeDir, noDir, prefix, endsWith };
}

const MATCH = 0;
const NO_MATCH = 1;
const ABORT_ALL = -1;
const ABORT_TO_STARSTAR = -2;

const isUpper = (c: number) => c >= 65 && c <= 90;
const isLower = (c: number) => c >= 97 && c <= 122;
const isDigit = (c: number) => c >= 48 && c <= 57;
const isAlpha = (c: number) => isUpper(c) || isLower(c);
const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);
const isPrint = (c: number) => c >= 32 && c <= 126;
const isPunct = (c: number) => isPrint(c) && c !== 32 && !isAlpha(c) && !isDigit(c);
const fold = (c: number) => (isUpper(c) ? c + 32 : c);

/** git's POSIX classes, ASCII only as git's own ctype; undefined for a name git does not know. */
function inClass(name: string, c: number): boolean | undefined {
  switch (name) {
    case "alnum":
      return isAlpha(c) || isDigit(c);
    case "alpha":
      return isAlpha(c);
    case "blank":
      return c === 32 || c === 9;
    case "cntrl":
      return c < 32 || c === 127;
    case "digit":
      return isDigit(c);
    case "graph":
      return isPrint(c) && c !== 32;
    case "lower":
      return isLower(c);
    case "print":
      return isPrint(c);
    case "punct":
      return isPunct(c);
    case "space":
      return isSpace(c);
    case "upper":
      return isUpper(c);
    case "xdigit":
      return isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
    default:
      return undefined;
  }
}

/** wildmatch.c's dowild with WM_PATHNAME: pattern `p` from `pi` against text `t` from `ti`. */
function wild(p: string, pi: number, t: string, ti: number, caseFold: boolean): number {
  const at = (s: string, i: number) => (i < s.length ? s.charCodeAt(i) : 0);
  for (; pi < p.length; ti++, pi++) {
    let pc = p.charCodeAt(pi);
    let tc = at(t, ti);
    if (tc === 0 && pc !== STAR) return ABORT_ALL;
    if (caseFold) {
      tc = fold(tc);
      pc = fold(pc);
    }
    switch (pc) {
      case QUESTION:
        if (tc === SLASH) return NO_MATCH;
        continue;
      case STAR: {
        let matchSlash: boolean;
        if (at(p, ++pi) === STAR) {
          const prev = pi - 2;
          while (at(p, ++pi) === STAR) {}
          const next = at(p, pi);
          if ((prev < 0 || p.charCodeAt(prev) === SLASH) && (next === 0 || next === SLASH || (next === BACKSLASH && at(p, pi + 1) === SLASH))) {
            if (next === SLASH && wild(p, pi + 1, t, ti, caseFold) === MATCH) return MATCH;
            matchSlash = true;
          } else matchSlash = false;
        } else matchSlash = false;
        if (pi >= p.length) {
          if (!matchSlash && t.indexOf("/", ti) >= 0) return NO_MATCH;
          return MATCH;
        }
        if (!matchSlash && p.charCodeAt(pi) === SLASH) {
          const slash = t.indexOf("/", ti);
          if (slash < 0) return NO_MATCH;
          ti = slash;
          break; // the slash is matched by the loop's next step
        }
        for (;;) {
          if (tc === 0) break;
          const next = p.charCodeAt(pi);
          if (!isGlobSpecial(next)) {
            const want = caseFold ? fold(next) : next;
            for (; ti < t.length; ti++) {
              tc = t.charCodeAt(ti);
              if (!matchSlash && tc === SLASH) break;
              if (caseFold) tc = fold(tc);
              if (tc === want) break;
            }
            if (ti >= t.length) tc = 0;
            if (tc !== want) return NO_MATCH;
          }
          const matched = wild(p, pi, t, ti, caseFold);
          if (matched !== NO_MATCH) {
            if (!matchSlash || matched !== ABORT_TO_STARSTAR) return matched;
          } else if (!matchSlash && tc === SLASH) return ABORT_TO_STARSTAR;
          tc = at(t, ++ti);
          if (caseFold) tc = fold(tc);
        }
        return ABORT_ALL;
      }
      case OPEN: {
        let c = at(p, ++pi);
        if (c === CARET) c = BANG;
        const negated = c === BANG;
        if (negated) c = at(p, ++pi);
        let prev = 0;
        let matched = false;
        do {
          if (c === 0) return ABORT_ALL;
          if (c === BACKSLASH) {
            c = at(p, ++pi);
            if (c === 0) return ABORT_ALL;
            if (tc === c) matched = true;
          } else if (c === DASH && prev && at(p, pi + 1) && at(p, pi + 1) !== CLOSE) {
            c = at(p, ++pi);
            if (c === BACKSLASH) {
              c = at(p, ++pi);
              if (c === 0) return ABORT_ALL;
            }
            if (tc <= c && tc >= prev) matched = true;
            else if (caseFold && isLower(tc) && tc - 32 <= c && tc - 32 >= prev) matched = true;
            c = 0; // the next member has no range start
          } else if (c === OPEN && at(p, pi + 1) === COLON) {
            const start = (pi += 2);
            while (pi < p.length && p.charCodeAt(pi) !== CLOSE) pi++;
            if (pi >= p.length) return ABORT_ALL;
            const len = pi - start - 1;
            if (len < 0 || p.charCodeAt(pi - 1) !== COLON) {
              // no ":]": a plain `[` member
              pi = start - 2;
              c = OPEN;
              if (tc === c) matched = true;
              prev = c;
              c = at(p, ++pi);
              continue;
            }
            const member = inClass(p.slice(start, start + len), tc);
            if (member === undefined) return ABORT_ALL;
            if (member) matched = true;
            else if (caseFold && isLower(tc) && p.slice(start, start + len) === "upper" && isUpper(tc - 32)) matched = true;
            c = 0;
          } else if (tc === c) matched = true;
          prev = c;
          c = at(p, ++pi);
        } while (c !== CLOSE);
        if (matched === negated || tc === SLASH) return NO_MATCH;
        continue;
      }
      case BACKSLASH:
        pc = at(p, ++pi); // not folded, as git's is not
        if (tc !== pc) return NO_MATCH;
        continue;
      default:
        if (tc !== pc) return NO_MATCH;
        continue;
    }
  }
  return ti < t.length ? NO_MATCH : MATCH;
}

const asciiLower = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

/** The patterns of one rules file (or several, in order: the later wins), matched as git matches them. */
export class IgnorePatterns {
  private readonly patterns: Pattern[] = [];

  constructor(private readonly ignoreCase = false) {}

  /** Adds the patterns of a file's text: one a line, `#` comments and blank lines skipped, as git reads them. */
  add(text: string): this {
    const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    const lines = body.split("\n");
    if (body.endsWith("\n")) lines.pop(); // git ends an unterminated last line itself
    for (const raw of lines) {
      if (raw === "" || raw.charCodeAt(0) === 35) continue; // blank, or a `#` comment
      const line = trimTrailingSpaces(raw.endsWith("\r") ? raw.slice(0, -1) : raw);
      if (line !== "") this.patterns.push(parse(line));
    }
    return this;
  }

  get size(): number {
    return this.patterns.length;
  }

  /**
   * The last matching pattern's word on `rel` (relative to the rules file's folder, no trailing `/`), its folders
   * aside: true ignored, false re-included by a `!` pattern, undefined when none matches.
   */
  verdict(rel: string, isDir: boolean): boolean | undefined {
    const cut = rel.lastIndexOf("/");
    const base = cut < 0 ? rel : rel.slice(cut + 1);
    for (let i = this.patterns.length - 1; i >= 0; i--) {
      const pat = this.patterns[i];
      if (pat.mustBeDir && !isDir) continue;
      if (pat.noDir ? this.matchBasename(base, pat) : this.matchPathname(rel, pat)) return !pat.negative;
    }
    return undefined;
  }

  private same(a: string, b: string): boolean {
    return this.ignoreCase ? asciiLower(a) === asciiLower(b) : a === b;
  }

  private matchBasename(base: string, pat: Pattern): boolean {
    const { text } = pat;
    if (pat.prefix === text.length) return base.length === text.length && this.same(base, text);
    if (pat.endsWith) return text.length - 1 <= base.length && this.same(base.slice(base.length - text.length + 1), text.slice(1));
    return wild(text, 0, base, 0, this.ignoreCase) === MATCH;
  }

  private matchPathname(rel: string, pat: Pattern): boolean {
    let { text, prefix } = pat;
    if (text.charCodeAt(0) === SLASH) {
      text = text.slice(1);
      prefix--;
    }
    let name = rel;
    if (prefix) {
      if (prefix > name.length || !this.same(text.slice(0, prefix), name.slice(0, prefix))) return false;
      text = text.slice(prefix);
      name = name.slice(prefix);
      if (!text && !name) return true;
    }
    return wild(text, 0, name, 0, this.ignoreCase) === MATCH;
  }
}
