import { createRequire } from "node:module";
import v8 from "node:v8";
import type { Parser } from "web-tree-sitter";
import { once } from "../core/once.js";
import { ToolError } from "../errors.js";
import { type CheckOptions, type Verdict, verdictOf } from "./shell-rules.js";

export type { CheckOptions, Verdict } from "./shell-rules.js";

const require = createRequire(import.meta.url);

const grammar = once(async (): Promise<Parser> => {
  // Imported here, not at the top: the module and the grammar's WebAssembly cost the daemon about 18 MB, paid only by
  // a daemon that checks a command.
  const { Language, Parser } = await import("web-tree-sitter");
  v8.setFlagsFromString("--liftoff-only");
  try {
    await Parser.init();
    const bash = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
    const p = new Parser();
    p.setLanguage(bash);
    return p;
  } finally {
    v8.setFlagsFromString("--no-liftoff-only");
  }
});

/**
 * The bash grammar, loaded once, on the first check (about 16 ms on a quiet machine, 180 ms at load 10; the first
 * terminal_run waits for it); every later check parses synchronously.
 * Its WebAssembly is compiled by V8's baseline compiler only (Liftoff): with tiering on, V8 goes on optimizing the
 * grammar's huge parse function in the background for seconds, and a daemon cannot exit until that is done (1-5 s
 * after its first terminal command here). The flag is set only around these compilations: the file hasher's module,
 * compiled at start, keeps its optimized code. A check still takes well under a millisecond. A failed load is not
 * remembered, so a later call can try again.
 */
export function initShellParser(): Promise<void> {
  return grammar().then(() => undefined);
}

/** Whether checkCommandSync can be used. */
export function shellParserReady(): boolean {
  return grammar.value !== undefined;
}

/** Checks a command line against SPEC 11's write rules; needs initShellParser() to have resolved. */
export function checkCommandSync(line: string, opts: CheckOptions = {}): Verdict {
  const p = grammar.value;
  if (!p) throw new Error("checkCommandSync before initShellParser() resolved");
  return verdictOf(line, (source) => p.parse(source), opts);
}

/** Checks a command line against SPEC 11's write rules, loading the grammar on first use. */
export async function checkCommand(line: string, opts: CheckOptions = {}): Promise<Verdict> {
  await initShellParser();
  return checkCommandSync(line, opts);
}

/** The error for a refused line (dry run or not): what was found, and what to use instead. */
export function shellWriteRefused(reason: string): ToolError {
  return new ToolError(
    "SHELL_WRITE_REFUSED",
    `Refused before running: ${reason}. Change file content with file_write (it is hash-checked and reviewed); commands that copy, move or generate files (cp, mv, compilers, package managers, test runners) are fine.`,
    { reason },
  );
}
