import type { Node, Tree } from "web-tree-sitter";
import { checkArgv } from "./shell-argv.js";
import { Descriptors } from "./shell-descriptors.js";
import { type ArgvSink, Refusal, type StdinSource, refuse } from "./shell-sink.js";
import { arithmetic, assignmentNode, expansion, testCommand } from "./shell-nodes.js";
import { assignment } from "./shell-vars.js";
import { type Word, backtickScripts, descriptorOfPath, inPrivateTmp, isHarmlessTarget, literalWord, show, wordOf } from "./shell-words.js";

/** What SPEC 11 decides about a command line before anything runs. */
export type Verdict =
  | { ok: true /** The simple commands found, nested ones included, in the order they appear: for the preview. */; commands: string[] }
  | { ok: false /** Which write form was found and where, or why the line could not be checked. */; reason: string };

export interface CheckOptions {
  /** The workspace root: a workspace under /tmp is not the sandbox's private /tmp. */
  root?: string;
  /** The call's `stdin`: a shell at the top of the line (`bash -s`) runs it as its script, so it is checked too. */
  stdin?: string;
  /** The call's `env`: a pager or editor set there runs as a command, like one assigned on the line. */
  env?: Record<string, string>;
}

export type ParseFn = (source: string) => Tree | null;

/** Where a command's stdin comes from, to know what a shell reading its script from stdin would run. */
type Stdin =
  | { kind: "call" }
  | { kind: "pipe" }
  | { kind: "file" /** The file a redirection names, when literal. */; path?: string }
  | { kind: "text"; text: string | null; what: string };

/** Real commands nest `bash -c` in `eval` in `bash -c` two or three deep; a bound keeps a crafted line cheap to check. */
const MAX_SCRIPT_NESTING = 8;
/** Syntax nesting far beyond any real command line; the walk is recursive, so this also bounds its stack. */
const MAX_TREE_DEPTH = 500;

interface Walk {
  parse: ParseFn;
  opts: CheckOptions;
  commands: string[];
  nesting: number;
  fds: Descriptors;
  /** `alias NAME=…` anywhere on the line, by name. */
  aliases: Map<string, string>;
  /** The literal names of the simple commands, to find an alias used anywhere on the line. */
  names: { name: string; display: string }[];
  /** Shell writes into the private /tmp, and files there a program runs or copies: the two together launder a write. */
  tmp: { writes: string[]; reads: string[] };
  /** A `cd` that may go into the private /tmp: then a relative path may be a file there. */
  cdTmp: boolean;
}

/** Checks a command line: a pure function of the line, the parser and the options. */
export function verdictOf(line: string, parse: ParseFn, opts: CheckOptions = {}): Verdict {
  const walk: Walk = {
    parse,
    opts,
    commands: [],
    nesting: 0,
    fds: new Descriptors(),
    aliases: new Map(),
    names: [],
    tmp: { writes: [], reads: [] },
    cdTmp: false,
  };
  try {
    const top = sinkOf(walk, { kind: "call" });
    for (const [name, value] of Object.entries(opts.env ?? {})) assignment(name, literalWord(value), top, "the call's env", "the call's env");
    checkScript(line, walk, { kind: "call" });
    finish(walk);
    return { ok: true, commands: walk.commands };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, reason: e.reason };
    throw e;
  }
}

/**
 * What only the whole line shows: a write through a descriptor opened on a file, an alias used after its definition, a
 * file the shell wrote into the private /tmp and a program then runs or copies.
 */
function finish(walk: Walk): void {
  const write = walk.fds.writeToFile();
  if (write) refuse(write);
  const [read] = walk.tmp.reads;
  const tmpWrite = walk.tmp.writes[0] ?? walk.fds.writeToTmp();
  if (read && tmpWrite)
    refuse(
      `${read} runs or copies a file from the private /tmp, and the line writes files there from the shell (${tmpWrite}), so what it runs or copies could not be checked`,
    );
  for (const { name, display } of walk.names) {
    const definition = walk.aliases.get(name);
    if (definition !== undefined)
      refuse(
        `${show(name)} is an alias the line defines (${show("alias " + definition)}): what it runs with its arguments could not be checked (in ${show(display)})`,
      );
  }
}

