import { scanAwk } from "./shell-awk.js";
import { type Option, optionValue, parseArgs } from "./shell-getopt.js";
import { scanSed } from "./shell-sed.js";
import { type ArgvSink, type Rule, checkTarget, refuse } from "./shell-sink.js";
import { type Word, STDIN_PATHS, UNKNOWN, descriptorOfPath, literalWord, show } from "./shell-words.js";

/**
 * Programs that write files or run commands from text on the line (a sed or awk script, git configuration, a makefile
 * or make variable) or copy what the shell feeds them into a file. Their scripts are read here; what cannot be read is
 * refused.
 */

/** The template of an option's value: what the script is, with UNKNOWN where a shell variable goes. */
function templateOf(o: Option): string {
  return typeof o.value === "string" ? o.value : (o.value?.template ?? "");
}

function sed(args: Word[], sink: ArgvSink): void {
  const longNames = [
    "in-place",
    "expression",
    "file",
    "line-length",
    "quiet",
    "silent",
    "debug",
    "posix",
    "regexp-extended",
    "separate",
    "sandbox",
    "unbuffered",
    "null-data",
    "zero-terminated",
    "follow-symlinks",
    "binary",
    "help",
    "version",
  ];
  const p = parseArgs(args, { permute: true, shortArg: "efl", shortOptArg: "i", longArg: ["expression", "file", "line-length"], longNames });
  const names = new Set(p.options.map((o) => o.name));
  if (names.has("i") || names.has("in-place")) refuse("`sed -i` edits files in place");
  if (names.has("f") || names.has("file")) refuse("`sed -f` reads its script from a file, which could not be checked (give the script with -e)");
  if (names.has("sandbox")) return; // sed itself then rejects e, r and w
  const expressions = p.options.filter((o) => o.name === "e" || o.name === "expression").map(templateOf);
  const script = expressions.length ? expressions.join("\n") : p.operands[0]?.template;
  if (script === undefined) return;
  const shown = show(script.replaceAll(UNKNOWN, "$…"));
  const scan = scanSed(script);
  if (!scan.ok) refuse(`the sed script ${shown} could not be checked (${scan.error})`);
  for (const e of scan.effects) {
    if (e.kind === "run pattern space") refuse(`${show(`sed ${e.form}`)} runs the pattern space as a command, which could not be checked`);
    const text = e.kind === "write" ? e.file : e.command;
    if (text.includes(UNKNOWN)) refuse(`the sed script ${shown} writes a file or runs a command named by a variable, so it could not be checked`);
    if (e.kind === "write") checkTarget(text, `sed ${e.command}`, sink);
    else sink.script(text, show("sed e"));
  }
}

const AWK_LONG_ARG = ["field-separator", "assign", "file", "source", "include", "load", "exec"];
const AWK_LONG_NAMES = [
  ...AWK_LONG_ARG,
  "dump-variables",
  "profile",
  "pretty-print",
  "debug",
  "sandbox",
  "characters-as-bytes",
  "traditional",
  "copyright",
  "gen-pot",
  "help",
  "lint",
  "bignum",
  "use-lc-numeric",
  "non-decimal-data",
  "optimize",
  "no-optimize",
  "posix",
  "re-interval",
  "version",
];
/** mawk's `-W` options that neither write nor read code (`-W exec FILE` is `-f`; gawk takes any long option here). */
const HARMLESS_W = /^(v|version|usage|help|posix|traditional|compat|lint(=\w+)?|dump|interactive|sandbox|sprintf=\d+|posix_space|random=\d+)$/;

