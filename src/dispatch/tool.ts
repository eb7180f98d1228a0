import { z } from "zod";
import { ToolError } from "../errors.js";
import { substringEditDistance } from "../search/typo.js";
import type { Workspace } from "../workspace.js";
import type { Services } from "./services.js";

/** What the dispatcher hands every tool call. */
export interface ToolContext {
  /** The workspace's own state (services.workspace). */
  ws: Workspace;
  /** Every service the daemon runs (files, git, terminal, lsp, mcp, web, …), each present. */
  services: Services;
  sessionId: string;
  callId: string | number;
  toolId: string;
  /** Aborted on cancel, timeout or shutdown; check it after every await that can take long. Made when first read. */
  readonly signal: AbortSignal;
  /** Throws once the call is aborted: the check without making the signal (see CallAbort). */
  throwIfAborted(): void;
  /** True when the tool is mutating and the call was not approved: check everything, change nothing, return a preview. */
  dryRun: boolean;
  /** Runs the irreversible step (a rename, a ref update). A cancel that arrives during it waits for it to finish. */
  commit<T>(step: () => Promise<T>): Promise<T>;
  /**
   * Runs `work` with the worktree to itself: no file write and no other worktree-changing operation interleaves, and every
   * change the watcher sees meanwhile is attributed to this session and tool (SPEC 7). In a dry run it only runs `work`.
   * `announced`: `work` announces each change it makes by its hash (expectToolWrite), as a file write does, so no such
   * window is opened: it would also claim an outside edit that lands while the watcher trails the disk.
   */
  exclusive<T>(work: () => Promise<T>, opts?: { announced?: boolean }): Promise<T>;
  /** Runs `work` as the only writer of one file (its real path); other files' writes go on. */
  lockFile<T>(real: string, work: () => Promise<T>): Promise<T>;
  /** The registry and the calls in flight, for the built-ins list, info, cancel and session_end. */
  daemon: DaemonApi;
}

export interface DaemonApi {
  enabledTools(): AnyTool[];
  enabledTool(id: string): AnyTool | undefined;
  /** The description in force (a `--tools` file may replace it). */
  describe(tool: AnyTool): string;
  /** The JSON Schema calls are checked against (a mutating tool's includes `preview_id`). */
  schemaOf(tool: AnyTool): Record<string, unknown>;
  cancel(callId: string | number): boolean;
}

export type ToolResult = Record<string, unknown>;

/** MCP's tool annotations (SPEC 6), as `info` reports them; see hintsOf for the defaults. */
export interface ToolHints {
  read_only: boolean;
  destructive: boolean;
  idempotent: boolean;
  open_world: boolean;
}

export interface ToolDef<P extends z.ZodType = z.ZodType> {
  id: string;
  /** What a model reads; the first sentence is what `list` shows. */
  description: string;
  params: P;
  /** The input schema `info` shows, when the tool was defined by one (a passthrough tool's, as its server gave it). */
  jsonSchema?: Record<string, unknown>;
  /** A mutating tool runs as a dry run unless the call is approved, and accepts `preview_id`. */
  mutating: boolean;
  /** The finer hints; unset ones follow from `mutating` (hintsOf). */
  hints?: Partial<ToolHints>;
  /**
   * Identical calls in flight at once share one run (single flight, in the dispatcher): for a read-only tool whose answer
   * depends on its params and the workspace only, never on the session. Not for a tool that records what a session saw
   * (file_read does: a shared run would record it for one session only).
   */
  shareable?: boolean;
  /** Upper bound of one call before it is aborted with TIMEOUT; time spent waiting for a pool slot does not count. */
  timeoutMs?: number;
  /**
   * Runs for minutes (a terminal command): an approval bound to a preview is checked, then the call runs without holding
   * the worktree, so file writes go on meanwhile. Its preview must not depend on file content a write could change.
   */
  runsLong?: boolean;
  /** Where the tool comes from: "builtin", or the passthrough server's name. */
  provider?: string;
  /** What the tool needs and whether it has it now, for `info`. */
  state?: (services: Services) => Promise<Record<string, unknown>> | Record<string, unknown>;
  run: (params: z.output<P>, ctx: ToolContext) => Promise<ToolResult>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDef<any>;

/** Declares a built-in tool; its params are a strict object, so a field it does not know is INVALID_PARAMS. */
export function defineTool<S extends z.ZodRawShape>(def: Omit<ToolDef<z.ZodObject<S>>, "params"> & { params: S }): ToolDef<z.ZodObject<S>> {
  return { ...def, params: z.strictObject(def.params) as unknown as z.ZodObject<S> };
}

/** A source of tools that may change while the daemon runs (an MCP server's). */
export interface ToolProvider {
  readonly name: string;
  tools(): readonly AnyTool[];
  /**
   * For an id none of its tools has: a wait until the provider may list it (its server is still starting), which
   * rejects with the error a call should answer when it cannot (or with `signal`'s reason); undefined when no wait helps.
   */
  awaitTool?(id: string, signal: AbortSignal): Promise<void> | undefined;
  /** Why an unknown id may be unknown only for now (a server still starting), in a sentence; undefined when not. */
  notYet?(): string | undefined;
}

export const TOOL_ID_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

/** Abbreviations whose period does not end a sentence ("e.g. a PR"). */
const ABBREVIATIONS = /(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|no)\.|\b[A-Za-z]\.)$/i;

