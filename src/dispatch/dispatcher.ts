import type { z } from "zod";
import { canonicalJson } from "../core/canonical-json.js";
import { MAX_TEXT_CHARS } from "../core/limits.js";
import { ToolError, toolErrorOf } from "../errors.js";
import type { AnyTool, DaemonApi, ToolContext, ToolResult } from "./tool.js";
import type { Services } from "./services.js";
import { CallAbort } from "./call-abort.js";
import { previewId } from "./preview.js";
import { PREVIEW_PARAM, type Registry, unknownToolError } from "./registry.js";

/** A call with no timeout of its own is aborted after this; long tools (git, terminal) set theirs. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** After shutdown aborts the calls still running, how long a commit in progress may take to finish. */
export const ABORT_GRACE_MS = 1_000;

export type CallId = string | number;

/** One call, as a transport hands it over once the envelope is valid. */
export interface CallRequest {
  tool_id: string;
  session_id: string;
  call_id: CallId;
  approved: boolean;
  params: Record<string, unknown>;
}

export type Outcome = { success: true; result: ToolResult } | { success: false; result: { code: string; message: string; [detail: string]: unknown } };

interface Running {
  abort: CallAbort;
  committing: boolean;
}

/** A run identical calls share (single flight): its own abort and outcome, and how many callers still wait on it. */
interface Flight {
  run: Running;
  outcome: Promise<Outcome>;
  joiners: number;
}

class Aborted extends Error {}

/**
 * The shared work of every call, whatever the transport: validation, the approval gate and its binding to a preview,
 * timeouts, cancellation, single flight for shareable tools, and errors as values. `call` never rejects: every failure
 * is an Outcome.
 */
export class Dispatcher implements DaemonApi {
  private closing = false;
  private readonly running = new Map<string, Running>();
  private readonly settled = new Set<Promise<Outcome>>();
  /** Shared runs still open to callers, by tool id and canonical params. */
  private readonly flights = new Map<string, Flight>();

  /** The workspace: its views, its worktree lock, its attribution windows. */
  private get ws() {
    return this.services.workspace;
  }

  constructor(
    private readonly registry: Registry,
    private readonly services: Services,
  ) {
    // A change after a shared run began may be missing from its answer: calls from now on start a new run.
    services.bus.on("fs.changed", () => this.flights.clear());
    services.bus.on("git.changed", () => this.flights.clear());
  }

  call(request: CallRequest): Promise<Outcome> {
    if (this.closing) return Promise.resolve(failure(new ToolError("NOT_AVAILABLE", "The daemon is shutting down; no new calls are taken.")));
    const key = keyOf(request.call_id);
    if (this.running.has(key)) {
      return Promise.resolve(
        failure(new ToolError("INVALID_REQUEST", `toolcall_id ${JSON.stringify(request.call_id)} is still running; use a new id for each call.`)),
      );
    }
    const done = this.run(request, key);
    this.settled.add(done);
    void done.finally(() => this.settled.delete(done));
    return done;
  }

  /** Stops taking calls and waits for those in flight, aborting what is left after `graceMs`. */
  async drain(graceMs: number): Promise<void> {
    this.closing = true;
    const all = Promise.allSettled([...this.settled]);
    await Promise.race([all, delay(graceMs)]);
    for (const r of this.running.values()) r.abort.abort(new Aborted("the daemon is shutting down"));
    // An aborted call answers at once (raceAbort); only a commit in progress is worth waiting for, briefly.
    await Promise.race([all, delay(ABORT_GRACE_MS)]);
  }

  enabledTools(): AnyTool[] {
    return this.registry.tools();
  }

  enabledTool(id: string): AnyTool | undefined {
    return this.registry.tool(id);
  }

  describe(tool: AnyTool): string {
    return this.registry.describe(tool);
  }

  schemaOf(tool: AnyTool): Record<string, unknown> {
    return this.registry.schemaOf(tool);
  }

