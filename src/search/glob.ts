/**
 * Glob patterns for find_file's `glob`, with ripgrep's rules (its globset): a pattern without `/` matches the file name at
 * any depth; with one, the root-relative path (a leading `/` only anchors). `*` and `?` stay within one folder; `**` is
 * recursive as a whole component (`**` + `/`, `/**` at the end, `/**` + `/`) and is `*` elsewhere; `{a,b}` is a choice,
 * `[abc]`, `[a-z]`, `[!a]` / `[^a]` a class (never matching `/`), `\c` a literal `c`.
 *
 * Matching runs in time linear in the path, whatever the pattern: the glob is compiled to an NFA that a lazily built DFA
 * runs (each state a set of NFA states, made on first use and cached), as rg's regex engine does; a pattern that needs
 * too many states runs as a plain NFA simulation. A RegExp would backtrack: `**a**a**a…b` against a long run of `a`
 * took minutes.
 */

/** A pattern that is not a glob, with globset's wording of what is wrong. */
export class GlobSyntaxError extends Error {}

/**
 * DFA states built per compiled glob (each with a 128-entry ASCII table, 512 bytes); ordinary globs need a few dozen.
 * Past this the glob runs as a plain NFA simulation: a pattern like `*a??????????????` needs a state per combination of
 * recent characters, and building states one by one (about 50 µs each) costs more than stepping the NFA (about 1 µs a
 * character).
 */
const MAX_DFA_STATES = 1024;
const SLASH = 47;

type Node =
  | { kind: "char"; code: number }
  | { kind: "noslash" }
  | { kind: "class"; negated: boolean; ranges: number[] }
  | { kind: "star" }
  | { kind: "anything" }
  | { kind: "dirs" }
  | { kind: "alt"; alternatives: Node[][] };

/** A predicate over root-relative paths (with `/`). Throws GlobSyntaxError for an invalid pattern. */
export function globMatcher(glob: string): (path: string) => boolean {
  const anchored = glob.includes("/");
  const nodes = parse(glob.startsWith("/") ? glob.slice(1) : glob);
  const dfa = new LazyDfa(compile(nodes));
  if (anchored) return (path) => dfa.matches(path, 0, false);
  // Without `/` in the pattern only a whole `**` can cross folders; anything else matches the file name alone.
  if (!crossesFolders(nodes)) return (path) => dfa.matches(path, path.lastIndexOf("/") + 1, false);
  return (path) => dfa.matches(path, 0, true);
}

/**
 * A glob as rg's `-g` takes it (a line of a gitignore file), over root-relative file paths: trailing whitespace is
 * dropped unless escaped (`a\ `), a blank glob or a `#` comment is no glob at all; a leading `!` keeps what the rest
 * does not match and, as rg never looks inside a folder it excludes, leaves out every file under a folder it matches
 * (`!a*` drops `abc/x.txt`); a trailing `/` matches folders only. Throws GlobSyntaxError for an invalid pattern.
 */
export function pathFilter(glob: string): (path: string) => boolean {
  const line = glob.endsWith("\\ ") ? glob : glob.trimEnd();
  if (line === "" || line.startsWith("#")) return () => true;
  const negated = line.startsWith("!");
  let body = negated ? line.slice(1) : line;
  if (negated && body === "") return () => false; // rg: nothing is left
  // as rg reads the line: a leading `/` anchors it first, then a trailing `/` (escaped or not) says folders only
  const anchored = body.startsWith("/");
  const foldersOnly = body.length > 1 && body.endsWith("/");
  if (foldersOnly) body = body.slice(0, body.endsWith("\\/") ? -2 : -1);
  // nothing left: `/` matches nothing, `\/` every folder
  const matches = body === "" || body === "/" ? () => !anchored : globMatcher(body);
  if (!negated) return foldersOnly ? () => false : matches; // a file is never a folder
  return (path) => {
    for (let cut = path.indexOf("/"); cut >= 0; cut = path.indexOf("/", cut + 1)) if (matches(path.slice(0, cut))) return false;
    return foldersOnly || !matches(path);
  };
}

// ---- parsing ---------------------------------------------------------------------------------------------------------

function parse(glob: string): Node[] {
  const parser = { glob, at: 0, depth: 0 };
  const nodes = parseSequence(parser);
  if (parser.at < glob.length) throw new GlobSyntaxError(`error parsing glob '${glob}': unopened alternate group; missing '{' (maybe escape '}' with '[}]'?)`);
  return nodes;
}

