import { type Word, show } from "./shell-words.js";

/** Thrown inside the rule walk to stop at the first write form; the walk turns it into a verdict. */
export class Refusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export function refuse(reason: string): never {
  throw new Refusal(reason);
}

/** What a simple command's rules hand back to the tree walk, which knows the line around the command. */
export interface ArgvSink {
  /** A literal script a shell runs (`bash -c`, `eval`, `trap`, `alias`, `watch`, `flock -c`, a pager in a variable). */
  script(source: string, via: string): void;
  /** A shell reads its script from stdin: the walk knows what stdin is (a here-document, a pipe, the call's stdin). */
  stdinScript(via: string): void;
  /** Another command given as words (what a git alias or MAKEFLAGS runs). */
  argv(words: readonly Word[]): void;
  /**
   * Text bash expands once more when it evaluates it (an arithmetic expression, a name with a subscript, a prompt): the
   * command substitutions in it are checked. `what` says what the text is, for the message.
   */
  evaluated(text: string, what: string): void;
  /** Whether a write to `target` leaves the workspace alone; a write through a descriptor is kept for the end of the walk. */
  harmless(target: string, form: string): boolean;
  /** `alias NAME=…`: a later command named NAME runs the alias with its arguments. */
  alias(name: string, definition: string): void;
  /**
   * A program runs or copies into the workspace the file at `path` (`bash FILE`, `cp FILE`, `make -f FILE`), or links a
   * workspace file to it (`ln -s`): one in the private /tmp holds what the same line put there, or is the workspace file
   * itself, which is refused if the line writes into the private /tmp from the shell. Null: a path that is not literal.
   */
  reads(path: string | null, form: string): void;
  /** Where the command's stdin comes from. */
  stdin(): StdinSource;
  /** `cd DIR`: null when where it goes is not known (not literal, `..`, `-`, HOME). */
  cd(target: string | null): void;
}

/** A command's stdin: text the line or the call gives it (a here-document, a pipe, the call's stdin), a file, nothing. */
export type StdinSource = { kind: "line" } | { kind: "none" } | { kind: "file" /** when literal */; path?: string };

export type Rule = (args: Word[], sink: ArgvSink, name: string) => void;

export function needLiteral(w: Word, what: string): string {
  if (w.value === null) refuse(`${what} ${show(w.text)} is not a literal word, so it could not be checked`);
  return w.value;
}

/** A word a program writes to: allowed only when it names a device, a descriptor or the private /tmp. */
export function checkTarget(target: Word | string | undefined, form: string, sink: ArgvSink): void {
  if (target === undefined) return;
  if (typeof target !== "string" && target.kind === "process_substitution") return; // `tee >(gzip)`: a pipe
  const value = typeof target === "string" ? target : needLiteral(target, `the file of ${form}`);
  const shown = show(form + (form.endsWith("=") ? "" : " ") + value);
  if (!sink.harmless(value, shown)) refuse(`${shown} writes the file ${value}`);
}
