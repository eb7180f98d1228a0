/**
 * Server answers into the tools' shapes (pure): diagnostics, places, symbols, hover text and workspace edits. Paths here
 * are already the tools' (root-relative inside the root); `linesOf` gives a file's lines for code-point columns.
 */
import type {
  Diagnostic,
  DocumentSymbol,
  Hover,
  Location,
  LocationLink,
  MarkedString,
  SymbolInformation,
  TextEdit,
  WorkspaceEdit,
  WorkspaceSymbol,
} from "vscode-languageserver-protocol";
import { tagOf } from "../core/hash.js";
import { renderLine } from "../core/text.js";
import { ToolError } from "../errors.js";
import { type Place, codePointColumn, placeOf } from "./positions.js";

export type Severity = "error" | "warning" | "info" | "hint";

/** One diagnostic as the tools report it: 1-based lines and code-point columns, `end_*` exclusive. */
export interface DiagnosticItem {
  line: number;
  column: number;
  end_line: number;
  end_column: number;
  severity: Severity;
  code: string | number | null;
  source: string | null;
  message: string;
}

const SEVERITIES: Record<number, Severity> = { 1: "error", 2: "warning", 3: "info", 4: "hint" };

export function fromLspDiagnostic(d: Diagnostic, lines: readonly string[]): DiagnosticItem {
  const place = placeOf("", d.range, lines);
  return {
    line: place.line,
    column: place.column,
    end_line: place.end_line!,
    end_column: place.end_column!,
    // LSP: "If omitted it is up to the client to interpret"; every server we run sends it, an error is the safe reading.
    severity: SEVERITIES[d.severity ?? 1] ?? "error",
    code: d.code ?? null,
    source: d.source ?? null,
    message: d.message,
  };
}

/** tsserver's own diagnostic (protocol.Diagnostic): 1-based line and UTF-16 offset. */
export interface TsServerDiagnostic {
  start: { line: number; offset: number };
  end: { line: number; offset: number };
  text: string;
  code?: number;
  category: string;
  source?: string;
}

/** tsls maps categories the same way (its protocol-translation.ts): a suggestion is a hint. */
const TS_CATEGORIES: Record<string, Severity> = { error: "error", warning: "warning", suggestion: "hint", message: "info" };

export function fromTsServerDiagnostic(d: TsServerDiagnostic, lines: readonly string[]): DiagnosticItem {
  const col = (p: { line: number; offset: number }) => codePointColumn(lines[p.line - 1] ?? "", p.offset - 1) + 1;
  return {
    line: d.start.line,
    column: col(d.start),
    end_line: d.end.line,
    end_column: col(d.end),
    severity: TS_CATEGORIES[d.category] ?? "error",
    code: d.code ?? null,
    source: d.source ?? "typescript",
    message: d.text,
  };
}

/** Diagnostics in reading order, so an unchanged list compares equal whatever order the server sent it in. */
export function sortDiagnostics(items: DiagnosticItem[]): DiagnosticItem[] {
  return items.sort((a, b) => a.line - b.line || a.column - b.column || a.message.localeCompare(b.message));
}

export type PathOfUri = (uri: string) => string;
export type LinesOf = (path: string) => readonly string[] | undefined;

/** Every answer shape of definition, references and implementation; a link names its target's name (selection range). */
export function placesOf(result: Location | Location[] | LocationLink[] | null | undefined, pathOf: PathOfUri, linesOf: LinesOf): Place[] {
  if (!result) return [];
  const list = Array.isArray(result) ? result : [result];
  return list.map((item) => {
    const link = "targetUri" in item;
    const path = pathOf(link ? item.targetUri : item.uri);
    return placeOf(path, link ? item.targetSelectionRange : item.range, linesOf(path));
  });
}

/** LSP SymbolKind 1..26, lower-case as LSP names them. */
const SYMBOL_KINDS = [
  "",
  "file",
  "module",
  "namespace",
  "package",
  "class",
  "method",
  "property",
  "field",
  "constructor",
  "enum",
  "interface",
  "function",
  "variable",
  "constant",
  "string",
  "number",
  "boolean",
  "array",
  "object",
  "key",
  "null",
  "enum member",
  "struct",
  "event",
  "operator",
  "type parameter",
];

export interface SymbolItem {
  name: string;
  kind: string;
  detail?: string;
  container?: string;
  /** Nesting in a file's outline, from 0; workspace symbols are all 0. */
  depth: number;
  /** Where the name is. */
  place: Place;
}