/** awk, gawk, mawk: the program text is read for output redirections, pipes and system(). */
function awk(args: Word[], sink: ArgvSink, name: string): void {
  const p = parseArgs(args, { shortArg: "FvfeilEW", shortOptArg: "dpoD", longArg: AWK_LONG_ARG, longNames: AWK_LONG_NAMES });
  const programs: string[] = [];
  for (const o of p.options) {
    const flag = show(`${name} -${o.name.length === 1 ? o.name : "-" + o.name}`);
    switch (o.name) {
      // biome-ignore-start lint/suspicious/noFallthroughSwitchClause: refuse() throws (it returns never), so these cases end there
      case "f":
      case "file":
      case "E":
      case "exec":
        refuse(`${show(`${name} -f`)} reads its program from a file, which could not be checked (give the program as an argument)`);
      case "i":
      case "include":
      case "l":
      case "load":
        refuse(`${flag} loads awk code or an extension (\`-i inplace\` edits files in place), which could not be checked`);
      case "D":
      case "debug":
        refuse(`${flag} runs awk's debugger, which reads commands from stdin, so it could not be checked`);
      // biome-ignore-end lint/suspicious/noFallthroughSwitchClause: the cases that refuse end here
      case "d":
      case "dump-variables":
        checkTarget(optionValue(o) || "awkvars.out", `${name} -d`, sink);
        break;
      case "p":
      case "profile":
      case "o":
      case "pretty-print":
        checkTarget(optionValue(o) || "awkprof.out", `${name} -${o.name[0]}`, sink);
        break;
      case "W": {
        const w = optionValue(o);
        if (w === null || !HARMLESS_W.test(w)) refuse(`${show(`${name} -W ${w ?? "…"}`)} could not be checked`);
        break;
      }
      case "e":
      case "source":
        programs.push(templateOf(o));
        break;
      case "S":
      case "sandbox":
        if (name === "gawk") return; // gawk then refuses redirections, pipes and system(); another awk may not know it
        break;
    }
  }
  if (!programs.length && p.operands[0]) programs.push(p.operands[0].template);
  for (const program of programs) awkProgram(program, sink);
}

function awkProgram(program: string, sink: ArgvSink): void {
  const scan = scanAwk(program);
  if (!scan.ok) refuse(`the awk program ${show(program.replaceAll(UNKNOWN, "$…"))} could not be checked (${scan.error})`);
  for (const e of scan.effects) {
    if (e.kind === "load") refuse(`${show(e.directive)} loads awk code or an extension from a file, which could not be checked`);
    const text = e.kind === "write" ? e.target : e.command;
    const form = e.kind === "write" ? `awk ${e.op}` : `awk ${e.via}`;
    if (text === null)
      refuse(`${show(form)} ${e.kind === "write" ? "writes to a file" : "runs a command"} that is not a literal string, so it could not be checked`);
    if (e.kind === "write") checkTarget(text, form, sink);
    else sink.script(text, show(form));
  }
}

/** An operand that is what the shell feeds the program, not a file: stdin, a descriptor, a device, a pipe. */
function fedByShell(w: Word): boolean {
  if (w.kind === "process_substitution") return true;
  const v = w.value;
  return v !== null && (STDIN_PATHS.has(v) || descriptorOfPath(v) !== null || v.startsWith("/dev/") || v.startsWith("/proc/"));
}

/**
 * cp, mv, install, ln, link: copying a file is fine; copying stdin or a descriptor is writing content from the shell. A
 * link made in the private /tmp (`ln -s $PWD/f /tmp/l`) makes a write there a write to the workspace file.
 */
function copy(args: Word[], sink: ArgvSink, name: string): void {
  const p = parseArgs(args, { permute: true, shortArg: "gmoSt", longArg: ["suffix", "target-directory", "group", "mode", "owner", "strip-program"] });
  const folder = p.options.find((o) => o.name === "t" || o.name === "target-directory");
  const links = name === "ln" || name === "link" || p.options.some((o) => ["s", "l", "link", "symbolic-link"].includes(o.name));
  const destination = folder ? folder.value : p.operands.length > 1 ? p.operands[p.operands.length - 1] : undefined;
  if (links && destination !== undefined) {
    const d = typeof destination === "string" ? destination : destination.value;
    sink.reads(d, show(`${name} … ${typeof destination === "string" ? destination : destination.text}`));
  }
  if (name === "ln" || name === "link") return;
  for (const w of folder ? p.operands : p.operands.slice(0, -1)) {
    if (fedByShell(w)) refuse(`${show(`${name} ${w.text}`)} copies what the shell feeds it (stdin, a descriptor or a device) into a file`);
    if (w.value !== null) sink.reads(w.value, show(`${name} ${w.value}`));
  }
}

/** `patch`, `git apply`, `git am`: a patch from a file is fine; one the line or the call feeds on stdin is content from the shell. */
function patchInput(files: Word[], readsStdin: boolean, form: string, sink: ArgvSink): void {
  for (const w of files) {
    if (w.value !== null) sink.reads(w.value, show(`${form} ${w.value}`));
    if (fedByShell(w) && !(w.value !== null && STDIN_PATHS.has(w.value)))
      refuse(`${show(`${form} ${w.text}`)} applies a patch the shell feeds it, which is writing file content from the shell`);
  }
  if (readsStdin || files.some((w) => w.value !== null && STDIN_PATHS.has(w.value))) fromStdin(form, "applies a patch", sink);
}

