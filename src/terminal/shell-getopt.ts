import type { Word } from "./shell-words.js";

/** How one program reads its options: enough of getopt_long to find which word is an option's value. */
export interface OptionSpec {
  /** Short options whose value is the rest of the cluster or else the next word (getopt `x:`). */
  shortArg?: string;
  /** Short options whose value can only be attached (getopt `x::`, like `sed -i.bak`). */
  shortOptArg?: string;
  /** Long options (full names) that take the next word as their value when none is attached with `=`. */
  longArg?: readonly string[];
  /** Every long option the program knows, so an abbreviation (`--in` for `--in-place`) resolves as getopt_long does. */
  longNames?: readonly string[];
  /** GNU permutation: options after operands still count (sed, sort, tee). Wrappers stop at their first operand. */
  permute?: boolean;
}

export interface Option {
  /** The letter of a short option or the full name of a long one. */
  name: string;
  /** The value: attached text, the next word, or undefined for a flag. */
  value?: Word | string;
  word: Word;
}

export interface ParsedArgs {
  options: Option[];
  operands: Word[];
  /** Index in the input of the first operand (for wrappers: where the wrapped command starts). */
  firstOperand: number;
}

/** Resolves a long option as getopt_long does: an exact name, or the one known name it abbreviates. */
function resolveLong(name: string, spec: OptionSpec): string {
  const known = spec.longNames ?? spec.longArg ?? [];
  if (known.includes(name)) return name;
  const matches = known.filter((n) => n.startsWith(name));
  return matches.length === 1 ? matches[0] : name;
}

/**
 * Splits a program's arguments into options and operands. A word that is not literal (`$x`, `"$f"`) is taken as an
 * operand: the rules guard against habits, not against an option hidden in a variable (the sandbox is the guard there).
 */
export function parseArgs(args: readonly Word[], spec: OptionSpec): ParsedArgs {
  const options: Option[] = [];
  const operands: Word[] = [];
  let firstOperand = -1;
  let onlyOperands = false;
  for (let i = 0; i < args.length; i++) {
    const w = args[i];
    const v = w.value;
    const isOption = !onlyOperands && v !== null && v.length > 1 && v.startsWith("-");
    if (!isOption) {
      if (firstOperand < 0) firstOperand = i;
      operands.push(w);
      if (!spec.permute) onlyOperands = true;
      continue;
    }
    if (v === "--") {
      onlyOperands = true;
      if (firstOperand < 0 && !spec.permute) firstOperand = i + 1;
      continue;
    }
    if (v.startsWith("--")) {
      const eq = v.indexOf("=");
      const name = resolveLong(eq < 0 ? v.slice(2) : v.slice(2, eq), spec);
      if (eq >= 0) options.push({ name, value: v.slice(eq + 1), word: w });
      else if (spec.longArg?.includes(name) && i + 1 < args.length) options.push({ name, value: args[++i], word: w });
      else options.push({ name, word: w });
      continue;
    }
    for (let k = 1; k < v.length; k++) {
      const c = v[k];
      const rest = v.slice(k + 1);
      if (spec.shortOptArg?.includes(c)) {
        options.push({ name: c, value: rest, word: w });
        break;
      }
      if (spec.shortArg?.includes(c)) {
        if (rest) options.push({ name: c, value: rest, word: w });
        else if (i + 1 < args.length) options.push({ name: c, value: args[++i], word: w });
        else options.push({ name: c, word: w });
        break;
      }
      options.push({ name: c, word: w });
    }
  }
  return { options, operands, firstOperand: firstOperand < 0 ? args.length : firstOperand };
}

/** The literal value of an option's value, or null when it is not literal. */
export function optionValue(o: Option): string | null {
  if (o.value === undefined) return "";
  return typeof o.value === "string" ? o.value : o.value.value;
}
