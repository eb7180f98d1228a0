import path from "node:path";
import type { Node } from "web-tree-sitter";

/** One shell word as the rules see it: its value after quote removal when that is known without running anything. */
export interface Word {
  /** The value after quote removal, or null when it depends on an expansion (`$x`, `$(…)`, `{a,b}`, …). */
  value: string | null;
  /** The literal text before the first expansion: enough to tell that `"s/$a/b/"` is not an option. */
  prefix: string;
  /** The value with each expansion replaced by UNKNOWN: a sed or awk script whose variables sit only in its patterns. */
  template: string;
  /** The source text, for messages. */
  text: string;
  /** The node type: a `process_substitution` operand is a pipe, not a file. */
  kind: string;
}

/** Decodes the escapes bash keeps inside double quotes: only \\, \", \$, \` and \<newline> lose their backslash. */
function unescapeDouble(s: string): string {
  return s.replace(/\\([\\"$`\n])/g, (_m, c: string) => (c === "\n" ? "" : c));
}

/** Outside quotes a backslash quotes the next character; backslash-newline is a line continuation. */
function unescapeBare(s: string): string {
  return s.replace(/\\([\s\S])/g, (_m, c: string) => (c === "\n" ? "" : c));
}

const ANSI_C_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** `$'…'`: the C escapes bash decodes there (octal, hex and \u too), enough to read a command name or a path. */
function decodeAnsiC(s: string): string {
  return s.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|[\s\S])/g, (m, e: string) => {
    if (e[0] === "x" || e[0] === "u" || e[0] === "U") return e.length > 1 ? String.fromCodePoint(parseInt(e.slice(1), 16)) : m;
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8));
    return ANSI_C_ESCAPES[e] ?? m;
  });
}

/** Stands for what an expansion gives in a word's template: a NUL cannot be in a shell word. */
export const UNKNOWN = "\u0000";

interface Literal {
  value: string | null;
  prefix: string;
  template: string;
}

function known(v: string): Literal {
  return { value: v, prefix: v, template: v };
}

function literal(node: Node): Literal {
  switch (node.type) {
    case "word":
    case "number":
    case "file_descriptor":
    case "variable_name":
    case "extglob_pattern":
      return known(unescapeBare(node.text));
    case "raw_string":
      return known(node.text.slice(1, -1));
    case "ansi_c_string":
      return known(decodeAnsiC(node.text.slice(2, -1)));
    case "string":
    case "translated_string":
      // translated_string wraps a string
      return joined(node.namedChildren, (c) => (c.type === "string_content" ? known(unescapeDouble(c.text)) : literal(c)));
    case "concatenation":
      return joined(node.children, literal);
    case "variable_assignment": {
      // `NAME=VALUE` as a word (`env A=1`, `declare 'A=1'` read back): the name and operator as written, then the value.
      const value = node.childForFieldName("value");
      return joined(node.children, (c) => (c.id === value?.id ? literal(c) : known(c.text)));
    }
    default:
      // A bare `$` the grammar leaves unnamed is literal text; anything else (expansions, substitutions) is not.
      if (!node.isNamed) return known(node.text);
      return { value: null, prefix: "", template: UNKNOWN };
  }
}

/** The parts of a word one after the other: literal while every part is. */
function joined(parts: (Node | null)[], part: (n: Node) => Literal): Literal {
  let value: string | null = "";
  let prefix = "";
  let template = "";
  for (const c of parts) {
    if (!c) continue;
    const p = part(c);
    if (value !== null) prefix += p.prefix;
    value = value === null || p.value === null ? null : value + p.value;
    template += p.template;
  }
  return { value, prefix: value ?? prefix, template };
}

export function wordOf(node: Node): Word {
  const target = node.type === "command_name" && node.firstChild ? node.firstChild : node;
  const lit = literal(target);
  return { ...lit, text: node.text, kind: target.type };
}

/** A word made up by a rule (the split string of `env -S`, the script of `watch`): literal by construction. */
export function literalWord(value: string): Word {
  return { ...known(value), text: value, kind: "word" };
}

/** Devices a write to which changes no file's content. */
const HARMLESS_DEVICES = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero", "/dev/full"]);
const FD_PATH = /^\/(dev\/fd|proc\/self\/fd)\/(\d+)$/;
const STANDARD_DESCRIPTORS: Record<string, number> = { "/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2 };
/** Where a program reading a "file" reads what the shell feeds it (stdin), not a file someone wrote with file_write. */
export const STDIN_PATHS = new Set(["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"]);

/**
 * The descriptor a path names (`/dev/stdout`, `/dev/fd/3`, `/proc/self/fd/3`), or null. Opening one reopens what the
 * descriptor points to: a file, if a redirection opened it on one.
 */
export function descriptorOfPath(target: string): number | null {
  if (target in STANDARD_DESCRIPTORS) return STANDARD_DESCRIPTORS[target];
  const m = FD_PATH.exec(target);
  return m ? Number(m[2]) : null;
}
/** The sandbox's private /tmp: a write there is gone when the command ends, so it is no file the workspace holds. */
const PRIVATE_TMP = "/tmp";

/** A write target that is allowed: a harmless device, a descriptor, or a path in the sandbox's private /tmp. */
export function isHarmlessTarget(target: string, root?: string): boolean {
  return HARMLESS_DEVICES.has(target) || FD_PATH.test(target) || inPrivateTmp(target, root);
}

/**
 * A path in the sandbox's private /tmp (or /tmp itself, with `orFolder`), after `..` is resolved, and not inside a
 * workspace that lives under /tmp.
 */
export function inPrivateTmp(target: string, root?: string, orFolder = false): boolean {
  if (!target.startsWith("/")) return false;
  const norm = path.posix.normalize(target + "/");
  if (!norm.startsWith(PRIVATE_TMP + "/") || (norm === PRIVATE_TMP + "/" && !orFolder)) return false;
  if (root !== undefined) {
    const r = path.posix.normalize(root).replace(/\/+$/, "");
    if (norm === r || norm.startsWith(r + "/")) return false;
  }
  return true;
}

/** The name a program is known by: `/usr/bin/sed` and `sed` are the same rule. */
export function programName(value: string): string {
  return value.includes("/") ? path.posix.basename(value) : value;
}

/** Sets a piece of the command off in a message, shortened so a long line cannot flood it. */
export function show(s: string): string {
  return "`" + (s.length > 80 ? s.slice(0, 77) + "…" : s) + "`";
}

/**
 * The scripts of the backtick substitutions in a text the grammar left unparsed (an unquoted here-document's body, a
 * word inside `${…}`): bash runs them. Null when a backtick is not closed.
 */
export function backtickScripts(text: string): string[] | null {
  const scripts: string[] = [];
  let open = -1;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === "`") {
      if (open < 0) open = i;
      else {
        scripts.push(text.slice(open + 1, i).replace(/\\([\\`$])/g, "$1"));
        open = -1;
      }
    }
  }
  return open < 0 ? scripts : null;
}