/** A program that turns its stdin into files: refused when the line or the call gives it, checked like a file otherwise. */
function fromStdin(form: string, does: string, sink: ArgvSink): void {
  const source = sink.stdin();
  if (source.kind === "line")
    refuse(`${show(form)} ${does} from stdin that the line or the call gives it, which is writing file content from the shell (give it a file)`);
  if (source.kind === "file" && source.path !== undefined) sink.reads(source.path, show(`${form} < ${source.path}`));
}

/** rsync: like cp, and `-e CMD` runs CMD (the remote shell) with arguments. */
function rsync(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, { permute: true, shortArg: "eBfMT", longArg: ["rsh", "filter", "exclude", "include", "temp-dir", "backup-dir", "suffix"] });
  for (const o of p.options) {
    if (o.name !== "e" && o.name !== "rsh") continue;
    const cmd = typeof o.value === "string" ? o.value : (o.value?.value ?? null);
    if (cmd === null) refuse("the command of `rsync -e` is not literal, so it could not be checked");
    sink.script(`${cmd} "$@"`, `the value of ${show("rsync -e")}`);
  }
  for (const w of p.operands.slice(0, -1)) {
    if (fedByShell(w)) refuse(`${show(`rsync ${w.text}`)} copies what the shell feeds it (stdin, a descriptor or a device) into a file`);
    if (w.value !== null) sink.reads(w.value, show(`rsync ${w.value}`));
  }
}

/** tar and cpio extracting, unzip: an archive from a file is fine; one the line or the call feeds on stdin is not. */
function archive(file: Word | string | undefined, form: string, sink: ArgvSink): void {
  const w = typeof file === "string" ? literalWord(file) : file;
  if (w === undefined || (w.value !== null && STDIN_PATHS.has(w.value))) return fromStdin(form, "extracts an archive", sink);
  if (fedByShell(w)) refuse(`${show(`${form} ${w.text}`)} extracts an archive the shell feeds it, which is writing file content from the shell`);
  sink.reads(w.value, show(`${form} ${w.text}`));
}

function tar(args: Word[], sink: ArgvSink): void {
  // Old style (`tar xzf a.tgz`): the first word is a cluster of letters without a dash, `f` taking the next word.
  const old = args[0]?.value;
  const words = old && /^[A-Za-z]+$/.test(old) ? [literalWord("-" + old), ...args.slice(1)] : args;
  const p = parseArgs(words, { permute: true, shortArg: "fCbTXgKNVL", longArg: ["file", "directory", "files-from", "exclude-from"] });
  if (!p.options.some((o) => ["x", "extract", "get"].includes(o.name))) return;
  archive(p.options.find((o) => o.name === "f" || o.name === "file")?.value, "tar -x", sink);
}

function unzip(args: Word[], sink: ArgvSink): void {
  archive(parseArgs(args, { permute: true, shortArg: "dP" }).operands[0], "unzip", sink);
}

function cpio(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, { permute: true, shortArg: "FIEHMOR", longArg: ["file", "pattern-file", "format", "message", "owner"] });
  if (!p.options.some((o) => o.name === "i" || o.name === "extract")) return;
  archive(p.options.find((o) => o.name === "F" || o.name === "I" || o.name === "file")?.value, "cpio -i", sink);
}

function patch(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, {
    permute: true,
    shortArg: "BDFgioprVYzd",
    longArg: [
      "input",
      "output",
      "directory",
      "strip",
      "reject-file",
      "prefix",
      "basename-prefix",
      "suffix",
      "fuzz",
      "define",
      "version-control",
      "get",
      "quoting-style",
    ],
  });
  const input = p.options
    .filter((o) => o.name === "i" || o.name === "input")
    .map((o) => (typeof o.value === "string" ? literalWord(o.value) : o.value))
    .filter((w): w is Word => !!w);
  const files = input.length ? input : p.operands.slice(1, 2);
  patchInput(files, files.length === 0, "patch", sink);
}