/** The rules' view of the walk at one command. */
function sinkOf(walk: Walk, stdin: Stdin): ArgvSink {
  const sink: ArgvSink = {
    script: (source, where) => checkNested(source, where, walk, stdin),
    stdinScript: (via) => stdinScript(via, walk, stdin),
    argv: (words) => checkArgv(words, sink),
    evaluated: (text, what) => evaluated(text, what, walk, stdin),
    harmless: (target, form) => harmless(walk, target, form),
    alias: (name, definition) => void walk.aliases.set(name, definition),
    reads: (target, form) => reads(walk, target, form),
    stdin: () => stdinSource(walk, stdin),
    cd: (target) => void ((target === null || inPrivateTmp(target, walk.opts.root, true)) && (walk.cdTmp = true)),
  };
  return sink;
}

/** A file a program runs or copies (ArgvSink.reads): kept when it may be in the private /tmp. */
function reads(walk: Walk, target: string | null, form: string): void {
  if (target === null || inPrivateTmp(target, walk.opts.root, true) || (walk.cdTmp && !target.startsWith("/"))) walk.tmp.reads.push(form);
}

function stdinSource(walk: Walk, stdin: Stdin): StdinSource {
  if (stdin.kind === "text" || stdin.kind === "pipe" || (stdin.kind === "call" && walk.opts.stdin !== undefined)) return { kind: "line" };
  return stdin.kind === "file" ? { kind: "file", path: stdin.path } : { kind: "none" };
}

/** Delimits text the check reads as a here-document: expanded as bash expands a double-quoted string, any quote allowed. */
const EVALUATED = "TOOL_LAYER_EVALUATED_TEXT";
const EVALUATED_SCRIPT = `: <<${EVALUATED}\n`;

