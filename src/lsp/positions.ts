/**
 * Positions between the tools' units and LSP's (pure). The tools count lines and columns from 1 and columns in code points
 * (what a person or a model counts: "é" and "😀" are one column each); LSP counts from 0 and `character` in UTF-16 code
 * units, the only encoding both servers speak. A line is a SPEC 4 line: no terminator, so a CRLF file's `\r` is never content.
 */
import type { Position, Range } from "vscode-languageserver-protocol";
import { ToolError } from "../errors.js";
import { plural } from "../core/text.js";

/** Where a tool call points: a 1-based line and either a 1-based column or the text of an identifier on that line. */
export interface PositionSpec {
  line: number;
  column?: number;
  symbol?: string;
  /** Which occurrence of `symbol` on the line, from 1. */
  occurrence?: number;
}

/** A place in a file as the tools name it: 1-based lines, 1-based code-point columns; `end_*` exclusive like LSP's. */
export interface Place {
  path: string;
  line: number;
  column: number;
  end_line?: number;
  end_column?: number;
}

/** Steps through `line` a code point at a time (a lone surrogate counts as one) until `done` or the line's end. */
function walk(line: string, done: (column: number, offset: number) => boolean): { column: number; offset: number } {
  let column = 0;
  let offset = 0;
  for (; offset < line.length && !done(column, offset); column++) {
    const c = line.charCodeAt(offset);
    offset += c >= 0xd800 && c <= 0xdbff && offset + 1 < line.length ? 2 : 1;
  }
  return { column, offset };
}

/** UTF-16 offset of a code-point column (0-based both); a column past the end clamps to the line's end. */
export function utf16Offset(line: string, codePoints: number): number {
  return walk(line, (column) => column >= codePoints).offset;
}

/** Code-point column of a UTF-16 offset (0-based both); an offset inside a surrogate pair counts as its character. */
export function codePointColumn(line: string, utf16: number): number {
  return walk(line, (_, offset) => offset >= utf16).column;
}

/** Identifier characters for the boundary check: Unicode letters, digits, marks, `_` and `$` (JS) cover TS and Python. */
const IDENTIFIER_CHAR = /[\p{L}\p{N}\p{M}_$]/u;

function isIdentifierAt(line: string, utf16: number): boolean {
  if (utf16 < 0 || utf16 >= line.length) return false;
  const cp = line.codePointAt(utf16)!;
  return IDENTIFIER_CHAR.test(String.fromCodePoint(cp));
}

function charBefore(line: string, utf16: number): number {
  if (utf16 <= 0) return -1;
  const low = line.charCodeAt(utf16 - 1);
  return low >= 0xdc00 && low <= 0xdfff && utf16 >= 2 ? utf16 - 2 : utf16 - 1;
}

/**
 * UTF-16 offsets of `symbol` on `line` as a whole word: `add` is not found inside `address`. A symbol that does not start
 * or end with an identifier character (an operator, `a.b`) matches as plain text at that end.
 */
export function symbolOffsets(line: string, symbol: string): number[] {
  const found: number[] = [];
  if (symbol === "") return found;
  const wordStart = isIdentifierAt(symbol, 0);
  const wordEnd = isIdentifierAt(symbol, charBefore(symbol, symbol.length));
  for (let at = line.indexOf(symbol); at !== -1; at = line.indexOf(symbol, at + 1)) {
    if (wordStart && isIdentifierAt(line, charBefore(line, at))) continue;
    if (wordEnd && isIdentifierAt(line, at + symbol.length)) continue;
    found.push(at);
  }
  return found;
}

/** The LSP position a tool call names in a file of these lines; NOT_FOUND when the symbol is not on that line. */
export function toLspPosition(lines: readonly string[], spec: PositionSpec, path: string): Position {
  const { line, column, symbol, occurrence = 1 } = spec;
  if (!Number.isInteger(line) || line < 1 || line > Math.max(lines.length, 1)) {
    throw new ToolError("INVALID_PARAMS", `line: ${line} is outside ${path}, which has ${plural(lines.length, "line")}.`);
  }
  const text = lines[line - 1] ?? "";
  if (symbol !== undefined) {
    if (!Number.isInteger(occurrence) || occurrence < 1) throw new ToolError("INVALID_PARAMS", "occurrence: must be a whole number from 1.");
    const offsets = symbolOffsets(text, symbol);
    if (offsets.length < occurrence) {
      const seen = offsets.length === 0 ? "not on that line" : `on that line only ${offsets.length} time(s)`;
      throw new ToolError("NOT_FOUND", `${JSON.stringify(symbol)} is ${seen} (${path}:${line}); give the line the identifier is on, or a column.`, {
        line,
        symbol,
        occurrences: offsets.length,
      });
    }
    return { line: line - 1, character: offsets[occurrence - 1] };
  }
  if (column === undefined) throw new ToolError("INVALID_PARAMS", "symbol or column: give one to say where on the line.");
  if (!Number.isInteger(column) || column < 1) throw new ToolError("INVALID_PARAMS", "column: must be a whole number from 1.");
  return { line: line - 1, character: utf16Offset(text, column - 1) };
}

/** A place from an LSP range; `lines` are the file's lines if known (columns stay UTF-16 + 1 when not: a file we cannot read). */
export function placeOf(path: string, range: Range, lines: readonly string[] | undefined): Place {
  const col = (p: Position) => (lines ? codePointColumn(lines[p.line] ?? "", p.character) : p.character) + 1;
  return {
    path,
    line: range.start.line + 1,
    column: col(range.start),
    end_line: range.end.line + 1,
    end_column: col(range.end),
  };
}