/** Config keys git runs as shell commands (with arguments appended), as `section.variable` or `section.*.variable`. */
const GIT_COMMAND_KEYS = new Set([
  "core.pager",
  "pager.*",
  "core.editor",
  "sequence.editor",
  "core.sshcommand",
  "core.askpass",
  "core.fsmonitor",
  "core.gitproxy",
  "core.alternaterefscommand",
  "diff.external",
  "diff.*.textconv",
  "diff.*.command",
  "merge.*.driver",
  "filter.*.clean",
  "filter.*.smudge",
  "filter.*.process",
  "gpg.program",
  "gpg.*.program",
  "remote.*.uploadpack",
  "remote.*.receivepack",
  "browser.*.cmd",
  "browser.*.path",
  "man.*.cmd",
  "man.*.path",
  "difftool.*.cmd",
  "difftool.*.path",
  "mergetool.*.cmd",
  "mergetool.*.path",
  "interactive.difffilter",
  "trailer.*.command",
  "trailer.*.cmd",
  "submodule.*.update",
  "alias.*",
  "gpg.*.defaultkeycommand",
]);
/** Keys that make git run what no value shows: hooks from a folder, more configuration, transports that run commands. */
const GIT_REFUSED_KEYS: Record<string, string> = {
  "core.hookspath": "runs the hooks in a folder",
  "include.path": "reads more configuration from a file",
  "includeif.*.path": "reads more configuration from a file",
  "credential.helper": "runs a credential helper",
  "credential.*.helper": "runs a credential helper",
  "protocol.allow": "allows transports that run commands (ext::)",
  "protocol.*.allow": "allows transports that run commands (ext::)",
  "uploadpack.packobjectshook": "runs a command",
  "init.templatedir": "copies hooks from a folder into the repositories it makes",
  "sendemail.*": "runs mail programs",
  "instaweb.*": "runs a web server and a browser",
};

/** `core.pager` → `core.pager`; `diff.x.textconv` → `diff.*.textconv`; `pager.log` → `pager.*` (case as git folds it). */
function keyPattern(key: string): string[] {
  const parts = key.split(".");
  const section = parts[0].toLowerCase();
  const variable = parts[parts.length - 1].toLowerCase();
  return parts.length > 2 ? [`${section}.*.${variable}`, `${section}.*`] : [`${section}.${variable}`, `${section}.*`];
}

/** One configuration value git is given (`-c KEY=VALUE`, `git config KEY VALUE`); `value` null: not known, `unknown` says why. */
function gitConfigKey(key: string, value: string | null, form: string, sink: ArgvSink, unknown = "is not given a literal value"): void {
  const patterns = keyPattern(key);
  const shown = show(`${form} ${key}`);
  const refused = patterns.map((k) => GIT_REFUSED_KEYS[k]).find(Boolean);
  if (refused && !(patterns[0].startsWith("protocol.") && value === "never")) refuse(`${shown} ${refused}, which could not be checked`);
  if (!patterns.some((k) => GIT_COMMAND_KEYS.has(k))) return;
  if (value === null) refuse(`${shown} ${unknown}, and git runs it as a command, so it could not be checked`);
  const where = `the value of ${shown}`;
  if (patterns[0].startsWith("alias.")) {
    // `!cmd` runs the shell with the alias's arguments; anything else is git's own arguments.
    if (value.startsWith("!")) sink.script(`${value.slice(1)} "$@"`, where);
    else sink.argv(["git", ...value.split(/\s+/).filter(Boolean)].map(literalWord));
  } else if (patterns[0] === "core.fsmonitor" && /^(true|false|yes|no|on|off|1|0)?$/i.test(value)) return;
  else if (patterns[0] === "submodule.*.update" && !value.startsWith("!")) return;
  else sink.script(`${value.replace(/^!/, "")} "$@"`, where);
}

function git(args: Word[], sink: ArgvSink): void {
  let i = 0;
  for (; i < args.length; i++) {
    const v = args[i].value;
    if (v === null || !v.startsWith("-")) break;
    if (v === "-c" || v === "--config-env" || v.startsWith("--config-env=")) {
      const w = v.startsWith("--config-env=") ? literalWord(v.slice("--config-env=".length)) : args[++i];
      if (!w) return;
      if (w.value === null) refuse(`${show(`${v} ${w.text}`)} is not literal, so which configuration git runs with could not be checked`);
      const eq = w.value.indexOf("=");
      const key = eq < 0 ? w.value : w.value.slice(0, eq);
      if (v === "-c") gitConfigKey(key, eq < 0 ? "true" : w.value.slice(eq + 1), "git -c", sink);
      else gitConfigKey(key, null, "git --config-env", sink, "takes its value from the environment");
    } else if (v.startsWith("--exec-path=")) sink.reads(v.slice("--exec-path=".length), show(v));
    else if (["-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds"].includes(v)) i++;
  }
  const sub = args[i]?.value;
  if (sub === "config") gitConfig(args.slice(i + 1), sink);
  if (sub === "apply" || sub === "am") {
    const p = parseArgs(args.slice(i + 1), { permute: true, shortArg: "pC" });
    patchInput(p.operands, p.operands.length === 0, `git ${sub}`, sink);
  }
}

