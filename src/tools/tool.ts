import { z } from "zod";
import type { Workspace } from "../workspace.js";

/** What the dispatcher hands every tool call. */
export interface ToolContext {
  ws: Workspace;
  sessionId: string;
  callId: string | number;
  /** Aborted on cancel, timeout or shutdown; check it after every await that can take long. */
  signal: AbortSignal;
  /** True when the tool is mutating and the call was not approved: check everything, change nothing, return a preview. */
  dryRun: boolean;
  /** Runs the irreversible step (a rename, a ref update). A cancel that arrives during it waits for it to finish. */
  commit<T>(step: () => Promise<T>): Promise<T>;
  /** The registry, for the built-ins list, info and cancel. */
  daemon: DaemonApi;
}

export interface DaemonApi {
  enabledTools(): AnyTool[];
  enabledTool(id: string): AnyTool | undefined;
  /** The description in force (a `--tools` file may replace it). */
  describe(tool: AnyTool): string;
  cancel(callId: string | number): boolean;
}

export type ToolResult = Record<string, unknown>;

export interface ToolDef<S extends z.ZodRawShape = z.ZodRawShape> {
  id: string;
  /** What a model reads; the first sentence is what `list` shows. */
  description: string;
  params: z.ZodObject<S>;
  /** A mutating tool runs as a dry run unless the call is approved. */
  mutating: boolean;
  /** Upper bound of one call before it is aborted with TIMEOUT. */
  timeoutMs?: number;
  /** What the tool needs and whether it has it now, for `info`. */
  state?: (ws: Workspace) => Promise<Record<string, unknown>> | Record<string, unknown>;
  run: (params: z.output<z.ZodObject<S>>, ctx: ToolContext) => Promise<ToolResult>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDef<any>;

/** Declares a tool; its params are a strict object, so a field it does not know is INVALID_PARAMS. */
export function defineTool<S extends z.ZodRawShape>(def: Omit<ToolDef<S>, "params"> & { params: S }): ToolDef<S> {
  return { ...def, params: z.strictObject(def.params) as unknown as z.ZodObject<S> };
}

export const TOOL_ID_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

/** The first sentence of a description, for `list`. */
export function firstSentence(description: string): string {
  const m = /^[\s\S]*?[.!?](?=\s|$)/.exec(description.trim());
  return (m ? m[0] : description.trim()).replace(/\s+/g, " ");
}

export function inputSchema(tool: AnyTool): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.params, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}