interface Parser {
  glob: string;
  at: number;
  depth: number;
}

/** Reads up to the end, or (inside braces) up to the `,` or `}` that ends this alternative. */
function parseSequence(p: Parser): Node[] {
  const { glob } = p;
  const out: Node[] = [];
  while (p.at < glob.length) {
    const c = glob[p.at];
    if (c === "}" || (c === "," && p.depth > 0)) {
      if (p.depth === 0) break; // a stray `}`: parse() reports it
      return out;
    }
    if (c === "*") out.push(parseStars(p));
    else if (c === "?") {
      out.push({ kind: "noslash" });
      p.at++;
    } else if (c === "[") out.push(parseClass(p));
    else if (c === "{") out.push(parseAlternation(p));
    else if (c === "\\") {
      if (p.at + 1 >= glob.length) throw new GlobSyntaxError(`error parsing glob '${glob}': dangling '\\'`);
      const code = glob.codePointAt(p.at + 1) as number;
      out.push({ kind: "char", code });
      p.at += code > 0xffff ? 3 : 2;
    } else {
      const code = glob.codePointAt(p.at) as number;
      out.push({ kind: "char", code });
      p.at += code > 0xffff ? 2 : 1;
    }
  }
  if (p.depth > 0) throw new GlobSyntaxError(`error parsing glob '${glob}': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)`);
  return out;
}

/** `**` is recursive only as a whole path component; `*`, and `**` anywhere else, stay within one folder. */
function parseStars(p: Parser): Node {
  const { glob } = p;
  const start = p.at;
  if (glob[start + 1] !== "*") {
    p.at++;
    return { kind: "star" };
  }
  p.at += 2;
  const before = start === 0 ? "/" : glob[start - 1];
  const after = glob[p.at];
  const componentStart = before === "/" || (p.depth > 0 && (before === "{" || before === ",") && braceAtComponentStart(glob, start));
  if (componentStart && after === "/") {
    p.at++;
    return { kind: "dirs" };
  }
  if (componentStart && (after === undefined || (p.depth > 0 && (after === "," || after === "}")))) return { kind: "anything" };
  return { kind: "star" };
}

/** For `{**,…}`: whether the innermost brace around `at` opens at the start of a component. */
function braceAtComponentStart(glob: string, at: number): boolean {
  let depth = 0;
  for (let i = at - 1; i >= 0; i--) {
    if (glob[i] === "}") depth++;
    else if (glob[i] === "{" && depth-- === 0) return i === 0 || glob[i - 1] === "/";
  }
  return false;
}

function parseClass(p: Parser): Node {
  const { glob } = p;
  let i = p.at + 1;
  let negated = false;
  if (glob[i] === "!" || glob[i] === "^") {
    negated = true;
    i++;
  }
  const ranges: number[] = [];
  let first = true;
  for (;;) {
    if (i >= glob.length) throw new GlobSyntaxError(`error parsing glob '${glob}': unclosed character class; missing ']'`);
    const c = glob.codePointAt(i) as number;
    if (c === 93 && !first) break; // `]`, literal when it comes first
    first = false;
    i += c > 0xffff ? 2 : 1;
    if (glob[i] === "-" && i + 1 < glob.length && glob[i + 1] !== "]") {
      const hi = glob.codePointAt(i + 1) as number;
      if (hi < c) throw new GlobSyntaxError(`error parsing glob '${glob}': invalid range; '${String.fromCodePoint(c)}' > '${String.fromCodePoint(hi)}'`);
      ranges.push(c, hi);
      i += hi > 0xffff ? 3 : 2;
    } else ranges.push(c, c);
  }
  p.at = i + 1;
  return { kind: "class", negated, ranges };
}

function parseAlternation(p: Parser): Node {
  p.at++; // `{`
  p.depth++;
  const alternatives: Node[][] = [];
  for (;;) {
    alternatives.push(parseSequence(p));
    const c = p.glob[p.at++];
    if (c === "}") break;
    // parseSequence returned at a `,` (it throws at the end of the pattern)
  }
  p.depth--;
  // globset drops an empty choice (`a{,b}` is `ab` only); all of them empty, the group matches the empty string
  const chosen = alternatives.filter((a) => a.length > 0);
  return { kind: "alt", alternatives: chosen.length ? chosen : [[]] };
}