  cancel(callId: CallId): boolean {
    const running = this.running.get(keyOf(callId));
    if (!running || running.committing || running.abort.aborted) return false;
    running.abort.abort(new Aborted("cancelled"));
    return true;
  }

  private async run(request: CallRequest, key: string): Promise<Outcome> {
    let registered = this.registry.registered(request.tool_id);
    if (!registered) {
      const failed = await this.awaitListed(request, key);
      if (failed) return failed;
      registered = this.registry.registered(request.tool_id);
    }
    if (!registered) {
      const known = this.registry.tools().map((t) => t.id);
      const notYet = this.registry.notYet();
      return failure(unknownToolError(request.tool_id, known, `${notYet ? `${notYet} ` : ""}Enabled tools: ${known.join(", ")}.`));
    }
    const { tool } = registered;
    this.ws.views.touch(request.session_id);
    const parsed = registered.params.safeParse(request.params);
    if (!parsed.success) return failure(new ToolError("INVALID_PARAMS", describeIssues(parsed.error)));
    const params = parsed.data as Record<string, unknown>;
    const bound = registered.previewParam ? (params[PREVIEW_PARAM] as string | undefined) : undefined;
    if (registered.previewParam) delete params[PREVIEW_PARAM];

    if (tool.shareable && !tool.mutating) return this.join(request, key, tool, params);
    const entry: Running = { abort: new CallAbort(), committing: false };
    this.running.set(key, entry);
    try {
      return await this.execute(request, tool, params, bound, entry);
    } finally {
      this.running.delete(key);
      // Its changes reach the bus only once the watcher sees them: a call after its answer must not join a run begun before.
      if (tool.mutating && request.approved) this.flights.clear();
    }
  }

  /**
   * A call to a tool of a server still starting waits until it is listed (the provider bounds the wait), and can be
   * cancelled meanwhile. Answers the failure when the wait ends in one; undefined to go on with the call.
   */
  private async awaitListed(request: CallRequest, key: string): Promise<Outcome | undefined> {
    const entry: Running = { abort: new CallAbort(), committing: false };
    const listed = this.registry.awaitTool(request.tool_id, entry.abort.signal);
    if (!listed) return undefined;
    this.running.set(key, entry);
    try {
      await listed;
      return undefined;
    } catch (e) {
      if (entry.abort.aborted) return abortedOutcome(request.tool_id, entry.abort.reason, 0);
      return failure(toolErrorOf(e) ?? new ToolError("INTERNAL", `Waiting for ${request.tool_id} failed unexpectedly (${String(e)}).`));
    } finally {
      this.running.delete(key);
    }
  }

  /**
   * Joins the run in flight of an identical call, or starts one. Each caller gets its own answer; a caller that leaves
   * (cancel, shutdown) gets CANCELLED, and the run is stopped only when the last one has left.
   */
  private async join(request: CallRequest, key: string, tool: AnyTool, params: Record<string, unknown>): Promise<Outcome> {
    const id = `${tool.id}\n${canonicalJson(params)}`;
    let flight = this.flights.get(id);
    if (!flight) {
      const run: Running = { abort: new CallAbort(), committing: false };
      const started: Flight = { run, joiners: 0, outcome: this.execute(request, tool, params, undefined, run) };
      void started.outcome.finally(() => this.flights.get(id) === started && this.flights.delete(id));
      this.flights.set(id, (flight = started));
    }
    const shared = flight;
    shared.joiners++;
    const mine: Running = { abort: new CallAbort(), committing: false };
    this.running.set(key, mine);
    let takeBack!: () => void;
    const left = new Promise<Outcome>((resolve) => {
      takeBack = mine.abort.onAbort(() => {
        if (--shared.joiners === 0) {
          if (this.flights.get(id) === shared) this.flights.delete(id);
          shared.run.abort.abort(mine.abort.reason);
        }
        resolve(abortedOutcome(tool.id, mine.abort.reason, tool.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS));
      });
    });
    try {
      return await Promise.race([shared.outcome, left]);
    } finally {
      takeBack();
      this.running.delete(key);
    }
  }

