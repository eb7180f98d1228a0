import { z } from "zod";
import type { BusEvents, EventName } from "../../platform/bus.js";

/**
 * The pushed events' data (SPEC 7), as zod schemas for the generated JSON Schema files and the typed client. The
 * producers declare their payloads as TypeScript types (BusEvents); `Same` below makes the build fail when a schema and
 * its producer's type part.
 */

const hash = z.string().regex(/^[0-9a-f]{16}$/);

const fsChange = z.object({
  path: z.string(),
  kind: z.enum(["created", "modified", "deleted"]),
  hash: hash.nullable(),
  origin: z.enum(["external", "tool"]),
  by: z.string().nullable(),
  tool: z.string().nullable(),
  stale_sessions: z.array(z.string()),
  stale_sessions_omitted: z.number().int().min(1).optional(),
});

const diagnostic = z.object({
  line: z.number().int(),
  column: z.number().int(),
  end_line: z.number().int(),
  end_column: z.number().int(),
  severity: z.enum(["error", "warning", "info", "hint"]),
  code: z.union([z.string(), z.number()]).nullable(),
  source: z.string().nullable(),
  message: z.string(),
  tag: z.string(),
});

/** Every event the bus carries to stdout, by its wire name. */
export const EVENT_DATA = {
  "fs.changed": z.object({ changes: z.array(fsChange) }),
  "git.changed": z.object({
    head: z.string().nullable(),
    branch: z.string().nullable(),
    index: z.boolean(),
    refs: z.boolean(),
    operation: z.string().nullable(),
  }),
  "vfs.state": z.object({ live: z.boolean(), reason: z.string() }),
  "tools.changed": z.object({ added: z.array(z.string()), removed: z.array(z.string()), changed: z.array(z.string()) }),
  "lsp.diagnostics": z.object({ path: z.string(), hash: hash.nullable(), diagnostics: z.array(diagnostic) }),
  "lsp.state": z.object({
    language: z.enum(["typescript", "python"]),
    server: z.string(),
    state: z.enum(["starting", "indexing", "ready", "failed"]),
    progress: z.object({ title: z.string().optional(), message: z.string().optional(), percentage: z.number().optional() }).optional(),
    reason: z.string().optional(),
  }),
  "terminal.output": z.object({ job: z.string(), data: z.string(), next: z.number().int().min(0), dropped: z.number().int().min(1).optional() }),
  "terminal.exited": z.object({ job: z.string(), exit_code: z.number().int().nullable(), signal: z.string().nullable() }),
} satisfies { [K in EventName]: z.ZodType };

/** `ready`, the first line (SPEC 1): not a bus event, the transport says it once. */
export const READY_DATA = z.looseObject({ version: z.string(), root: z.string(), tools: z.number().int().min(0) });

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Fails to compile when an event's schema and the type its producer emits differ (or an event has no schema). */
const inSync: { [K in EventName]: Same<z.output<(typeof EVENT_DATA)[K]>, BusEvents[K]> } = {
  "fs.changed": true,
  "git.changed": true,
  "vfs.state": true,
  "tools.changed": true,
  "lsp.diagnostics": true,
  "lsp.state": true,
  "terminal.output": true,
  "terminal.exited": true,
};
void inSync;

/** By the schemas' own keys, not the bus's: a program that imports only the client does not load every producer's augmentation. */
export type EventData = { [K in keyof typeof EVENT_DATA]: z.output<(typeof EVENT_DATA)[K]> } & { ready: z.output<typeof READY_DATA> };

/** One event line: `seq` grows by one per line; `dropped` counts events left out while stdout was blocked. */
export type EventLine = { [K in keyof EventData]: { event: K; seq: number; dropped?: number; data: EventData[K] } }[keyof EventData];

export function eventLineSchema(event: string, data: z.ZodType): z.ZodType {
  return z.object({ event: z.literal(event), seq: z.number().int().min(1), dropped: z.number().int().min(1).optional(), data });
}
