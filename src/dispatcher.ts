import { z } from "zod";
import { ToolError } from "./errors.js";
import type { LineWriter } from "./protocol/framing.js";
import { JsonText } from "./protocol/json-text.js";
import type { Registry } from "./registry.js";
import type { AnyTool, DaemonApi, ToolContext, ToolResult } from "./tools/tool.js";
import type { Workspace } from "./workspace.js";

/** A call with no timeout of its own is aborted after this; long tools (git, terminal) set theirs. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** After shutdown aborts the calls still running, how long a commit in progress may take to finish. */
export const ABORT_GRACE_MS = 1_000;
/** `text` beyond this is cut with a note: a model's context is the scarce resource, not our bandwidth. */
export const MAX_TEXT_CHARS = 100_000;

type CallId = string | number;

interface Running {
  controller: AbortController;
  committing: boolean;
}

interface Request {
  tool_id: string;
  session_id: string;
  toolcall_id: CallId;
  approved: boolean;
  params: Record<string, unknown>;
}

class Aborted extends Error {}

/** Owns the shared work of every call: envelope, validation, the approved gate, timeouts, cancellation, errors. */
export class Dispatcher implements DaemonApi {
  private ready = false;
  private closing = false;
  private readonly queued: string[] = [];
  private readonly running = new Map<string, Running>();
  private readonly settled = new Set<Promise<void>>();

  constructor(
    private readonly registry: Registry,
    private readonly ws: Workspace,
    private readonly out: LineWriter,
  ) {}

  /** Called once the workspace is ready: says `ready` first, then runs what was queued. */
  start(version: string): void {
    this.out.write({ event: "ready", data: { version, root: this.ws.root, tools: this.registry.tools().length } });
    this.ready = true;
    for (const line of this.queued.splice(0)) this.handleLine(line);
  }

  handleLine(line: string): void {
    if (this.closing) return;
    if (!line.trim()) return;
    if (!this.ready) {
      this.queued.push(line);
      return;
    }
    const request = this.parseEnvelope(line);
    if (!request) return;
    const key = keyOf(request.toolcall_id);
    if (this.running.has(key)) {
      this.fail(request.toolcall_id, new ToolError("INVALID_REQUEST", `toolcall_id ${JSON.stringify(request.toolcall_id)} is still running; use a new id for each call.`));
      return;
    }
    const call = this.run(request, key);
    this.settled.add(call);
    void call.finally(() => this.settled.delete(call));
  }

  /** Answers a line that was too long to read. */
  overflow(): void {
    this.fail(null, new ToolError("PARSE_ERROR", "The request line is too long; send files in smaller pieces."));
  }