function crossesFolders(nodes: readonly Node[]): boolean {
  return nodes.some((n) => n.kind === "anything" || n.kind === "dirs" || (n.kind === "alt" && n.alternatives.some(crossesFolders)));
}

// ---- the NFA ---------------------------------------------------------------------------------------------------------

const CHAR = 0;
const NOSLASH = 1;
const ANY = 2;
const CLASS = 3;
const SPLIT = 4;
const MATCH = 5;

/** States in parallel arrays: kind, its argument (a code point or a class index), and up to two successors. */
class Nfa {
  readonly kind: number[] = [];
  readonly arg: number[] = [];
  readonly out: number[] = [];
  readonly out2: number[] = [];
  readonly classes: { negated: boolean; ranges: number[] }[] = [];
  start = 0;

  add(kind: number, arg: number, out: number, out2 = -1): number {
    this.kind.push(kind);
    this.arg.push(arg);
    this.out.push(out);
    this.out2.push(out2);
    return this.kind.length - 1;
  }

  /** Does consuming state `s` accept code point `c`? */
  accepts(s: number, c: number): boolean {
    switch (this.kind[s]) {
      case CHAR:
        return this.arg[s] === c;
      case NOSLASH:
        return c !== SLASH;
      case ANY:
        return true;
      case CLASS: {
        if (c === SLASH) return false;
        const { negated, ranges } = this.classes[this.arg[s]];
        let inside = false;
        for (let k = 0; k < ranges.length && !inside; k += 2) inside = c >= ranges[k] && c <= ranges[k + 1];
        return inside !== negated;
      }
      default:
        return false;
    }
  }
}

function compile(nodes: readonly Node[]): Nfa {
  const nfa = new Nfa();
  const match = nfa.add(MATCH, 0, -1);
  nfa.start = compileSequence(nfa, nodes, match);
  return nfa;
}

/** Builds back to front: each node is compiled with the state that follows it already known. */
function compileSequence(nfa: Nfa, nodes: readonly Node[], next: number): number {
  let at = next;
  for (let k = nodes.length - 1; k >= 0; k--) at = compileNode(nfa, nodes[k], at);
  return at;
}

function compileNode(nfa: Nfa, node: Node, next: number): number {
  switch (node.kind) {
    case "char":
      return nfa.add(CHAR, node.code, next);
    case "noslash":
      return nfa.add(NOSLASH, 0, next);
    case "class":
      nfa.classes.push({ negated: node.negated, ranges: node.ranges });
      return nfa.add(CLASS, nfa.classes.length - 1, next);
    case "star":
    case "anything": {
      // loop: split(one more character, or go on)
      const loop = nfa.add(SPLIT, 0, -1, next);
      nfa.out[loop] = nfa.add(node.kind === "star" ? NOSLASH : ANY, 0, loop);
      return loop;
    }
    case "dirs": {
      // (name characters* '/')*: split(a folder, or go on); a folder is split(a name character, or its '/')
      const loop = nfa.add(SPLIT, 0, -1, next);
      const name = nfa.add(SPLIT, 0, -1, nfa.add(CHAR, SLASH, loop));
      nfa.out[name] = nfa.add(NOSLASH, 0, name);
      nfa.out[loop] = name;
      return loop;
    }
    case "alt": {
      let at = -1;
      for (let k = node.alternatives.length - 1; k >= 0; k--) {
        const alternative = compileSequence(nfa, node.alternatives[k], next);
        at = at < 0 ? alternative : nfa.add(SPLIT, 0, alternative, at);
      }
      return at;
    }
  }
}

// ---- the lazy DFA ----------------------------------------------------------------------------------------------------

interface DState {
  /** The consuming NFA states of this set (after following every split). */
  readonly states: Int32Array;
  readonly accepting: boolean;
  /** Next state by ASCII code, -1 until computed. */
  readonly ascii: Int32Array;
  readonly other: Map<number, number>;
}

class LazyDfa {
  private readonly dstates: DState[] = [];
  private readonly byKey = new Map<string, number>();
  private readonly mark: Int32Array;
  private generation = 0;
  private readonly startClosure: number[];
  private startState = -1;

  constructor(private readonly nfa: Nfa) {
    this.mark = new Int32Array(nfa.kind.length);
    this.startClosure = this.closure([nfa.start]);
  }

