import { UNKNOWN } from "./shell-words.js";

/** What an awk program does beyond printing: the files it writes, the commands it runs, the code it loads. */
export type AwkEffect =
  | { kind: "write"; op: ">" | ">>" /** null: not one literal string */; target: string | null }
  | { kind: "run"; via: "|" | "system()" /** null: not one literal string */; command: string | null }
  | { kind: "load"; directive: string };

export type AwkScan = { ok: true; effects: AwkEffect[] } | { ok: false; error: string };

type Token = { kind: "string"; value: string } | { kind: "regex" | "number" } | { kind: "name" | "op" | "directive"; value: string };

class AwkSyntax extends Error {}

/** After these words a `/` starts a regular expression; after any other name it divides. */
const REGEX_AFTER = new Set(["print", "printf", "return", "do", "else", "in", "exit"]);
const OPERATORS = [
  "**=",
  "|&",
  "||",
  "&&",
  ">>",
  ">=",
  "<=",
  "==",
  "!=",
  "!~",
  "++",
  "--",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "^=",
  "**",
  ..."><|!~+-*/%^=?:,;(){}[]$",
];
/** Where a statement ends (a print statement's redirection target must be followed by one). */
const STATEMENT_END = new Set([";", "\n", "}", "{"]);
const STRING_ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "/": "/" };

function endsOperand(t: Token | undefined): boolean {
  if (!t) return false;
  if (t.kind === "string" || t.kind === "regex" || t.kind === "number") return true;
  if (t.kind === "name") return !REGEX_AFTER.has(t.value);
  return t.kind === "op" && [")", "]", "++", "--"].includes(t.value);
}

function startsStatement(t: Token | undefined): boolean {
  if (!t) return true;
  if (t.kind === "name") return t.value === "else" || t.value === "do";
  return t.kind === "op" && ["{", "}", ";", "\n", ")"].includes(t.value);
}

function tokenize(p: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new AwkSyntax(`${why} at character ${i + 1}`);
  };
  while (i < p.length) {
    const c = p[i];
    if (c === " " || c === "\t" || c === "\r") i++;
    else if (c === "\\" && p[i + 1] === "\n") i += 2;
    else if (c === "\n") {
      out.push({ kind: "op", value: "\n" });
      i++;
    } else if (c === "#") while (i < p.length && p[i] !== "\n") i++;
    else if (c === '"') {
      let value = "";
      for (i++; p[i] !== '"'; i++) {
        if (i >= p.length || p[i] === "\n") fail("an unterminated string");
        if (p[i] === "\\") value += STRING_ESCAPES[p[++i]] ?? p[i];
        else value += p[i];
      }
      i++;
      out.push({ kind: "string", value });
    } else if (c === "/" && !endsOperand(out[out.length - 1])) {
      let bracket = false;
      for (i++; bracket || p[i] !== "/"; i++) {
        if (i >= p.length || p[i] === "\n") fail("an unterminated regular expression");
        if (p[i] === "\\") i++;
        else if (!bracket && p[i] === "[") {
          bracket = true;
          if (p[i + 1] === "^") i++;
          if (p[i + 1] === "]") i++; // a `]` first in the brackets is literal
        } else if (bracket && p[i] === "]") bracket = false;
      }
      i++;
      out.push({ kind: "regex" });
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(p[i + 1] ?? ""))) {
      i += /^(0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]*([eE][+-]?[0-9]+)?)/.exec(p.slice(i))![0].length;
      out.push({ kind: "number" });
    } else if (c === UNKNOWN) {
      // A shell variable as an operand (`awk "NR==$n"`) is taken as a value; where a statement starts it is the program.
      if (startsStatement(out[out.length - 1])) fail("a shell variable where a statement starts");
      i++;
      out.push({ kind: "number" });
    } else if (/[A-Za-z_@]/.test(c)) {
      const word = /^@?[A-Za-z_][A-Za-z0-9_]*/.exec(p.slice(i))?.[0] ?? fail("a lone @");
      i += word.length;
      out.push(word.startsWith("@") ? { kind: "directive", value: word } : { kind: "name", value: word });
    } else {
      const op = OPERATORS.find((o) => p.startsWith(o, i)) ?? fail(`an unexpected ${JSON.stringify(c)}`);
      i += op.length;
      out.push({ kind: "op", value: op });
    }
  }
  return out;
}

/**
 * Finds the effects of an awk program (POSIX awk, gawk and mawk): output redirections and pipes of `print`/`printf`,
 * `cmd | getline`, `system(…)`, and gawk's `@include`/`@load`. A lexical scan, fail closed: a program it cannot read is
 * an error. UNKNOWN (a shell variable in the program) is a value inside strings, regular expressions and expressions, and
 * refused where a statement starts; what a variable's value adds to the program is not seen.
 */
export function scanAwk(program: string): AwkScan {
  let toks: Token[];
  try {
    toks = tokenize(program);
  } catch (e) {
    if (e instanceof AwkSyntax) return { ok: false, error: e.message };
    throw e;
  }
  const effects: AwkEffect[] = [];
  const op = (k: number): string | undefined => {
    const t = toks[k];
    return t?.kind === "op" ? t.value : undefined;
  };
  const name = (k: number): string | undefined => {
    const t = toks[k];
    return t?.kind === "name" ? t.value : undefined;
  };
  /** The literal string at k, if it is one with no shell variable in it. */
  const literal = (k: number): string | null => {
    const t = toks[k];
    return t?.kind === "string" && !t.value.includes(UNKNOWN) ? t.value : null;
  };
  /** A redirection's target or a pipe's command: one literal string that ends the statement. */
  const lastOfStatement = (k: number): string | null => (k + 1 >= toks.length || STATEMENT_END.has(op(k + 1) ?? "") ? literal(k) : null);
  const inPrint = new Set<number>();
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k];
    if (t.kind === "directive" && (t.value === "@include" || t.value === "@load")) effects.push({ kind: "load", directive: t.value });
    if (name(k) === "print" || name(k) === "printf") {
      // In a print statement a `>`, `>>` or `|` outside parentheses is its redirection.
      let depth = 0;
      for (let j = k + 1; j < toks.length; j++) {
        const o = op(j) ?? "";
        if (o === "(" || o === "[") depth++;
        else if ((o === ")" || o === "]") && --depth < 0) break;
        else if (depth > 0) continue;
        else if (STATEMENT_END.has(o)) break;
        else if (o === ">" || o === ">>") effects.push({ kind: "write", op: o, target: lastOfStatement(j + 1) });
        else if (o === "|" || o === "|&") {
          inPrint.add(j);
          effects.push({ kind: "run", via: "|", command: lastOfStatement(j + 1) });
        }
      }
    }
    if ((op(k) === "|" || op(k) === "|&") && !inPrint.has(k)) {
      // `"cmd" | getline`: the command is the string just before, when nothing is joined to it.
      const single = name(k + 1) === "getline" && !endsOperand(toks[k - 2]);
      effects.push({ kind: "run", via: "|", command: single ? literal(k - 1) : null });
    }
    if (name(k) === "system") {
      const single = op(k + 1) === "(" && op(k + 3) === ")";
      effects.push({ kind: "run", via: "system()", command: single ? literal(k + 2) : null });
    }
  }
  return { ok: true, effects };
}