export function symbolsOf(
  result: DocumentSymbol[] | SymbolInformation[] | WorkspaceSymbol[] | null | undefined,
  pathOf: PathOfUri,
  linesOf: LinesOf,
  documentPath?: string,
): SymbolItem[] {
  const out: SymbolItem[] = [];
  const walk = (s: DocumentSymbol, depth: number, container?: string) => {
    const path = documentPath ?? "";
    out.push({
      name: s.name,
      kind: SYMBOL_KINDS[s.kind] ?? "symbol",
      ...(s.detail ? { detail: s.detail } : {}),
      ...(container ? { container } : {}),
      depth,
      place: placeOf(path, s.selectionRange, linesOf(path)),
    });
    for (const child of s.children ?? []) walk(child, depth + 1, s.name);
  };
  for (const s of result ?? []) {
    if ("selectionRange" in s) {
      walk(s, 0);
      continue;
    }
    const path = pathOf(s.location.uri);
    // A WorkspaceSymbol may name only its file (no range): its place is the file's start.
    const range = "range" in s.location ? s.location.range : { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
    out.push({
      name: s.name,
      kind: SYMBOL_KINDS[s.kind] ?? "symbol",
      ...(s.containerName ? { container: s.containerName } : {}),
      depth: 0,
      place: placeOf(path, range, linesOf(path)),
    });
  }
  return out;
}

function markedText(m: MarkedString): string {
  return typeof m === "string" ? m : `\`\`\`${m.language}\n${m.value}\n\`\`\``;
}

/** Hover contents as one markdown (or plain) text; an empty hover is "". */
export function hoverText(hover: Hover | null | undefined): string {
  if (!hover) return "";
  const c = hover.contents;
  if (Array.isArray(c)) return c.map(markedText).join("\n\n").trim();
  if (typeof c === "object" && "kind" in c) return c.value.trim();
  return markedText(c).trim();
}

export interface FileEdits {
  path: string;
  edits: TextEdit[];
}

/**
 * tsls answers `changes` ({uri: edits}), pyright `documentChanges` (TextDocumentEdit with `version: null`): one shape.
 * A versioned TextDocumentEdit must name the version we have open (`versionOf`), else the edit is about other content.
 * File creates, renames and deletes are refused: the client does not advertise resource operations.
 */
export function normalizeWorkspaceEdit(
  edit: WorkspaceEdit | null | undefined,
  pathOf: PathOfUri,
  versionOf: (path: string) => number | undefined,
): FileEdits[] {
  const byPath = new Map<string, TextEdit[]>();
  const add = (path: string, edits: readonly TextEdit[]) => byPath.set(path, [...(byPath.get(path) ?? []), ...edits]);
  for (const change of edit?.documentChanges ?? []) {
    if (!("textDocument" in change)) {
      throw new ToolError("INTERNAL", `The language server answered a rename with a file ${change.kind}, which this client never asks for.`);
    }
    const path = pathOf(change.textDocument.uri);
    const version = change.textDocument.version;
    if (version !== null && version !== undefined && version !== versionOf(path)) {
      throw new ToolError("HASH_MISMATCH", `${path} changed while the language server computed the rename; run it again.`, { path });
    }
    add(
      path,
      change.edits.filter((e): e is TextEdit => "range" in e),
    );
  }
  if (!edit?.documentChanges) for (const [uri, edits] of Object.entries(edit?.changes ?? {})) add(pathOf(uri), edits);
  return [...byPath].map(([path, edits]) => ({ path, edits })).sort((a, b) => a.path.localeCompare(b.path));
}

/** Offsets in `text` of each line's start, for LSP positions: lines split on "\n" with a "\r" before it part of the break. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

/** The text after applying LSP edits made against it; OVERLAP when two edits cover the same text. */
export function applyTextEdits(text: string, edits: readonly TextEdit[], path = "file"): string {
  const starts = lineStarts(text);
  const offsetOf = (line: number, character: number) => {
    if (line >= starts.length) return text.length;
    const start = starts[line];
    const next = line + 1 < starts.length ? starts[line + 1] - 1 : text.length;
    const content = text.slice(start, next > start && text[next - 1] === "\r" ? next - 1 : next);
    return start + Math.min(character, content.length);
  };
  const spans = edits
    .map((e) => ({ from: offsetOf(e.range.start.line, e.range.start.character), to: offsetOf(e.range.end.line, e.range.end.character), text: e.newText }))
    .sort((a, b) => a.from - b.from || a.to - b.to);
  let out = "";
  let at = 0;
  for (const s of spans) {
    if (s.from < at) throw new ToolError("OVERLAP", `Two edits of the language server overlap in ${path}.`, { path });
    out += text.slice(at, s.from) + s.text;
    at = s.to;
  }
  return out + text.slice(at);
}

/** `path:N|TAG content` (SPEC 10), from the file's current lines; a line the file no longer has renders without content. */
export function renderPlace(place: Place, lines: readonly string[]): string {
  const line = lines[place.line - 1];
  return line === undefined ? `${place.path}:${place.line}` : `${place.path}:${renderLine(place.line, tagOf(line), line)}`;
}
