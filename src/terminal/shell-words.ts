import path from "node:path";
import type { Node } from "web-tree-sitter";

/** One shell word as the rules see it: its value after quote removal when that is known without running anything. */
export interface Word {
  /** The value after quote removal, or null when it depends on an expansion (`$x`, `$(…)`, `{a,b}`, …). */
  value: string | null;
  /** The literal text before the first expansion: enough to tell that `"s/$a/b/"` is not an option. */
  prefix: string;
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

const ANSI_C_ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?" };

/** `$'…'`: the C escapes bash decodes there (octal, hex and \u too), enough to read a command name or a path. */
function decodeAnsiC(s: string): string {
  return s.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|[\s\S])/g, (m, e: string) => {
    if (e[0] === "x" || e[0] === "u" || e[0] === "U") return e.length > 1 ? String.fromCodePoint(parseInt(e.slice(1), 16)) : m;
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8));
    return ANSI_C_ESCAPES[e] ?? m;
  });
}

interface Literal {
  value: string | null;
  prefix: string;
}

function literal(node: Node): Literal {
  switch (node.type) {
    case "word":
    case "number":
    case "file_descriptor":
    case "variable_name":
    case "extglob_pattern": {
      const v = unescapeBare(node.text);
      return { value: v, prefix: v };
    }
    case "raw_string": {
      const v = node.text.slice(1, -1);
      return { value: v, prefix: v };
    }
    case "ansi_c_string": {
      const v = decodeAnsiC(node.text.slice(2, -1));
      return { value: v, prefix: v };
    }
    case "string":
    case "translated_string": {
      let acc = "";
      for (const c of node.namedChildren) {
        if (!c) continue;
        if (c.type === "string_content") acc += unescapeDouble(c.text);
        else if (c.type === "string") {
          const inner = literal(c); // translated_string wraps a string
          if (inner.value === null) return { value: null, prefix: acc + inner.prefix };
          acc += inner.value;
        } else return { value: null, prefix: acc };
      }
      return { value: acc, prefix: acc };
    }
    case "concatenation": {
      let acc = "";
      for (const c of node.children) {
        if (!c) continue;
        const part = literal(c);
        if (part.value === null) return { value: null, prefix: acc + part.prefix };
        acc += part.value;
      }
      return { value: acc, prefix: acc };
    }
    default:
      // A bare `$` the grammar leaves unnamed is literal text; anything else (expansions, substitutions) is not.
      if (!node.isNamed) return { value: node.text, prefix: node.text };
      return { value: null, prefix: "" };
  }
}

export function wordOf(node: Node): Word {
  const target = node.type === "command_name" && node.firstChild ? node.firstChild : node;
  const lit = literal(target);
  return { value: lit.value, prefix: lit.prefix, text: node.text, kind: target.type };
}

/** A word made up by a rule (the split string of `env -S`, the script of `watch`): literal by construction. */
export function literalWord(value: string): Word {
  return { value, prefix: value, text: value, kind: "word" };
}

/** Devices a write to which changes no file's content. */
const HARMLESS_DEVICES = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero", "/dev/full"]);
const FD_PATH = /^\/(dev\/fd|proc\/self\/fd)\/\d+$/;
/** The sandbox's private /tmp: a write there is gone when the command ends, so it is no file the workspace holds. */
const PRIVATE_TMP = "/tmp";

/**
 * A write target that is allowed: a harmless device, a descriptor, or a path in the sandbox's private /tmp (after `..`
 * is resolved, and not inside the workspace when the workspace itself lives under /tmp).
 */
export function isHarmlessTarget(target: string, root?: string): boolean {
  if (HARMLESS_DEVICES.has(target) || FD_PATH.test(target)) return true;
  if (!target.startsWith("/")) return false;
  const norm = path.posix.normalize(target);
  if (!norm.startsWith(PRIVATE_TMP + "/") || norm === PRIVATE_TMP + "/") return false;
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
