/**
 * Warm start: a language server is started as soon as the daemon is ready when the workspace has its project files, and
 * given one of the project's files, so the project loads (tsserver reads the tsconfig project on the first open; that
 * took 10 to 17 s on a real repository) before the first lsp_* call instead of during it. Each step is pushed as an
 * `lsp.state` event; `info` shows the latest.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import type { Language } from "./servers.js";
import type { ProgressValue } from "./session.js";

/** Files at the root that say the workspace is a project of the language. */
export const PROJECT_FILES: Record<Language, readonly string[]> = {
  typescript: ["tsconfig.json", "jsconfig.json", "package.json"],
  python: ["pyproject.toml", "setup.py", "setup.cfg", "pyrightconfig.json", "requirements.txt"],
};

/** The `lsp.state` event (docs/events.md). */
export interface LspStateEvent {
  language: Language;
  server: string;
  state: "starting" | "indexing" | "ready" | "failed";
  /** While indexing: the server's own words from `$/progress`. */
  progress?: { title?: string; message?: string; percentage?: number };
  /** Why it failed. */
  reason?: string;
}

/** The languages whose project files are at `root`. */
export function projectLanguages(root: string): Language[] {
  return (Object.keys(PROJECT_FILES) as Language[]).filter((l) => PROJECT_FILES[l].some((f) => existsSync(path.join(root, f))));
}

/** A `$/progress` value as the event's `progress` (an `end` has nothing to say: ready or the next begin follows). */
export function progressOf(value: ProgressValue): LspStateEvent["progress"] | undefined {
  if (value.kind === "end") return undefined;
  const progress: NonNullable<LspStateEvent["progress"]> = {};
  if (typeof value.title === "string") progress.title = value.title;
  if (typeof value.message === "string") progress.message = value.message;
  if (typeof value.percentage === "number") progress.percentage = value.percentage;
  return progress;
}

/** The file to open first: the shallowest of the language's files in the index (src/index.ts before a test fixture). */
export function firstFile(paths: Iterable<string>, isOfLanguage: (rel: string) => boolean): string | undefined {
  let best: string | undefined;
  let bestDepth = Infinity;
  for (const rel of paths) {
    if (!isOfLanguage(rel)) continue;
    const depth = rel.split("/").length;
    if (depth < bestDepth || (depth === bestDepth && best !== undefined && rel < best)) {
      best = rel;
      bestDepth = depth;
    }
  }
  return best;
}