/** Text bash evaluates once more (arithmetic, a subscript, a prompt, a value): the substitutions in it are checked. */
function evaluated(text: string, what: string, walk: Walk, stdin: Stdin): void {
  if (!/[`$]/.test(text)) return;
  if (text.split("\n").includes(EVALUATED)) refuse(`${show(text)} (${what}) could not be checked`);
  checkNested(`${EVALUATED_SCRIPT}${text}\n${EVALUATED}\n`, `${show(text)} (${what}), which bash evaluates`, walk, stdin);
}

/** A write target that changes no workspace file; one through a descriptor is kept for the end of the line. */
function harmless(walk: Walk, target: string, form: string): boolean {
  const fd = descriptorOfPath(target);
  if (fd !== null) walk.fds.wrote(fd, form);
  else if (inPrivateTmp(target, walk.opts.root)) walk.tmp.writes.push(form);
  return fd !== null || isHarmlessTarget(target, walk.opts.root);
}

function checkScript(source: string, walk: Walk, stdin: Stdin): void {
  const tree = walk.parse(source);
  if (!tree) refuse("the parser gave up on the command, so it could not be checked");
  try {
    if (tree.rootNode.hasError) refuse(syntaxReason(tree.rootNode));
    visit(tree.rootNode, walk, stdin, 0);
  } finally {
    tree.delete();
  }
}

/** A script a command runs (`bash -c '…'`, `eval '…'`, a here-document fed to `sh`): parsed and checked like the line. */
function checkNested(source: string, where: string, walk: Walk, stdin: Stdin): void {
  if (walk.nesting >= MAX_SCRIPT_NESTING) refuse(`scripts nested more than ${MAX_SCRIPT_NESTING} deep (${where}) could not be checked`);
  walk.nesting++;
  try {
    checkScript(source, walk, stdin);
  } catch (e) {
    if (e instanceof Refusal) throw new Refusal(`${e.reason}, inside ${where}`);
    throw e;
  } finally {
    walk.nesting--;
  }
}

function firstBroken(node: Node): Node | null {
  if (node.isError || node.isMissing) return node;
  for (const c of node.children) {
    if (c?.hasError) return firstBroken(c);
    if (c?.isMissing) return c;
  }
  return null;
}

function syntaxReason(root: Node): string {
  const bad = firstBroken(root) ?? root;
  const at = `line ${bad.startPosition.row + 1}, column ${bad.startPosition.column + 1}`;
  const prev = bad.previousSibling;
  if (bad.parent?.type === "file_redirect" && prev?.type === "<" && bad.text.startsWith(">")) {
    return `the read-write redirection ${show("<>")} at ${at} opens a file for writing`;
  }
  if (bad.isMissing) return `the command is incomplete (a missing ${show(bad.type)} at ${at}), so it could not be checked`;
  const what = /^["'`]|^\$['"(]/.test(bad.text.trimStart()) ? "an unterminated quote or substitution" : `a syntax error near ${show(bad.text.split("\n")[0])}`;
  return `the command does not parse as bash (${what} at ${at}), so it could not be checked`;
}

function visit(node: Node, walk: Walk, stdin: Stdin, depth: number): void {
  if (depth > MAX_TREE_DEPTH) refuse(`the command nests more than ${MAX_TREE_DEPTH} levels deep, so it could not be checked`);
  switch (node.type) {
    case "redirected_statement":
      return redirectedStatement(node, walk, stdin, depth);
    case "command":
      return command(node, node.text, [], walk, stdin, depth);
    case "pipeline":
      return pipeline(node, walk, stdin, depth);
    case "file_redirect":
      fileRedirect(node, walk);
      break;
    case "heredoc_redirect":
      return heredocRedirect(node, walk, stdin, depth);
    case "test_command":
      testCommand(node, sinkOf(walk, stdin));
      break;
    case "variable_assignment":
      assignmentNode(node, sinkOf(walk, stdin));
      break;
    case "declaration_command":
    case "unset_command":
      // `declare …`, `unset …`: the grammar's own nodes, checked as the builtins they are.
      inCommand(node.text, () => checkArgv([literalWord(node.firstChild?.text ?? ""), ...namedWords(node)], sinkOf(walk, stdin)));
      break;
    case "expansion":
      expansion(node, sinkOf(walk, stdin));
      break;
    case "compound_statement":
      if (node.firstChild?.type === "((") arithmetic(node, sinkOf(walk, stdin));
      break;
    case "arithmetic_expansion":
    case "c_style_for_statement":
      arithmetic(node, sinkOf(walk, stdin));
      break;
    case "subscript": {
      const index = node.childForFieldName("index");
      if (index) arithmetic(index, sinkOf(walk, stdin));
      break;
    }
    case "for_statement": {
      const variable = node.childForFieldName("variable");
      if (variable) assignment(variable.text, undefined, sinkOf(walk, stdin), show(`for ${variable.text} in`));
      break;
    }
    case "process_substitution":
      // `>( cmd )` reads what the outer command writes into it.
      if (node.text.startsWith(">(")) return visitChildren(node, walk, { kind: "pipe" }, depth);
      break;
    case "heredoc_body":
      if (!isQuotedHeredoc(node.parent)) unparsedBackticks(node.text, walk, stdin);
      break;
    case "word":
    case "regex":
      if (node.text.includes("`")) unparsedBackticks(node.text, walk, stdin);
      return;
    case "comment":
      return;
  }
  visitChildren(node, walk, stdin, depth);
}

/** tree-sitter-bash leaves backticks unparsed in here-document bodies and inside `${…}`; bash runs them. */
function unparsedBackticks(text: string, walk: Walk, stdin: Stdin): void {
  const scripts = backtickScripts(text);
  if (scripts === null) refuse(`an unclosed backtick in ${show(text.split("\n")[0])} could not be checked`);
  for (const s of scripts) checkNested(s, "a backtick substitution", walk, stdin);
}

function isQuotedHeredoc(redirect: Node | null): boolean {
  const start = redirect?.children.find((c) => c?.type === "heredoc_start")?.text ?? "";
  return /['"\\]/.test(start);
}

function visitChildren(node: Node, walk: Walk, stdin: Stdin, depth: number, skip?: Set<number>): void {
  for (const c of node.namedChildren) if (c && !skip?.has(c.id)) visit(c, walk, stdin, depth + 1);
}

function pipeline(node: Node, walk: Walk, stdin: Stdin, depth: number): void {
  let first = true;
  for (const c of node.namedChildren) {
    if (!c || c.type === "comment") continue;
    visit(c, walk, first ? stdin : { kind: "pipe" }, depth + 1);
    first = false;
  }
}

const REDIRECT_OPERATORS = new Set(["<", ">", ">>", "&>", "&>>", "<&", ">&", ">|", "<&-", ">&-"]);

function operatorOf(redirect: Node): string {
  for (const c of redirect.children) if (c && !c.isNamed && REDIRECT_OPERATORS.has(c.type)) return c.type;
  return "";
}

function isStdin(redirect: Node): boolean {
  const fd = redirect.childForFieldName("descriptor")?.text;
  return fd === undefined || fd === "0";
}

/** The literal text of a here-document: a quoted delimiter keeps it verbatim, an unquoted one expands it. */
function heredocText(redirect: Node): string | null {
  const body = redirect.children.find((c) => c?.type === "heredoc_body");
  if (!body) return "";
  if (isQuotedHeredoc(redirect)) return body.text;
  if (body.namedChildren.some((c) => c && c.type !== "heredoc_content") || backtickScripts(body.text)?.length !== 0) return null;
  return body.text.replace(/\\([\\$`\n])/g, (_m, c: string) => (c === "\n" ? "" : c));
}

/** The stdin a command sees after its redirections, applied left to right as bash does. */
function stdinAfter(redirects: Node[], stdin: Stdin): Stdin {
  let s = stdin;
  for (const r of redirects) {
    if (!isStdin(r)) continue;
    if (r.type === "heredoc_redirect") s = { kind: "text", text: heredocText(r), what: "a here-document" };
    else if (r.type === "herestring_redirect") {
      const lit = r.namedChildren.find((c) => c && c.type !== "file_descriptor");
      const w = lit ? wordOf(lit) : null;
      s = { kind: "text", text: w?.value == null ? null : w.value + "\n", what: "a here-string" };
    } else if (r.type === "file_redirect" && operatorOf(r).startsWith("<")) {
      const target = r.childForFieldName("destination");
      s = { kind: "file", path: (target && operatorOf(r) === "<" && wordOf(target).value) || undefined };
    }
  }
  return s;
}

function redirectedStatement(node: Node, walk: Walk, stdin: Stdin, depth: number): void {
  const body = node.childForFieldName("body");
  const redirects = node.namedChildren.filter((c): c is Node => !!c && c.id !== body?.id && c.type !== "comment");
  // The grammar reads `sed >/dev/null -i s/a/b/ f` as one redirect with four destinations: all but the first are the
  // command's arguments, so they are given back to it.
  const extra: Node[] = [];
  for (const r of redirects) {
    const fileRedirects = r.type === "heredoc_redirect" ? r.namedChildren.filter((c): c is Node => c?.type === "file_redirect") : [r];
    for (const f of fileRedirects) extra.push(...f.childrenForFieldName("destination").slice(1));
  }
  const inner = stdinAfter(redirects, stdin);
  if (body?.type === "command") command(body, node.text, extra, walk, inner, depth + 1, stdin);
  else if (extra.length)
    refuse(`the words ${show(extra.map((e) => e.text).join(" "))} after a redirection are not part of any command, so the line could not be checked`);
  else if (body) visit(body, walk, inner, depth + 1);
  for (const r of redirects) visit(r, walk, stdin, depth + 1);
}

/** The descriptors a redirection sets when it names none: `<` stdin, `>` stdout, `&>` both. */
const DEFAULT_DESCRIPTORS: Record<string, number[]> = { "<": [0], "<&": [0], ">": [1], ">>": [1], ">|": [1], ">&": [1], "&>": [1, 2], "&>>": [1, 2] };

function fileRedirect(node: Node, walk: Walk): void {
  const op = operatorOf(node);
  const target = node.childForFieldName("destination");
  if (!target) return;
  const w = wordOf(target);
  const fd = node.childForFieldName("descriptor")?.text ?? "";
  const shown = show(`${fd}${op} ${target.text}`);
  const fds = namedDescriptor(node) ? [Descriptors.NAMED] : fd ? [Number(fd)] : (DEFAULT_DESCRIPTORS[op] ?? []);
  trackDescriptors(walk, op, w, fds, shown);
  if (op === "<" || op === "<&" || op === "<&-" || op === ">&-") return;
  if (op === ">&" && w.value !== null && /^(\d+-?|-)$/.test(w.value)) return; // 2>&1, >&2, 1>&2-: descriptors, not files
  if (target.type === "process_substitution") return; // `> >(cmd)` writes into a pipe; cmd is checked where it stands
  if (w.value === null) refuse(`the redirection ${shown} writes to a path that is not literal, so it could not be checked`);
  if (!harmless(walk, w.value, shown)) refuse(`the output redirection ${shown} writes the file ${w.value}`);
}

/** `exec {fd}<f`: the grammar reads `{fd}` as the word just before the redirection. */
function namedDescriptor(redirect: Node): boolean {
  let prev = redirect.previousSibling;
  while (prev?.type === "command" && prev.lastChild) prev = prev.lastChild;
  return !!prev && prev.endIndex === redirect.startIndex && /^\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(prev.text);
}

/** What a redirection makes its descriptors point to: a file it opens to read, or another descriptor. */
function trackDescriptors(walk: Walk, op: string, w: Word, fds: number[], shown: string): void {
  if (w.kind === "process_substitution" || op.endsWith("-")) return;
  const v = w.value;
  const from = v === null ? null : op.endsWith("&") && /^\d+-?$/.test(v) ? parseInt(v, 10) : descriptorOfPath(v);
  if (from !== null) for (const fd of fds) walk.fds.copied(fd, from);
  else if (op !== "<" && op !== "<&") return;
  else if (v !== null && inPrivateTmp(v, walk.opts.root)) for (const fd of fds) walk.fds.opened(fd, shown, "tmp");
  else if (v === null || !isHarmlessTarget(v, walk.opts.root)) for (const fd of fds) walk.fds.opened(fd, shown, "file");
}

function heredocRedirect(node: Node, walk: Walk, stdin: Stdin, depth: number): void {
  for (const c of node.namedChildren) {
    if (!c) continue;
    // `cat <<EOF | sh`: the grammar puts the rest of the pipeline inside the here-document's redirect.
    if (c.type === "pipeline") for (const s of c.namedChildren) s && visit(s, walk, { kind: "pipe" }, depth + 1);
    else visit(c, walk, stdin, depth + 1);
  }
}

function namedWords(node: Node): Word[] {
  return node.namedChildren.filter((c): c is Node => !!c && c.type !== "comment").map(wordOf);
}

/** A refusal in a command's rules names the command it was found in. */
function inCommand(display: string, check: () => void): void {
  try {
    check();
  } catch (e) {
    if (e instanceof Refusal && !e.reason.includes(", inside ")) throw new Refusal(`${e.reason} (in ${show(display.trim())})`);
    throw e;
  }
}

function command(node: Node, display: string, extra: Node[], walk: Walk, stdin: Stdin, depth: number, outer: Stdin = stdin): void {
  const redirects = node.childrenForFieldName("redirect");
  const inner = stdinAfter(redirects, stdin);
  const name = node.childForFieldName("name");
  if (name) {
    const words: Word[] = [name, ...node.childrenForFieldName("argument"), ...extra].sort((a, b) => a.startIndex - b.startIndex).map(wordOf);
    if (!display.startsWith(EVALUATED_SCRIPT)) walk.commands.push(display.trim());
    if (words[0].value !== null) walk.names.push({ name: words[0].value, display: display.trim() });
    // `exec <<EOF` makes the text the shell's own stdin, which a later `bash` would read as its script.
    if (words.length === 1 && words[0].value === "exec" && inner.kind === "text" && inner !== outer) {
      refuse(`${show("exec")} with ${inner.what} makes it the shell's stdin for the commands after it, which could not be checked`);
    }
    inCommand(display, () => checkArgv(words, sinkOf(walk, inner)));
  }
  // Substitutions in the words run in the shell itself, before the command's own redirections apply.
  visitChildren(node, walk, outer, depth, new Set(redirects.map((r) => r.id)));
  for (const r of redirects) visit(r, walk, outer, depth + 1);
}

/** A shell that reads its script from stdin: checked when stdin is known text, refused when it is a pipe. */
function stdinScript(via: string, walk: Walk, stdin: Stdin): void {
  switch (stdin.kind) {
    case "file":
      // `sh < script.sh`: a script file, run like any program
      if (stdin.path !== undefined) reads(walk, stdin.path, show(`${via} < ${stdin.path}`));
      return;
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: refuse() throws (it returns never)
    case "pipe":
      refuse(`${show(via)} reads its script from a pipe, which cannot be checked (pass it as ${show(via + " -c '…'")} or write a script with file_write)`);
    case "call":
      if (walk.opts.stdin !== undefined) checkNested(walk.opts.stdin, `the call's stdin, which ${show(via)} runs`, walk, { kind: "file" });
      return;
    case "text":
      if (stdin.text === null) refuse(`${show(via)} runs ${stdin.what} that expands variables or commands, so what it runs could not be checked`);
      checkNested(stdin.text, `${stdin.what} that ${show(via)} runs`, walk, { kind: "file" });
  }
}
