import { type OptionSpec, optionValue, parseArgs } from "./shell-getopt.js";
import { PROGRAM_RULES } from "./shell-programs.js";
import { type ArgvSink, type Rule, checkTarget, needLiteral, refuse } from "./shell-sink.js";
import { BUILTIN_RULES, assignment } from "./shell-vars.js";
import { type Word, STDIN_PATHS, UNKNOWN, descriptorOfPath, literalWord, programName, show } from "./shell-words.js";

/** Runs the rules on what a wrapper runs, if anything. */
function wrapped(args: Word[], from: number, sink: ArgvSink): void {
  if (from < args.length) checkArgv(args.slice(from), sink);
}

function wrapper(spec: OptionSpec, stop?: (opts: string[]) => boolean): Rule {
  return (args, sink) => {
    const p = parseArgs(args, spec);
    if (stop?.(p.options.map((o) => o.name))) return;
    wrapped(args, p.firstOperand, sink);
  };
}

/** Shells whose `-c` string and stdin script are bash-like enough for the bash grammar. */
const SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "rbash"]);

/** A script operand (`bash FILE`, `source FILE`): a file runs like any program, a pipe hides what it runs. */
function scriptOperand(w: Word, sink: ArgvSink, via: string): void {
  if (w.kind === "process_substitution") refuse(`${show(via + " " + w.text)} runs the output of a command as a script, which cannot be checked`);
  if (w.value !== null) sink.reads(w.value, show(`${via} ${w.value}`));
  if (w.value !== null && STDIN_PATHS.has(w.value)) sink.stdinScript(via);
  else if (w.value !== null && descriptorOfPath(w.value) !== null)
    refuse(`${show(via + " " + w.value)} runs a script from a descriptor, which cannot be checked`);
}

function shell(args: Word[], sink: ArgvSink, name: string): void {
  let i = 0;
  let command = false;
  let fromStdin = false;
  for (; i < args.length; i++) {
    const v = args[i].value;
    if (v === null) break;
    if (v === "--" || v === "-") {
      i++;
      break;
    }
    if (v.startsWith("--")) {
      if (v === "--rcfile" || v === "--init-file") i++;
      continue;
    }
    if (!/^[-+]./.test(v)) break;
    for (const c of v.slice(1)) {
      if (c === "c") command = true;
      else if (c === "s") fromStdin = true;
      else if (c === "o" || c === "O") i++; // -o pipefail, -O extglob take the next word
    }
  }
  const operands = args.slice(i);
  if (command) {
    if (operands.length === 0) return; // bash itself rejects `-c` without a string
    const script = operands[0];
    if (script.value === null) refuse(`the script of ${show(name + " -c")} (${show(script.text)}) is not a literal string, so it could not be checked`);
    sink.script(script.value, show(`${name} -c`));
  } else if (fromStdin || operands.length === 0) sink.stdinScript(name);
  else scriptOperand(operands[0], sink, name);
}

function source(args: Word[], sink: ArgvSink, name: string): void {
  if (args[0]) scriptOperand(args[0], sink, name);
}

function evalRule(args: Word[], sink: ArgvSink): void {
  const parts = args.map((w) => {
    if (w.value === null) refuse(`${show("eval " + w.text)} evaluates a word that is not literal, so what it runs could not be checked`);
    return w.value;
  });
  if (parts.length) sink.script(parts.join(" "), show("eval"));
}

function trap(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, {});
  if (p.operands.length < 2) return; // `trap -p`, `trap SIG`: nothing is installed
  const action = p.operands[0];
  if (action.value === null) refuse(`the action of ${show("trap " + action.text)} is not a literal string, so it could not be checked`);
  if (action.value !== "-") sink.script(action.value, show("trap"));
}

function alias(args: Word[], sink: ArgvSink): void {
  for (const w of args) {
    const v = needLiteral(w, "the alias");
    const eq = v.indexOf("=");
    if (eq <= 0) continue;
    sink.script(v.slice(eq + 1), show("alias"));
    sink.alias(v.slice(0, eq), v);
  }
}

