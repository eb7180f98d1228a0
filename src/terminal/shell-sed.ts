import { UNKNOWN } from "./shell-words.js";

/** What a sed script does beyond printing: the files it writes and the commands it runs. */
export type SedEffect =
  | { kind: "write"; command: "w" | "W"; file: string }
  | { kind: "run"; command: string }
  | { kind: "run pattern space"; form: "e" | "s///e" };

export type SedScan = { ok: true; effects: SedEffect[] } | { ok: false; error: string };

class SedSyntax extends Error {}

const NO_ARGUMENT = "=dDgGhHnNpPxzF";
const NUMBER_ARGUMENT = "lLqQ";
const LABEL_ARGUMENT = "btT";
const TEXT_ARGUMENT = "aic";
const SUBSTITUTE_FLAGS = "gpiImM0123456789";

/**
 * Reads a GNU sed script as sed 4.9's compiler does, far enough to find `w`/`W` files, `e` commands and the `w` and `e`
 * flags of `s`. A command sed would not accept is an error (fail closed). UNKNOWN (a shell variable in the script) is
 * accepted where it can only be text or a number: in addresses, patterns, replacements and the text of `a`/`i`/`c`.
 */
export function scanSed(script: string): SedScan {
  const s = script;
  let i = 0;
  const effects: SedEffect[] = [];
  const fail = (why: string): never => {
    throw new SedSyntax(`${why} at character ${i + 1}`);
  };
  const blanks = (): void => {
    while (s[i] === " " || s[i] === "\t") i++;
  };
  const restOfLine = (): string => {
    const start = i;
    while (i < s.length && s[i] !== "\n") i++;
    return s.slice(start, i);
  };
  /** From after an opening delimiter past the closing one; a backslash quotes the next character, a newline too. */
  const delimited = (d: string): void => {
    while (i < s.length && s[i] !== d) {
      if (s[i] === "\n") fail("a newline inside a pattern");
      i += s[i] === "\\" ? 2 : 1;
    }
    if (i >= s.length) fail("an unterminated pattern");
    i++;
  };
  const delimiter = (): string => {
    const d = s[i++];
    if (d === undefined || d === "\n" || d === "\\" || d === UNKNOWN) fail("a missing or variable delimiter");
    return d;
  };
  const number = (): boolean => {
    const start = i;
    while (/[0-9]/.test(s[i] ?? "") || s[i] === UNKNOWN) i++;
    return i > start;
  };
  const address = (): boolean => {
    if (s[i] === "/" || s[i] === "\\") {
      if (s[i++] === "\\") delimited(delimiter());
      else delimited("/");
      while (s[i] === "I" || s[i] === "M") i++;
      return true;
    }
    if (s[i] === "$") {
      i++;
      return true;
    }
    if (!number()) return false;
    if (s[i] === "~") {
      i++;
      number();
    }
    return true;
  };
  const addresses = (): void => {
    if (address()) {
      blanks();
      if (s[i] === ",") {
        i++;
        blanks();
        if (s[i] === "+" || s[i] === "~") {
          i++;
          if (!number()) fail("a missing line count");
        } else if (!address()) fail("a missing second address");
      }
    }
    blanks();
    while (s[i] === "!") {
      i++;
      blanks();
    }
  };
  /** After a command: blanks, then the end, `;`, a newline, `}` or a comment. */
  const endOfCommand = (): void => {
    blanks();
    if (i < s.length && !";\n}#".includes(s[i])) fail(`unexpected ${JSON.stringify(s[i] === UNKNOWN ? "$variable" : s[i])} after a command`);
  };
  /** Labels end at blanks and `;` (GNU). */
  const label = (): string => {
    blanks();
    const start = i;
    while (i < s.length && !" \t\n;".includes(s[i])) i++;
    return s.slice(start, i);
  };
  /** `a text`, `a\` newline text: to the end of the line, a backslash-newline going on to the next. */
  const text = (): void => {
    blanks();
    if (s[i] === "\\") i += s[i + 1] === "\n" ? 2 : 1;
    while (i < s.length && s[i] !== "\n") i += s[i] === "\\" ? 2 : 1;
  };
  const substitute = (): void => {
    const d = delimiter();
    delimited(d);
    delimited(d);
    for (let f = s[i]; f !== undefined && (SUBSTITUTE_FLAGS.includes(f) || f === "e" || f === "w"); f = s[i]) {
      i++;
      if (f === "e") effects.push({ kind: "run pattern space", form: "s///e" });
      if (f === "w") {
        blanks();
        return void effects.push({ kind: "write", command: "w", file: restOfLine() });
      }
    }
    endOfCommand();
  };
  try {
    while (i < s.length) {
      if (" \t\n;".includes(s[i])) {
        i++;
        continue;
      }
      if (s[i] === "#") {
        restOfLine();
        continue;
      }
      addresses();
      const c = s[i++];
      if (c === undefined) fail("a missing command");
      if (c === "{") continue;
      if (NO_ARGUMENT.includes(c) || c === "}") endOfCommand();
      else if (NUMBER_ARGUMENT.includes(c)) {
        blanks();
        number();
        endOfCommand();
      } else if (c === ":") {
        if (!label()) fail("a `:` without a label");
      } else if (LABEL_ARGUMENT.includes(c)) label();
      else if (TEXT_ARGUMENT.includes(c)) text();
      else if (c === "r" || c === "R") {
        blanks();
        if (!restOfLine()) fail("a missing file name");
      } else if (c === "w" || c === "W") {
        blanks();
        effects.push({ kind: "write", command: c, file: restOfLine() });
      } else if (c === "e") {
        blanks();
        const command = restOfLine();
        effects.push(command ? { kind: "run", command } : { kind: "run pattern space", form: "e" });
      } else if (c === "s") substitute();
      else if (c === "y") {
        const d = delimiter();
        delimited(d);
        delimited(d);
        endOfCommand();
      } else if (c === "v") label();
      else fail(c === UNKNOWN ? "a variable where a command goes" : `an unknown command ${JSON.stringify(c)}`);
    }
  } catch (e) {
    if (e instanceof SedSyntax) return { ok: false, error: e.message };
    throw e;
  }
  return { ok: true, effects };
}
