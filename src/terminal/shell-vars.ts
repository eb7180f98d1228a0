import { parseArgs } from "./shell-getopt.js";
import { type ArgvSink, type Rule, checkTarget, refuse } from "./shell-sink.js";
import { type Word, STDIN_PATHS, UNKNOWN, descriptorOfPath, literalWord, show } from "./shell-words.js";

/**
 * Variables, and the builtins that set them or take their names. Bash evaluates some strings as code long after the
 * line assigned them: a prompt (PS4 under `set -x`), a pager or editor a program runs with `sh -c`, a name whose
 * subscript it expands again (`printf -v 'a[$(cmd)]'`). What the line spells out is checked; what is computed at run
 * time is not visible here.
 */

/** A program runs the value as a shell command, with its own arguments after it (git's pager, an editor, ssh). */
const COMMAND_VARS = new Set([
  "PROMPT_COMMAND",
  "PAGER",
  "GIT_PAGER",
  "MANPAGER",
  "SYSTEMD_PAGER",
  "EDITOR",
  "VISUAL",
  "GIT_EDITOR",
  "GIT_SEQUENCE_EDITOR",
  "FCEDIT",
  "GIT_SSH_COMMAND",
  "GIT_SSH",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "GIT_EXTERNAL_DIFF",
  "GIT_PROXY_COMMAND",
  "BROWSER",
]);
/** Prompt strings: bash decodes their escapes and then expands them, command substitutions included. */
const PROMPT_VARS = /^PS[0-4]$/;
/** A file a shell or git reads as code or configuration: a file is reviewed like any script; stdin or a pipe is not. */
const FILE_VARS = new Set(["BASH_ENV", "ENV", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR"]);
/** Folders programs and libraries are loaded from: one in the private /tmp runs what the line may have written there. */
const PATH_LIST_VARS = new Set(["PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "BASH_LOADABLES_PATH"]);
/** What no value makes checkable: aliases and the command hash table, configuration injected into git, less's filters. */
const REFUSED_VARS =
  /^(BASH_ALIASES|BASH_CMDS|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_(KEY|VALUE)_\d+|GIT_ALLOW_PROTOCOL|LESSOPEN|LESSCLOSE|MAKEFILES|BASH_FUNC_.*)$/;

/** Whether bash, or a program it starts, runs the variable's value as code or reads it as a file of code. */
export function isCodeVariable(name: string): boolean {
  return COMMAND_VARS.has(name) || PROMPT_VARS.test(name) || FILE_VARS.has(name) || REFUSED_VARS.test(name) || name === "HISTFILE" || name === "MAKEFLAGS";
}

/**
 * An assignment to NAME: `value` is the word assigned, or undefined when it is set at run time (`read`, `printf -v`,
 * `for NAME in`). A variable whose value runs as code needs a literal value, which is checked; any other literal value's
 * command substitutions are checked too, since arithmetic, `${!x}` and namerefs evaluate them later (`x='a[$(cmd)]'`).
 * `setter` is what sets it as the message shows it (`` `export PS4=…` ``), `origin` where the assignment comes from when it
 * is not the line.
 */
export function assignment(name: string, value: Word | undefined, sink: ArgvSink, setter: string, origin?: string): void {
  const where = `the value of ${show(name)}${origin ? ` (${origin})` : ""}`;
  const code = isCodeVariable(name);
  if (REFUSED_VARS.test(name)) refuse(`${setter} sets ${show(name)}, which changes what later commands run in a way that could not be checked`);
  if (code && value === undefined)
    refuse(`${setter} sets ${show(name)}, whose value runs as code, to a value only known when it runs, so it could not be checked`);
  if (value === undefined) return;
  if (PATH_LIST_VARS.has(name)) {
    for (const dir of value.template.split(/[:\s]+/)) if (dir && !dir.includes(UNKNOWN)) sink.reads(dir, show(`${name}=${dir}`));
  }
  const v = value.value;
  if (v === null) {
    if (code) refuse(`${where} (${show(value.text)}) is not literal, and it runs as code, so it could not be checked`);
    return;
  }
  if (COMMAND_VARS.has(name)) return sink.script(`${v} "$@"`, where);
  if (PROMPT_VARS.test(name)) {
    const octal = /\\[0-7]/.exec(v);
    if (octal) refuse(`${where} is a prompt, and bash decodes the escape ${show(octal[0])} in it before it expands it, so it could not be checked`);
  } else if (FILE_VARS.has(name)) {
    if (value.kind === "process_substitution" || STDIN_PATHS.has(v) || descriptorOfPath(v) !== null)
      refuse(`${where} (${show(value.text)}) is code read from a pipe or a descriptor, which could not be checked`);
    sink.reads(v, show(`${name}=${v}`));
  } else if (name === "HISTFILE") checkTarget(v, "HISTFILE=", sink);
  else if (name === "MAKEFLAGS") sink.argv(["make", ...v.split(/\s+/).filter(Boolean)].map(literalWord));
  sink.evaluated(v, where);
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*/;

/**
 * A variable name a builtin takes (`printf -v NAME`, `read NAME`, `unset NAME`, `[[ -v NAME ]]`): bash expands its
 * subscript once more, so the command substitutions in a literal one are checked. A name that is not literal is refused;
 * a literal name with a computed subscript (`a[$i]`) is arithmetic on a value, like `(( a[i] ))`. Returns the variable.
 */
export function nameOperand(w: Word, setter: string, sink: ArgvSink): string {
  const known = IDENTIFIER.exec(w.prefix)?.[0] ?? "";
  if (w.value === null) {
    if (!known || w.prefix[known.length] !== "[")
      refuse(`the name ${show(w.text)} given to ${show(setter)} is not literal, and bash evaluates a name's subscript, so it could not be checked`);
  } else sink.evaluated(w.value, `the name given to ${show(setter)}`);
  return known;
}

/** A name a builtin assigns at run time. */
function setAtRunTime(w: Word | string | undefined, setter: string, sink: ArgvSink): void {
  if (w === undefined) return;
  assignment(nameOperand(typeof w === "string" ? literalWord(w) : w, setter, sink), undefined, sink, show(setter));
}

function printf(args: Word[], sink: ArgvSink): void {
  for (const o of parseArgs(args, { shortArg: "v" }).options) if (o.name === "v") setAtRunTime(o.value, "printf -v", sink);
}

function read(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, { shortArg: "adinNptu" });
  for (const o of p.options) if (o.name === "a") setAtRunTime(o.value, "read -a", sink);
  for (const w of p.operands) setAtRunTime(w, "read", sink);
}

/** `mapfile -C CALLBACK` evaluates the callback with the line's index and the line itself appended. */
function mapfile(args: Word[], sink: ArgvSink, name: string): void {
  const p = parseArgs(args, { shortArg: "dnOsuCc" });
  for (const o of p.options) {
    if (o.name !== "C" || o.value === undefined) continue;
    const cb = typeof o.value === "string" ? o.value : o.value.value;
    if (cb === null) refuse(`the callback of ${show(`${name} -C`)} is not literal, so what it runs could not be checked`);
    sink.script(`${cb} "$_" "$_"`, show(`${name} -C`));
  }
  setAtRunTime(p.operands[0], name, sink);
}

function getopts(args: Word[], sink: ArgvSink): void {
  setAtRunTime(args[1], "getopts", sink);
}

function wait(args: Word[], sink: ArgvSink): void {
  for (const o of parseArgs(args, { shortArg: "p" }).options) if (o.name === "p") setAtRunTime(o.value, "wait -p", sink);
}

/** Leading option words of a builtin that takes `-x` and `+x` (declare, unset): their letters, and where operands start. */
function flagWords(args: Word[]): { flags: Set<string>; from: number } {
  const flags = new Set<string>();
  let i = 0;
  for (; i < args.length; i++) {
    const v = args[i].value;
    if (v === "--") return { flags, from: i + 1 };
    if (v === null || !/^[-+][A-Za-z]+$/.test(v)) break;
    for (const c of v.slice(1)) flags.add(c);
  }
  return { flags, from: i };
}

/**
 * `declare`, `typeset`, `local`, `export`, `readonly`. An operand the grammar parsed as an assignment was checked by the
 * walk (its name, value and subscripts); a word operand (`declare 'a[$(cmd)]=1'`, or any operand behind `builtin`) is
 * read here as bash reads it. `-n` makes a nameref: its target is a name too.
 */
function declaration(args: Word[], sink: ArgvSink, name: string): void {
  const { flags, from } = flagWords(args);
  if (flags.has("f") || flags.has("F") || flags.has("p")) return; // functions, or printing
  for (const w of args.slice(from)) {
    const eq = w.prefix.indexOf("=");
    if (w.kind === "variable_assignment") {
      if (flags.has("n")) namerefTarget(w.value === null ? null : w.value.slice(eq + 1), w.text, name, sink);
      continue;
    }
    if (eq < 0) {
      nameOperand(w, name, sink);
      continue;
    }
    const variable = nameOperand(literalWord(w.prefix.slice(0, eq).replace(/\+$/, "")), name, sink);
    const cut = (s: string): string => s.slice(eq + 1);
    const value: Word = { ...w, value: w.value === null ? null : cut(w.value), prefix: cut(w.prefix), template: cut(w.template) };
    if (flags.has("n")) namerefTarget(value.value, w.text, name, sink);
    else assignment(variable, value, sink, show(name));
  }
}

/** `declare -n ref=TARGET`: assigning ref assigns TARGET, and reading it evaluates TARGET's subscript. */
function namerefTarget(target: string | null, text: string, setter: string, sink: ArgvSink): void {
  if (target === null) refuse(`the target of ${show(`${setter} -n ${text}`)} is not literal, so it could not be checked`);
  const variable = nameOperand(literalWord(target), `${setter} -n`, sink);
  if (isCodeVariable(variable))
    refuse(`${show(`${setter} -n ${text}`)} makes a second name for ${show(variable)}, whose value runs as code, so its assignments could not be checked`);
}

function unset(args: Word[], sink: ArgvSink): void {
  const { flags, from } = flagWords(args);
  if (flags.has("f")) return;
  for (const w of args.slice(from)) nameOperand(w, "unset", sink);
}

/** `let EXPR…`: each argument is an arithmetic expression. */
function letRule(args: Word[], sink: ArgvSink): void {
  for (const w of args) if (w.value !== null) sink.evaluated(w.value, "an arithmetic expression");
}

function test(args: Word[], sink: ArgvSink): void {
  for (let i = 0; i + 1 < args.length; i++) if (args[i].value === "-v") nameOperand(args[i + 1], "test -v", sink);
}

function hash(args: Word[]): void {
  if (flagWords(args).flags.has("p")) refuse("`hash -p` makes a command name run another program, so what later commands run could not be checked");
}

/** `fc` without `-l` runs commands from the history (or an editor on them). */
function fc(args: Word[]): void {
  if (!flagWords(args).flags.has("l")) refuse("`fc` runs commands from the history, which could not be checked");
}

function history(args: Word[], sink: ArgvSink): void {
  const { flags, from } = flagWords(args);
  if (flags.has("a") || flags.has("w")) checkTarget(args[from], "history -w", sink);
}

/** `compgen -C CMD` runs CMD with the word to complete appended. */
function compgen(args: Word[], sink: ArgvSink): void {
  for (const o of parseArgs(args, { shortArg: "AGWXPSFCo" }).options) {
    if (o.name !== "C" || o.value === undefined) continue;
    const cmd = typeof o.value === "string" ? o.value : o.value.value;
    if (cmd === null) refuse("the command of `compgen -C` is not literal, so it could not be checked");
    sink.script(`${cmd} "$@"`, show("compgen -C"));
  }
}

/** `cd DIR`, `pushd DIR`: where it goes, when the check can tell (`..` climbs to anywhere, `-` and HOME are elsewhere). */
function cd(args: Word[], sink: ArgvSink): void {
  const target = args.find((w) => w.value === null || !/^-[LPe@]+$/.test(w.value))?.value;
  const unknown = target === undefined || target === null || target === "-" || target.startsWith("~") || target.split("/").includes("..");
  sink.cd(unknown ? null : target);
}

export const BUILTIN_RULES: Record<string, Rule> = {
  cd,
  pushd: cd,
  printf,
  read,
  mapfile,
  readarray: mapfile,
  getopts,
  wait,
  declare: declaration,
  typeset: declaration,
  local: declaration,
  export: declaration,
  readonly: declaration,
  unset,
  let: letRule,
  test,
  hash,
  fc,
  history,
  compgen,
};