function env(args: Word[], sink: ArgvSink): void {
  const spec: OptionSpec = {
    shortArg: "uCS",
    longArg: ["unset", "chdir", "split-string"],
    longNames: [
      "unset",
      "chdir",
      "split-string",
      "ignore-environment",
      "null",
      "debug",
      "default-signal",
      "ignore-signal",
      "block-signal",
      "list-signal-handling",
    ],
  };
  const p = parseArgs(args, spec);
  let rest = args.slice(p.firstOperand);
  const split = p.options.find((o) => o.name === "S" || o.name === "split-string");
  if (split) {
    const s = optionValue(split);
    if (s === null) refuse(`the string of ${show("env -S")} is not literal, so it could not be checked`);
    rest = [...s.split(/\s+/).filter(Boolean).map(literalWord), ...rest];
  }
  afterAssignments(rest, sink, "env");
}

/** `env A=1 cmd`, `sudo A=1 cmd`: the assignments are checked, then the command. */
function afterAssignments(words: Word[], sink: ArgvSink, setter: string): void {
  let rest = words;
  for (let a = envAssignment(rest[0]); a; a = envAssignment(rest[0])) {
    if (a.name) assignment(a.name, a.value, sink, show(setter));
    rest = rest.slice(1);
  }
  if (rest.length) checkArgv(rest, sink);
}

/** `env`'s operands before the command: `-` and `NAME=VALUE` (the value may be an expansion: `env "A=$x"`). */
function envAssignment(w: Word | undefined): { name?: string; value: Word } | null {
  if (w?.value === "-") return { value: w };
  const m = w && /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(w.prefix);
  if (!w || !m) return null;
  const cut = (s: string): string => s.slice(m[0].length);
  return { name: m[1], value: { ...w, value: w.value === null ? null : cut(w.value), prefix: cut(w.prefix), template: cut(w.template) } };
}

/** The words xargs reads from stdin and appends: unknown, so `xargs tee` writes files nobody named on the line. */
const STDIN_WORDS: Word = { value: null, prefix: "", template: UNKNOWN, text: "<words xargs reads from stdin>", kind: "stdin" };

function xargs(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, {
    shortArg: "adEILnPs",
    shortOptArg: "eil",
    longArg: ["arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"],
  });
  if (p.firstOperand < args.length) checkArgv([...args.slice(p.firstOperand), STDIN_WORDS], sink);
}

function timeout(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, {
    shortArg: "sk",
    longArg: ["signal", "kill-after"],
    longNames: ["signal", "kill-after", "foreground", "preserve-status", "verbose"],
  });
  wrapped(args, p.firstOperand + 1, sink); // the first operand is the duration
}

function chrt(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, { shortArg: "TPD", longArg: ["sched-runtime", "sched-period", "sched-deadline"] });
  if (p.options.some((o) => ["p", "pid", "m", "max"].includes(o.name))) return;
  const prio = args[p.firstOperand]?.value;
  wrapped(args, p.firstOperand + (prio !== undefined && prio !== null && /^\d+$/.test(prio) ? 1 : 0), sink);
}

function flock(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, { shortArg: "Ewc", longArg: ["timeout", "conflict-exit-code", "command"] });
  const lockIndex = p.firstOperand;
  const inline = p.options.find((o) => o.name === "c" || o.name === "command");
  const after = args[lockIndex + 1]?.value;
  const script = inline ? inline.value : after === "-c" || after === "--command" ? args[lockIndex + 2] : undefined;
  if (script !== undefined) {
    const s = typeof script === "string" ? script : script.value;
    if (s === null) refuse(`the command of ${show("flock -c")} is not a literal string, so it could not be checked`);
    sink.script(s, show("flock -c"));
  } else wrapped(args, lockIndex + 1, sink);
}

function watch(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, { shortArg: "nq", longArg: ["interval"] });
  const rest = args.slice(p.firstOperand);
  if (p.options.some((o) => o.name === "x" || o.name === "exec")) return wrapped(args, p.firstOperand, sink);
  if (rest.length === 0) return;
  // watch joins its arguments and runs them with `sh -c`.
  sink.script(rest.map((w) => needLiteral(w, "the command of watch")).join(" "), show("watch"));
}