  /** Stops taking requests and waits for calls in flight, aborting what is left after `graceMs`. */
  async drain(graceMs: number): Promise<void> {
    this.closing = true;
    const all = Promise.allSettled([...this.settled]);
    const timer = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([all, timer]);
    for (const r of this.running.values()) r.controller.abort(new Aborted("the daemon is shutting down"));
    // An aborted call answers at once (raceAbort); only a commit in progress is worth waiting for, briefly.
    await Promise.race([all, new Promise<void>((resolve) => setTimeout(resolve, ABORT_GRACE_MS).unref())]);
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

  cancel(callId: CallId): boolean {
    const running = this.running.get(keyOf(callId));
    if (!running || running.committing || running.controller.signal.aborted) return false;
    running.controller.abort(new Aborted("cancelled"));
    return true;
  }

  private parseEnvelope(line: string): Request | undefined {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      this.fail(null, new ToolError("PARSE_ERROR", `The line is not valid JSON (${(e as Error).message}); send one JSON object per line.`));
      return undefined;
    }
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      this.fail(null, new ToolError("INVALID_REQUEST", "A request must be a JSON object with tool_id, session_id and toolcall_id."));
      return undefined;
    }
    const r = raw as Record<string, unknown>;
    const id = r.toolcall_id;
    if (!((typeof id === "number" && Number.isFinite(id)) || typeof id === "string")) {
      this.fail(null, new ToolError("INVALID_REQUEST", "toolcall_id is required and must be a number or a string."));
      return undefined;
    }
    const problems: string[] = [];
    if (typeof r.tool_id !== "string") problems.push("tool_id must be a string");
    if (typeof r.session_id !== "string" || r.session_id === "") problems.push("session_id must be a non-empty string");
    if (r.approved !== undefined && typeof r.approved !== "boolean") problems.push("approved must be a boolean");
    const params = r.params ?? {};
    if (typeof params !== "object" || params === null || Array.isArray(params)) problems.push("params must be an object");
    if (problems.length) {
      this.fail(id, new ToolError("INVALID_REQUEST", `Bad envelope: ${problems.join("; ")}.`));
      return undefined;
    }
    return {
      tool_id: r.tool_id as string,
      session_id: r.session_id as string,
      toolcall_id: id,
      approved: (r.approved as boolean | undefined) ?? false,
      params: params as Record<string, unknown>,
    };
  }

  private async run(request: Request, key: string): Promise<void> {
    const id = request.toolcall_id;
    const tool = this.registry.tool(request.tool_id);
    if (!tool) {
      const known = this.registry.tools().map((t) => t.id).join(", ");
      this.fail(id, new ToolError("NOT_AVAILABLE", `There is no enabled tool "${request.tool_id}". Enabled tools: ${known}.`));
      return;
    }
    const parsed = tool.params.safeParse(request.params);
    if (!parsed.success) {
      this.fail(id, new ToolError("INVALID_PARAMS", describeIssues(parsed.error)));
      return;
    }

    const controller = new AbortController();
    const entry: Running = { controller, committing: false };
    this.running.set(key, entry);
    const timeoutMs = tool.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timer = setTimeout(() => controller.abort(new Aborted(`timeout after ${timeoutMs} ms`)), timeoutMs);
    const dryRun = tool.mutating && !request.approved;
    const ctx: ToolContext = {
      ws: this.ws,
      sessionId: request.session_id,
      callId: id,
      signal: controller.signal,
      dryRun,
      daemon: this,
      commit: async (step) => {
        if (controller.signal.aborted) throw new Aborted("aborted before commit");
        entry.committing = true;
        return step();
      },
    };

    try {
      const work = tool.run(parsed.data, ctx);
      const result = await raceAbort(work, controller.signal, entry);
      this.out.writeResult(id, finish(result, dryRun));
    } catch (e) {
      if (controller.signal.aborted && !entry.committing) {
        const timedOut = String((controller.signal.reason as Error)?.message ?? "").startsWith("timeout");
        this.fail(id, timedOut
          ? new ToolError("TIMEOUT", `${tool.id} took longer than ${timeoutMs} ms and was stopped; nothing it had not finished was changed. Narrow the request.`)
          : new ToolError("CANCELLED", `${tool.id} was cancelled; nothing it had not finished was changed.`));
      } else if (e instanceof ToolError) {
        this.fail(id, e);
      } else {
        this.ws.log(`INTERNAL in ${tool.id} (call ${JSON.stringify(id)}): ${e instanceof Error ? e.stack : String(e)}`);
        this.fail(id, new ToolError("INTERNAL", `${tool.id} failed unexpectedly (${e instanceof Error ? e.message : String(e)}). This is a fault in tool-layer, not in your request; retrying may help.`));
      }
    } finally {
      clearTimeout(timer);
      this.running.delete(key);
    }
  }

  private fail(callId: CallId | null, error: ToolError): void {
    this.out.write({ call_id: callId, success: false, result: { code: error.code, message: error.message, ...error.details } });
  }
}

function keyOf(id: CallId): string {
  return typeof id === "number" ? `n:${id}` : `s:${id}`;
}

/** Settles with the tool's result, or rejects the moment the call is aborted, unless it is committing: then it waits. */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal, entry: Running): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      if (entry.committing) return; // the step in progress finishes and answers for itself
      work.catch(() => undefined);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function finish(result: ToolResult, dryRun: boolean): ToolResult {
  const out: ToolResult = dryRun ? { ...result, dry_run: true } : result;
  // Pre-encoded text long enough to maybe need the cut below takes the plain path (rare: a window of 100,000+ bytes).
  if (out.text instanceof JsonText && out.text.maxLength > MAX_TEXT_CHARS) out.text = out.text.toString();
  if (typeof out.text === "string" && out.text.length > MAX_TEXT_CHARS) {
    const cut = out.text.lastIndexOf("\n", MAX_TEXT_CHARS);
    out.text = `${out.text.slice(0, cut > 0 ? cut : MAX_TEXT_CHARS)}\n… [output cut at ${MAX_TEXT_CHARS} characters; narrow the request to see the rest]`;
    out.truncated = true;
  }
  return out;
}

/** One clause per bad field, so a model can fix them all at once. */
function describeIssues(error: z.ZodError): string {
  const parts = error.issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") return issue.keys.map((k) => `${[...issue.path, k].join(".")}: unknown field`);
    const where = issue.path.length ? issue.path.join(".") : "params";
    return [`${where}: ${issue.message}`];
  });
  return `Invalid params: ${parts.join("; ")}.`;
}