  /** Runs one call under `entry`'s abort (cancel, timeout, shutdown) and turns whatever happens into an Outcome. */
  private async execute(request: CallRequest, tool: AnyTool, params: Record<string, unknown>, bound: string | undefined, entry: Running): Promise<Outcome> {
    const { abort } = entry;
    const timeoutMs = tool.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    const stopTimer = this.startTimeout(abort, timeoutMs);
    const dryRun = tool.mutating && !request.approved;
    const context = (dry: boolean, holdsTree: boolean): ToolContext => ({
      ws: this.ws,
      services: this.services,
      sessionId: request.session_id,
      callId: request.call_id,
      toolId: tool.id,
      get signal() {
        return abort.signal;
      },
      throwIfAborted: () => abort.throwIfAborted(),
      dryRun: dry,
      daemon: this,
      commit: async (step) => {
        if (abort.aborted) throw new Aborted("aborted before commit");
        entry.committing = true;
        return step();
      },
      exclusive: (work, opts) => {
        if (dry) return work();
        const attributed = opts?.announced ? work : () => this.ws.attributeDuring({ session: request.session_id, tool: tool.id }, work);
        return holdsTree ? attributed() : this.ws.lock.exclusive(attributed);
      },
      lockFile: (real, work) => (holdsTree ? work() : this.ws.lock.file(real, work)),
    });

    try {
      let work: Promise<ToolResult>;
      if (dryRun) {
        work = tool.run(params, context(true, false)).then((r) => ({ ...r, dry_run: true, preview_id: previewId(tool.id, params, r) }));
      } else if (bound !== undefined) {
        // The approval covers one preview: check it and act under one hold of the tree, so nothing slips in between;
        // a long-running tool is checked and then runs without the hold (a test run must not stop every file write).
        const checkAndRun = async (holdsTree: boolean) => {
          const preview = await tool.run(params, context(true, holdsTree)).catch((e: unknown) => {
            // The call would now fail (the file changed, the branch moved): that too is not what was approved.
            const known = toolErrorOf(e);
            if (!known) throw e;
            throw new ToolError(
              "PREVIEW_STALE",
              `The state changed since the preview ${bound} was approved, and the call would now fail: ${known.message} Nothing was changed.`,
              { reason: { code: known.code, message: known.message, ...known.details } },
            );
          });
          const now = previewId(tool.id, params, preview);
          if (now !== bound) {
            throw new ToolError(
              "PREVIEW_STALE",
              `The state changed since the preview ${bound} was approved; nothing was changed. Review the new preview (preview_id ${now}) and approve that one.`,
              { preview: { ...preview, dry_run: true, preview_id: now }, preview_id: now },
            );
          }
          return tool.run(params, context(false, holdsTree));
        };
        work = tool.runsLong ? checkAndRun(false) : this.ws.lock.exclusive(() => checkAndRun(true));
      } else {
        work = tool.run(params, context(false, false));
      }
      const result = await raceAbort(work, entry);
      return { success: true, result: capText(result) };
    } catch (e) {
      if (abort.aborted && !entry.committing) return abortedOutcome(tool.id, abort.reason, timeoutMs);
      const known = toolErrorOf(e);
      if (known) return failure(known);
      this.ws.log(`INTERNAL in ${tool.id} (call ${JSON.stringify(request.call_id)}): ${e instanceof Error ? e.stack : String(e)}`);
      return failure(
        new ToolError(
          "INTERNAL",
          `${tool.id} failed unexpectedly (${e instanceof Error ? e.message : String(e)}). This is a fault in tool-layer, not in your request; retrying may help.`,
        ),
      );
    } finally {
      stopTimer();
    }
  }