/** `sudo -s` and `sudo -i` without a command start a shell that reads its script from stdin. */
function sudo(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, {
    shortArg: "ugCDhpRrtTU",
    longArg: ["user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "command-timeout", "other-user", "chroot"],
  });
  if (p.firstOperand < args.length) return afterAssignments(args.slice(p.firstOperand), sink, "sudo");
  if (p.options.some((o) => ["s", "i", "shell", "login"].includes(o.name))) sink.stdinScript("sudo -s");
}

function su(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, {
    shortArg: "cgGsw",
    longArg: ["command", "session-command", "group", "supp-group", "shell", "whitelist-environment"],
    permute: true,
  });
  if (!p.options.some((o) => o.name === "c" || o.name === "command" || o.name === "session-command")) return sink.stdinScript("su");
  for (const o of p.options) {
    if (o.name !== "c" && o.name !== "command" && o.name !== "session-command") continue;
    const s = optionValue(o);
    if (s === null) refuse(`the command of ${show("su -c")} is not a literal string, so it could not be checked`);
    sink.script(s, show("su -c"));
  }
}

/** `script` runs a command on a pseudo-terminal and records the session in a file (./typescript by default). */
function script(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, {
    permute: true,
    shortArg: "cEIOBTmo",
    shortOptArg: "t",
    longArg: ["command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"],
  });
  for (const o of p.options) {
    if (o.name === "c" || o.name === "command") {
      const s = optionValue(o);
      if (s === null) refuse(`the command of ${show("script -c")} is not a literal string, so it could not be checked`);
      sink.script(s, show("script -c"));
    } else if (["I", "O", "B", "T", "log-in", "log-out", "log-io", "log-timing"].includes(o.name) || (o.name === "t" && o.value)) {
      checkTarget(o.value, `script ${o.name.length === 1 ? "-" : "--"}${o.name}`, sink);
    }
  }
  checkTarget(p.operands[0] ?? "typescript", "script", sink);
}

function find(args: Word[], sink: ArgvSink): void {
  for (let i = 0; i < args.length; i++) {
    const v = args[i].value;
    if (v === "-exec" || v === "-execdir" || v === "-ok" || v === "-okdir") {
      let end = i + 1;
      while (end < args.length && args[end].value !== ";" && args[end].value !== "+") end++;
      checkArgv(args.slice(i + 1, end), sink);
      i = end;
    } else if (v === "-fprint" || v === "-fprint0" || v === "-fprintf" || v === "-fls") {
      checkTarget(args[i + 1], `find ${v}`, sink);
    }
  }
}

function tee(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, { permute: true, longNames: ["append", "ignore-interrupts", "output-error", "help", "version"] });
  for (const f of p.operands) checkTarget(f, "tee", sink);
}

/** perl reads switches up to its script; `-i` takes the rest of its cluster as the backup suffix (`-pie` is `-i` with suffix "e"). */
function perl(args: Word[]): void {
  for (let i = 0; i < args.length; i++) {
    const v = args[i].value;
    if (v === null || v === "--" || !v.startsWith("-") || v === "-") return;
    for (let k = 1; k < v.length; k++) {
      const c = v[k];
      if (c === "i") refuse("`perl -i` edits files in place");
      if ("eE".includes(c)) {
        if (k === v.length - 1) i++; // the code is the next word
        break;
      }
      if ("IMm".includes(c)) {
        if (k === v.length - 1) i++;
        break;
      }
      if ("l0CDdxF:V".includes(c)) break; // the rest of the cluster is this switch's value
    }
  }
}

function dd(args: Word[], sink: ArgvSink): void {
  for (const w of args) {
    if (w.prefix.startsWith("of=")) checkTarget(w.value === null ? w : w.value.slice(3), "dd of=", sink);
    else if (w.value === null && "of=".startsWith(w.prefix)) refuse(`the operand ${show("dd " + w.text)} is not literal and could be of=FILE`);
  }
}

function truncate(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, {
    permute: true,
    shortArg: "rs",
    longArg: ["reference", "size"],
    longNames: ["reference", "size", "no-create", "io-blocks", "help", "version"],
  });
  for (const f of p.operands) checkTarget(f, "truncate", sink);
}

