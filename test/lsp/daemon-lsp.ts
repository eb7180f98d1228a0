/** The LSP tools through the real daemon: helpers shared by the tool tests. */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { fileHash } from "../../src/core/hash.js";
import type { DaemonClient } from "../helpers/daemon.js";
import { WAIT_MS } from "./projects.js";

export interface ServerState {
  language: string;
  state: string;
  pid: number | null;
  restarts: number;
  memory_bytes: number | null;
  open: string[];
}

export async function lspInfo(d: DaemonClient): Promise<{ sandbox: string; servers: ServerState[] }> {
  return (await d.ok("info", { tool_id: "lsp_hover" })).state;
}

export async function serverOf(d: DaemonClient, language: string): Promise<ServerState> {
  return (await lspInfo(d)).servers.find((s) => s.language === language)!;
}

/** An edit nobody here made: a plain write to disk, as an editor or a build would. Returns the new hash. */
export function external(dir: string, rel: string, text: string): string {
  writeFileSync(path.join(dir, rel), text);
  return fileHash(Buffer.from(text));
}

/**
 * The same, but renamed into place: a plain write truncates first, and on a loaded machine the watcher can see (and the
 * servers check) the empty file in between, whose list may equal the next one: tests of what is pushed need no such step.
 */
export function externalAtomic(dir: string, rel: string, text: string): string {
  const temp = path.join(dir, `${rel}.editor-tmp`);
  writeFileSync(temp, text);
  renameSync(temp, path.join(dir, rel));
  return fileHash(Buffer.from(text));
}

export function disk(dir: string, rel: string): string {
  return readFileSync(path.join(dir, rel), "utf8");
}

export async function diagnostics(d: DaemonClient, rel: string, waitMs = WAIT_MS): Promise<any> {
  return d.ok("lsp_diagnostics", { path: rel, wait_ms: waitMs });
}

/** A current answer's codes, after checking that the answer is about `hash`. */
export function codesOf(answer: any, hash: string): unknown[] {
  expect(answer).toMatchObject({ status: "current", hash });
  return answer.diagnostics.map((x: { code: unknown }) => x.code);
}

/** The lsp.diagnostics events for one file seen so far. */
export function diagnosticsEvents(d: DaemonClient, rel: string): { path: string; hash: string | null; diagnostics: any[] }[] {
  return d.events.filter((e) => e.event === "lsp.diagnostics" && e.data.path === rel).map((e) => e.data);
}

/** Where the stdout lines are now: a later wait then ignores what came before (an earlier edit to the same content). */
export function mark(d: DaemonClient): number {
  return d.lines.length;
}

/** Resolves with the lsp.diagnostics event for `rel` at `hash` that came after `since` (a mark). */
export function diagnosticsEvent(d: DaemonClient, rel: string, hash: string, since: number): Promise<any> {
  const at = new Set(d.lines.slice(0, since));
  return d.waitFor((l) => !at.has(l) && l.event === "lsp.diagnostics" && l.data.path === rel && l.data.hash === hash, WAIT_MS).then((l) => l.data);
}