  /**
   * Runs the path from `from`. `restart`: a match may also begin after any `/` (a pattern without `/` that has a
   * recursive `**`): the start state joins every state reached by a `/`.
   */
  matches(path: string, from: number, restart: boolean): boolean {
    if (this.dstates.length >= MAX_DFA_STATES) return this.simulate(path, from, restart);
    if (this.startState < 0) this.startState = this.intern(this.startClosure);
    let d = this.startState;
    for (let i = from; i < path.length; i++) {
      let c = path.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < path.length) {
        const low = path.charCodeAt(i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          c = ((c - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
          i++;
        }
      }
      let next = c < 128 ? this.dstates[d].ascii[c] : (this.dstates[d].other.get(c) ?? -1);
      if (next < 0) {
        if (this.dstates.length >= MAX_DFA_STATES) return this.simulate(path, from, restart); // from here on, always
        next = this.step(d, c, restart);
      }
      d = next;
      const state = this.dstates[d];
      if (!restart && state.states.length === 0 && !state.accepting) return false; // dead: nothing can match any more
    }
    return this.dstates[d].accepting;
  }

  private step(d: number, c: number, restart: boolean): number {
    const from = this.dstates[d];
    const targets: number[] = [];
    for (const s of from.states) if (this.nfa.accepts(s, c)) targets.push(this.nfa.out[s]);
    if (restart && c === SLASH) targets.push(this.nfa.start);
    const next = this.intern(this.closure(targets));
    if (c < 128) from.ascii[c] = next;
    else from.other.set(c, next);
    return next;
  }

  /** The same walk without building DFA states: the NFA's live states, stepped character by character. */
  simulate(path: string, from: number, restart: boolean): boolean {
    const size = this.nfa.kind.length;
    let live = new Int32Array(size);
    let next = new Int32Array(size);
    const stack = new Int32Array(size * 2 + 2);
    let liveCount = this.follow(this.startClosure, live, stack);
    for (let i = from; i < path.length; i++) {
      const c = path.codePointAt(i) as number;
      if (c > 0xffff) i++;
      const generation = ++this.generation;
      let nextCount = 0;
      for (let k = 0; k < liveCount; k++) {
        const s = live[k];
        if (this.nfa.accepts(s, c)) nextCount = this.add(this.nfa.out[s], generation, next, nextCount, stack);
      }
      if (restart && c === SLASH) nextCount = this.add(this.nfa.start, generation, next, nextCount, stack);
      [live, next] = [next, live];
      liveCount = nextCount;
      if (!restart && liveCount === 0) return false;
    }
    for (let k = 0; k < liveCount; k++) if (this.nfa.kind[live[k]] === MATCH) return true;
    return false;
  }

  private follow(seeds: number[], into: Int32Array, stack: Int32Array): number {
    const generation = ++this.generation;
    let n = 0;
    for (const s of seeds) n = this.add(s, generation, into, n, stack);
    return n;
  }

  /** Adds `seed` and what its splits reach (unless marked in this generation) to `into`; returns the new count. */
  private add(seed: number, generation: number, into: Int32Array, count: number, stack: Int32Array): number {
    const { kind, out, out2 } = this.nfa;
    let top = 0;
    stack[top++] = seed;
    let n = count;
    while (top > 0) {
      const s = stack[--top];
      if (s < 0 || this.mark[s] === generation) continue;
      this.mark[s] = generation;
      if (kind[s] === SPLIT) {
        stack[top++] = out2[s];
        stack[top++] = out[s];
      } else into[n++] = s;
    }
    return n;
  }

  /** Every state reachable from `seeds` through splits, sorted: consuming states and the match. */
  private closure(seeds: number[]): number[] {
    const { kind, out, out2 } = this.nfa;
    const generation = ++this.generation;
    const result: number[] = [];
    const stack = [...seeds];
    while (stack.length) {
      const s = stack.pop() as number;
      if (s < 0 || this.mark[s] === generation) continue;
      this.mark[s] = generation;
      if (kind[s] === SPLIT) stack.push(out2[s], out[s]);
      else result.push(s);
    }
    return result.sort((a, b) => a - b);
  }

  private intern(states: number[]): number {
    const key = states.join(",");
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    const accepting = states.some((s) => this.nfa.kind[s] === MATCH);
    const consuming = Int32Array.from(states.filter((s) => this.nfa.kind[s] !== MATCH));
    this.dstates.push({ states: consuming, accepting, ascii: new Int32Array(128).fill(-1), other: new Map() });
    this.byKey.set(key, this.dstates.length - 1);
    return this.dstates.length - 1;
  }
}
