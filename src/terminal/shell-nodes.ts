import type { Node } from "web-tree-sitter";
import { type ArgvSink, refuse } from "./shell-sink.js";
import { assignment, nameOperand } from "./shell-vars.js";
import { type Word, UNKNOWN, literalWord, show, wordOf } from "./shell-words.js";

/** Grammar nodes whose text bash evaluates again or assigns: tests, arithmetic, assignments, `${…}` expansions. */

/** String nodes, whose text bash expands once more where it evaluates arithmetic. */
const STRING_TYPES = new Set(["raw_string", "string", "ansi_c_string", "translated_string"]);
/** `[[ A -eq B ]]` evaluates A and B as arithmetic (`test` and `[` take integers only). */
const ARITHMETIC_TESTS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);

/**
 * Inside `[ … ]` (not `[[ … ]]`), `>` is bash's output redirection: `[ "$a" > b ]` creates the file b. `-v NAME` and the
 * operands of `[[ … -eq … ]]` are evaluated, subscripts and all.
 */
export function testCommand(node: Node, sink: ArgvSink): void {
  const double = node.firstChild?.type === "[[";
  const look = (n: Node): void => {
    if (n.type === "command_substitution" || n.type === "process_substitution") return;
    const op = n.childForFieldName("operator")?.text;
    if (!double && n.type === "binary_expression" && op === ">") {
      const right = n.childForFieldName("right")?.text ?? "";
      refuse(
        `inside ${show("[ … ]")}, ${show("> " + right)} is an output redirection that writes the file ${right} (compare strings with ${show("[[ … > … ]]")})`,
      );
    }
    if (n.type === "unary_expression" && op === "-v") {
      const operand = n.namedChildren.find((c) => c && c.type !== "test_operator");
      if (operand) nameOperand(wordOf(operand), "-v", sink);
    }
    if (double && n.type === "binary_expression" && op !== undefined && ARITHMETIC_TESTS.has(op)) {
      for (const side of [n.childForFieldName("left"), n.childForFieldName("right")]) if (side) arithmetic(side, sink);
    }
    for (const c of n.namedChildren) if (c) look(c);
  };
  look(node);
}

/** In arithmetic bash expands a quoted string's text once more: `(( 'a[$(cmd)]' ))` runs cmd. */
export function arithmetic(node: Node, sink: ArgvSink): void {
  if (node.type === "command_substitution" || node.type === "process_substitution" || node.type === "subscript" || node.type === "do_group") return;
  if (STRING_TYPES.has(node.type)) {
    const v = wordOf(node).value;
    if (v !== null) sink.evaluated(v, "an arithmetic expression");
    return;
  }
  for (const c of node.namedChildren) if (c) arithmetic(c, sink);
}

/** `NAME=VALUE`, `NAME=(…)`, `a[i]=VALUE` (the subscript is visited as arithmetic). */
export function assignmentNode(node: Node, sink: ArgvSink): void {
  const name = node.childForFieldName("name");
  const variable = name?.type === "subscript" ? name.childForFieldName("name")?.text : name?.text;
  if (!variable) return;
  const value = node.childForFieldName("value");
  const values = value?.type === "array" ? value.namedChildren.filter((c): c is Node => !!c && c.type !== "comment") : value ? [value] : [];
  for (const v of values.length ? values.map(wordOf) : [literalWord("")]) assignment(variable, v, sink, show(node.text));
}

/** `${x@P}` runs what the value says; `${NAME:=VALUE}` assigns. */
export function expansion(node: Node, sink: ArgvSink): void {
  const ops = node.childrenForFieldName("operator").filter((c): c is Node => !!c);
  const at = ops.findIndex((o) => o.type === "@");
  if (at >= 0 && ops[at + 1]?.type === "P")
    refuse(`${show(node.text)} expands the value as a prompt (\`@P\`), which runs the commands in it, so it could not be checked`);
  const assign = ops.find((o) => o.type === ":=" || o.type === "=");
  const variable = node.namedChildren.find((c) => c?.type === "variable_name")?.text;
  if (!assign || !variable) return;
  const parts = node.namedChildren.filter((c): c is Node => !!c && c.startIndex >= assign.endIndex);
  const value: Word =
    parts.length === 1
      ? wordOf(parts[0])
      : parts.length === 0
        ? literalWord("")
        : { value: null, prefix: "", template: UNKNOWN, text: node.text, kind: "expansion" };
  assignment(variable, value, sink, show(node.text));
}