/** `git config` that sets a value (not `--get`, `--list`, …): the key is checked, and `--file F` is a file it writes. */
function gitConfig(args: Word[], sink: ArgvSink): void {
  const p = parseArgs(args, { permute: true, shortArg: "f", longArg: ["file", "blob", "type", "default", "comment", "value"] });
  const reads = p.options.some((o) =>
    /^(get|get-all|get-regexp|get-urlmatch|get-color|get-colorbool|l|list|e|edit|show-origin|show-scope|name-only|unset|unset-all|remove-section|rename-section|blob)$/.test(
      o.name,
    ),
  );
  const words = p.operands.map((w) => w.value);
  const sub = words[0] === "set" ? 1 : words[0] !== null && /^(get|list|unset|rename-section|remove-section|edit)$/.test(words[0] ?? "") ? -1 : 0;
  if (reads || sub < 0 || words.length < sub + 2) return;
  for (const o of p.options) if (o.name === "f" || o.name === "file") checkTarget(o.value, "git config --file", sink);
  const key = words[sub];
  if (key === null) refuse(`the key ${show(p.operands[sub].text)} of \`git config\` is not literal, so it could not be checked`);
  gitConfigKey(key, words[sub + 1], "git config", sink);
}

/** Make functions that run commands, write files or evaluate makefile text when a variable is expanded. */
const MAKE_CODE = /\$[({](shell|file|eval|guile)\b/;

/** make: a makefile in the workspace runs like any script; one from stdin, `--eval` text or a variable's value is checked. */
function make(args: Word[], sink: ArgvSink): void {
  const longArg = ["directory", "file", "makefile", "include-dir", "old-file", "assume-old", "what-if", "new-file", "assume-new", "eval"];
  const p = parseArgs(args, { permute: true, shortArg: "CfIoWE", shortOptArg: "jl", longArg, longNames: [...longArg, "jobs", "load-average"] });
  for (const o of p.options) {
    if (o.name === "E" || o.name === "eval") refuse("`make --eval` evaluates makefile text, which could not be checked");
    if (o.name !== "f" && o.name !== "file" && o.name !== "makefile") continue;
    const w = typeof o.value === "string" ? literalWord(o.value) : o.value;
    if (!w) continue;
    if (w.value !== null) sink.reads(w.value, show(`make -f ${w.value}`));
    if (w.value === null && w.kind !== "process_substitution")
      refuse(`the makefile ${show(w.text)} of \`make -f\` is not a literal word, so it could not be checked`);
    if (fedByShell(w)) refuse(`${show(`make -f ${w.text}`)} reads a makefile from stdin, a pipe or a descriptor, which could not be checked`);
  }
  for (const w of p.operands) {
    const m = w.value === null ? null : /^([^\s=:+?!]+)\s*(::?:?|\+|\?|!)?=([\s\S]*)$/.exec(w.value);
    if (!m) continue;
    const [, variable, op, value] = m;
    if (op === "!") sink.script(value, `the value of ${show(`make ${variable}!=`)}`);
    else if (MAKE_CODE.test(value)) refuse(`${show(`make ${variable}=`)} calls a make function that runs commands or writes files, which could not be checked`);
    // A variable a recipe expands where a command goes (CC, SHELL) runs its value.
    else sink.script(`${value} "$@"`, `the value of ${show(`make ${variable}=`)}`);
  }
}

export const PROGRAM_RULES: Record<string, Rule> = {
  sed,
  awk,
  gawk: awk,
  mawk: awk,
  nawk: awk,
  cp: copy,
  mv: copy,
  install: copy,
  ln: copy,
  link: copy,
  rsync,
  tar,
  bsdtar: tar,
  unzip,
  cpio,
  git,
  make,
  gmake: make,
  patch,
};