/** The first sentence of a description, for `list`. */
export function firstSentence(description: string): string {
  const text = description.trim();
  const end = /[.!?](?=\s|$)/g;
  for (let m = end.exec(text); m; m = end.exec(text)) {
    const upto = text.slice(0, m.index + 1);
    if (m[0] === "." && ABBREVIATIONS.test(upto)) continue;
    return upto.replace(/\s+/g, " ");
  }
  return text.replace(/\s+/g, " ");
}

/** The JSON Schema of what a call may send: the tool's own, or `params` (its schema as the dispatcher checks it). */
export function inputSchema(tool: AnyTool, params: z.ZodType = tool.params): Record<string, unknown> {
  if (tool.jsonSchema) return tool.jsonSchema;
  const schema = z.toJSONSchema(params, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/**
 * MCP's defaults, made explicit: a read-only tool is idempotent and not destructive; a mutating one is destructive and
 * not idempotent unless it says otherwise; only tools that reach beyond the machine (remotes, the web) are open-world.
 */
export function hintsOf(tool: AnyTool): ToolHints {
  const readOnly = tool.hints?.read_only ?? !tool.mutating;
  return {
    read_only: readOnly,
    destructive: tool.hints?.destructive ?? !readOnly,
    idempotent: tool.hints?.idempotent ?? readOnly,
    open_world: tool.hints?.open_world ?? false,
  };
}

/** "Did you mean" names at most this many ids: the likely one or two, not a second listing. */
export const DID_YOU_MEAN_MAX = 3;

/**
 * The ids nearest to a mistyped one, best first: at most a third of its letters away from an id or a part of it (typo.ts's
 * edit distance, swaps counted once: `fil_read`, `gti_status`, `rename`), and at most one edit further than the best
 * (so `rename` offers lsp_rename, not git_rebase too); ties broken by the closest length, then by name.
 */
export function nearestToolIds(query: string, ids: readonly string[], limit = DID_YOU_MEAN_MAX): string[] {
  const q = query.toLowerCase();
  if (!q) return [];
  const most = Math.max(1, Math.floor(q.length / 3));
  const near = ids
    .map((id) => ({ id, edits: substringEditDistance(q, id, 0), length: Math.abs(id.length - q.length) }))
    .filter((c) => c.edits <= most && c.edits < q.length)
    .sort((a, b) => a.edits - b.edits || a.length - b.length || a.id.localeCompare(b.id));
  return near
    .filter((c) => c.edits <= near[0].edits + 1)
    .slice(0, limit)
    .map((c) => c.id);
}

/** NOT_AVAILABLE for an id no enabled tool has (a call's or info's), naming the nearest enabled ids; `then` says what else to do. */
export function unknownToolError(id: string, enabled: readonly string[], then: string): ToolError {
  const near = nearestToolIds(id, enabled);
  const guess = near.length ? ` Did you mean ${near.map((n) => JSON.stringify(n)).join(" or ")}?` : "";
  return new ToolError("NOT_AVAILABLE", `There is no enabled tool ${JSON.stringify(id)}.${guess} ${then}`, { did_you_mean: near });
}
