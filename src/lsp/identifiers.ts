import { ToolError } from "../errors.js";
import type { Language } from "./servers.js";

/**
 * What a new name must be in the file's language, checked before a rename asks the server (which writes whatever it is
 * given: a Python rename to `class` or `pop$ctx` would write code that no longer parses). The schema cannot say it: a
 * JSON Schema pattern with Unicode classes does not compile in every host's regex engine.
 */

interface IdentifierRules {
  name: string;
  identifier: RegExp;
  /** What an identifier is, in words, for the error. */
  shape: string;
  reserved: ReadonlySet<string>;
  /** Why a reserved word cannot be a name, for the error. */
  reservedWhy: string;
}

/**
 * ECMAScript's IdentifierName (ID_Start, `$` or `_` first, then ID_Continue, `$`, ZWNJ, ZWJ), less its reserved words:
 * those of every context, and those of strict mode, which modules and classes always are (TypeScript checks them too).
 */
const ECMASCRIPT: IdentifierRules = {
  name: "TypeScript/JavaScript",
  identifier: /^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*$/u,
  shape: "a letter, $ or _ first, then letters, digits, $ or _",
  reserved: new Set([
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "new",
    "null",
    "return",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    // strict mode (modules, classes), and `await` in modules
    "implements",
    "interface",
    "let",
    "package",
    "private",
    "protected",
    "public",
    "static",
    "yield",
    "await",
    "arguments",
    "eval",
  ]),
  reservedWhy: "a reserved word of TypeScript/JavaScript (in strict mode, which modules and classes are)",
};

/**
 * Python's identifiers (XID_Start or `_` first, then XID_Continue; no `$`), less its keywords (`keyword.kwlist`). ZWNJ
 * and ZWJ joined XID_Continue only in Unicode 15.1: Pythons before 3.13 refuse them, so they are refused here.
 */
const PYTHON: IdentifierRules = {
  name: "Python",
  identifier: /^[\p{XID_Start}_](?:(?![\u200c\u200d])\p{XID_Continue})*$/u,
  shape: "a letter or _ first, then letters, digits or _; no $",
  reserved: new Set([
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
  ]),
  reservedWhy: "a keyword of Python",
};

const RULES: Record<Language, IdentifierRules> = { typescript: ECMASCRIPT, python: PYTHON };

/** Refuses, as INVALID_PARAMS, a new name that is not an identifier of `language` or is one of its reserved words. */
export function checkNewName(language: Language, name: string, field = "new_name"): void {
  const rules = RULES[language];
  if (!rules.identifier.test(name)) {
    throw new ToolError(
      "INVALID_PARAMS",
      `${field}: ${JSON.stringify(name)} is not a ${rules.name} identifier (${rules.shape}); nothing was renamed. Choose a name the language accepts.`,
      { field, language },
    );
  }
  if (rules.reserved.has(name)) {
    throw new ToolError(
      "INVALID_PARAMS",
      `${field}: ${JSON.stringify(name)} is ${rules.reservedWhy}, so it cannot name a symbol; nothing was renamed. Choose another name.`,
      { field, language },
    );
  }
}