function sort(args: Word[], sink: ArgvSink): void {
  const longArg = [
    "key",
    "field-separator",
    "buffer-size",
    "temporary-directory",
    "output",
    "files0-from",
    "batch-size",
    "compress-program",
    "parallel",
    "random-source",
    "sort",
  ];
  const p = parseArgs(args, {
    permute: true,
    shortArg: "ktSTo",
    longArg,
    longNames: [...longArg, "unique", "reverse", "numeric-sort", "stable", "check", "merge", "zero-terminated"],
  });
  for (const o of p.options) if (o.name === "o" || o.name === "output") checkTarget(o.value, "sort -o", sink);
}

function time(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, {
    shortArg: "of",
    longArg: ["output", "format"],
    longNames: ["output", "format", "append", "portability", "verbose", "quiet", "help"],
  });
  for (const o of p.options) if (o.name === "o" || o.name === "output") checkTarget(o.value, "time -o", sink);
  wrapped(args, p.firstOperand, sink);
}

const RULES: Record<string, Rule> = {
  env,
  timeout,
  chrt,
  flock,
  watch,
  find,
  tee,
  sponge: tee,
  perl,
  dd,
  truncate,
  sort,
  time,
  trap,
  alias,
  su,
  script,
  eval: evalRule,
  source,
  ".": source,
  nice: wrapper({ shortArg: "n", longArg: ["adjustment"] }),
  nohup: wrapper({}),
  setsid: wrapper({}),
  builtin: wrapper({}),
  coproc,
  busybox: wrapper({}),
  exec: wrapper({ shortArg: "a" }),
  command: wrapper({}, (o) => o.includes("v") || o.includes("V")),
  stdbuf: wrapper({ shortArg: "ioe", longArg: ["input", "output", "error"] }),
  ionice: wrapper({ shortArg: "cnpPu", longArg: ["class", "classdata", "pid", "pgid", "uid"] }, (o) =>
    o.some((n) => "pPu".includes(n) || ["pid", "pgid", "uid"].includes(n)),
  ),
  sudo,
  doas: wrapper({ shortArg: "uC" }),
  xargs,
  ...BUILTIN_RULES,
  ...PROGRAM_RULES,
};

/** Reserved words bash never runs as a command name. */
const RESERVED_AS_COMMAND = new Set(["{", "}", "do", "done", "then", "fi", "elif", "else", "esac", "in", "function", "[[", "]]"]);

/** `coproc NAME { …; }`: the name is the coprocess's, not a command. */
function coproc(args: Word[], sink: ArgvSink): void {
  const named = args.length > 1 && (args[1].value === "{" || args[1].value === "(");
  wrapped(args, named ? 1 : 0, sink);
}

/**
 * Checks one simple command given as words (name first). Throws a Refusal at the first write form; hands the scripts a
 * shell would run (`bash -c`, `eval`, …) to the sink for the walk to parse and check.
 */
export function checkArgv(words: readonly Word[], sink: ArgvSink): void {
  const first = words[0];
  if (!first) return;
  if (first.value === null) refuse(`the command name ${show(first.text)} is not a literal word, so what it runs could not be checked`);
  // The grammar reads `time { …; }`, `! { …; }` and `coproc NAME { …; }` as commands named `{` and `}`: what the
  // group runs is then split across words, so the line is refused rather than half checked.
  if (RESERVED_AS_COMMAND.has(first.value))
    refuse(
      `the parser read ${show(first.value)} as a command (a group after \`time\`, \`!\` or \`coproc\`), so the line could not be checked; use ( … ) there`,
    );
  const name = programName(first.value);
  const args = words.slice(1);
  if (first.value.includes("/")) sink.reads(first.value, show(first.value));
  if (SHELLS.has(name)) return shell(args, sink, name);
  // A path is a program: `/usr/local` is not the builtin `local`. (hasOwn: a command named `__proto__` is no rule.)
  if (!Object.hasOwn(RULES, name) || (first.value.includes("/") && Object.hasOwn(BUILTIN_RULES, name))) return;
  RULES[name](args, sink, name);
}
