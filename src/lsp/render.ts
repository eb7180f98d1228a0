/**
 * The LSP tools' wire shapes and `text` (pure): every place names its line's tag, so a hit can be edited straight away,
 * and renders as `path:N|TAG content` (SPEC 10).
 */
import { tagOf } from "../core/hash.js";
import { plural } from "../core/text.js";
import { type DiagnosticItem, type LinesOf, type SymbolItem, renderPlace } from "./convert.js";
import type { Place } from "./positions.js";

/** A diagnostic as the tools and the lsp.diagnostics event give it: SPEC 10's fields, the tag of its line, its end. */
export interface WireDiagnostic extends DiagnosticItem {
  tag: string;
}

/** A place with its line's tag (null when the file's lines are unknown: a file outside the workspace we cannot read). */
export interface WirePlace extends Place {
  tag: string | null;
}

export function wireDiagnostics(items: readonly DiagnosticItem[], lines: readonly string[]): WireDiagnostic[] {
  return items.map((d) => ({
    line: d.line,
    tag: tagOf(lines[d.line - 1] ?? ""),
    column: d.column,
    end_line: d.end_line,
    end_column: d.end_column,
    severity: d.severity,
    code: d.code,
    source: d.source,
    message: d.message,
  }));
}

export function wirePlace(place: Place, lines: readonly string[] | undefined): WirePlace {
  const line = lines?.[place.line - 1];
  return {
    path: place.path,
    line: place.line,
    tag: line === undefined ? null : tagOf(line),
    column: place.column,
    ...(place.end_line !== undefined ? { end_line: place.end_line, end_column: place.end_column } : {}),
  };
}

/** `path:N|TAG content`, or `path:N` for a line we cannot show. */
export function placeLine(place: Place, linesOf: LinesOf): string {
  return renderPlace(place, linesOf(place.path) ?? []);
}

/** Places under a header, each line once however many places it holds (`places` in the result has every column). */
export function renderPlaces(header: string, places: readonly Place[], linesOf: LinesOf, none: string): string {
  if (places.length === 0) return `${header}\n${none}`;
  const seen = new Set<string>();
  const out = [header];
  for (const p of places) {
    const key = `${p.path}:${p.line}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(placeLine(p, linesOf));
  }
  return out.join("\n");
}

/** Each diagnostic: its line rendered, then where on it, how bad, whose and what. */
export function renderDiagnostics(path: string, hash: string, items: readonly WireDiagnostic[], lines: readonly string[]): string {
  const errors = items.filter((d) => d.severity === "error").length;
  const header = `diagnostics ${path} · hash ${hash} · current · ${plural(errors, "error")}, ${plural(items.length - errors, "other")}`;
  const out = [header];
  for (const d of items) {
    out.push(placeLine({ path, line: d.line, column: d.column }, () => lines));
    const code = d.code === null ? "" : ` ${d.code}`;
    out.push(`  col ${d.column} ${d.severity}${d.source ? ` ${d.source}` : ""}${code}: ${d.message.replace(/\n/g, "\n    ")}`);
  }
  return out.join("\n");
}

export function renderUnknown(path: string, hash: string, reason: string): string {
  return `diagnostics ${path} · hash ${hash} · unknown: ${reason}. This is not a clean result: call again (a larger wait_ms gives the server more time).`;
}

/** An outline (indented by depth) or a workspace-symbol list, each symbol with its place. */
export function renderSymbols(header: string, symbols: readonly SymbolItem[], linesOf: LinesOf, none: string): string {
  if (symbols.length === 0) return `${header}\n${none}`;
  const out = [header];
  for (const s of symbols) {
    const container = s.container && s.depth === 0 ? ` (in ${s.container})` : "";
    out.push(`${"  ".repeat(s.depth)}${s.kind} ${s.name}${container} · ${placeLine(s.place, linesOf)}`);
  }
  return out.join("\n");
}