  /**
   * Aborts the call once it has run `timeoutMs`. Time its work spent waiting for a pool slot does not count: a call
   * queued behind a burst gets its whole timeout once its process starts, and still answers CANCELLED to a cancel.
   */
  private startTimeout(abort: CallAbort, timeoutMs: number): () => void {
    const start = performance.now();
    let timer: NodeJS.Timeout;
    const check = () => {
      const left = timeoutMs - (performance.now() - start - (abort.madeSignal ? this.ws.processes.waitedMs(abort.madeSignal) : 0));
      if (left >= 1) timer = setTimeout(check, left);
      else abort.abort(new Aborted(`timeout after ${timeoutMs} ms`));
    };
    timer = setTimeout(check, timeoutMs);
    return () => clearTimeout(timer);
  }
}

export function failure(error: ToolError): Outcome {
  return { success: false, result: { code: error.code, message: error.message, ...error.details } };
}

/** An aborted call's answer: TIMEOUT when its timeout stopped it, else CANCELLED (a cancel, the daemon's shutdown). */
function abortedOutcome(toolId: string, reason: unknown, timeoutMs: number): Outcome {
  const timedOut = String((reason as Error | undefined)?.message ?? "").startsWith("timeout");
  return failure(
    timedOut
      ? new ToolError("TIMEOUT", `${toolId} took longer than ${timeoutMs} ms and was stopped; nothing it had not finished was changed. Narrow the request.`)
      : new ToolError("CANCELLED", `${toolId} was cancelled; nothing it had not finished was changed.`),
  );
}

function keyOf(id: CallId): string {
  return typeof id === "number" ? `n:${id}` : `s:${id}`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Settles with the tool's result, or rejects the moment the call is aborted, unless it is committing: then it waits. */
function raceAbort<T>(work: Promise<T>, entry: Running): Promise<T> {
  const { abort } = entry;
  if (abort.aborted && !entry.committing) {
    work.catch(() => undefined);
    return Promise.reject(abort.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const takeBack = abort.onAbort(() => {
      if (entry.committing) return; // the step in progress finishes and answers for itself
      work.catch(() => undefined);
      reject(abort.reason);
    });
    work.then(resolve, reject).finally(takeBack);
  });
}

/** A plain-string `text` over MAX_TEXT_CHARS is cut at a line end with a note (tools that page, like file_read, fit their own). */
function capText(result: ToolResult): ToolResult {
  const { text } = result;
  if (typeof text !== "string" || text.length <= MAX_TEXT_CHARS) return result;
  const cut = text.lastIndexOf("\n", MAX_TEXT_CHARS);
  return {
    ...result,
    text: `${text.slice(0, cut > 0 ? cut : MAX_TEXT_CHARS)}\n… [output cut at ${MAX_TEXT_CHARS} characters; narrow the request to see the rest]`,
    truncated: true,
  };
}

/**
 * zod says only "Invalid input" when no branch of a union fits: name the types the branches expected, and what came.
 * A branch that failed deeper (a field of an object) is the better guess, so its own words are given instead.
 */
function unionMessage(issue: z.core.$ZodIssue): string | undefined {
  if (issue.code !== "invalid_union" || !issue.errors.length) return undefined;
  const top = issue.errors.map((branch) => branch.find((i) => i.path.length === 0 && i.code === "invalid_type"));
  if (top.every(Boolean)) {
    const expected = [...new Set(top.map((i) => (i as { expected: string }).expected))];
    const received = /received (\w+)/.exec(top[0]!.message)?.[1];
    return `expected ${expected.join(" or ")}${received ? `, received ${received}` : ""}`;
  }
  const deeper = issue.errors.find((branch) => branch.some((i) => i.path.length > 0))?.find((i) => i.path.length > 0);
  return deeper ? `${deeper.path.join(".")}: ${deeper.message}` : undefined;
}

/** One clause per bad field, so a model can fix them all at once. */
function describeIssues(error: z.ZodError): string {
  const parts = error.issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") return issue.keys.map((k) => `${[...issue.path, k].join(".")}: unknown field`);
    const where = issue.path.length ? issue.path.join(".") : "params";
    return [`${where}: ${unionMessage(issue) ?? issue.message}`];
  });
  return `Invalid params: ${parts.join("; ")}.`;
}
