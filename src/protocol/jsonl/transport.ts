import type { Readable, Writable } from "node:stream";
import { RenderedWindow } from "../../core/line-tags.js";
import type { CallId, CallRequest, Dispatcher, Outcome } from "../../dispatch/dispatcher.js";
import { type FailureResult, errorText } from "../../dispatch/error-text.js";
import { ToolError } from "../../errors.js";
import type { EventBus, EventName } from "../../platform/bus.js";
import { STALE_SESSIONS_MAX } from "../../vfs/attribution.js";
import type { FsChange } from "../../vfs/events.js";
import { LineReader, LineWriter } from "./framing.js";
import { WindowLiterals } from "./json-text.js";

/**
 * Answers waiting to be written beyond this stop the reading of requests until the reader catches up: a Gateway that
 * stops reading stdout must not make the daemon buffer answers without bound (20,000 unread reads took 4.3 GB before).
 */
export const MAX_PENDING_OUTPUT_BYTES = 32 * 1024 * 1024;
/**
 * Requests dispatched per turn of the event loop; the rest wait for the next turn. A write of 10,000 requests arrives in
 * one read, and dispatching all of it at once made every cheap answer in one go, before stdout could drain or the young
 * garbage be collected: the daemon reached 495 MB. Between turns answers are written and the back-pressure is checked.
 */
export const REQUESTS_PER_TURN = 64;
/** Requests read but not yet dispatched beyond this stop the reading of stdin: the read-ahead is bounded too. */
export const MAX_WAITING_REQUESTS = 1_024;
/** Events other than fs.changed held while stdout is blocked; past this they are dropped and counted (SPEC 7). */
export const MAX_HELD_EVENTS = 1_000;
/** Changes per held `fs.changed` line when they are written out (as the pipeline chunks them). */
const HELD_CHANGES_PER_LINE = 1_000;

/** A request line once its envelope is valid: the call the dispatcher takes (`toolcall_id` read as `call_id`). */
type Envelope = CallRequest;

export interface JsonlOptions {
  /** The `ready` line's data, asked for when the daemon is ready. */
  readyData: () => Record<string, unknown>;
  /** stdin ended, or stdout is gone (EPIPE): the Gateway is gone, shut down. */
  onEnd: () => void;
}

/** The JSON-lines transport (SPEC 1-2, 7): framing, envelopes, answers (with the JSON-literal fast path) and events. */
export class JsonlTransport {
  private readonly writer: LineWriter;
  private readonly reader: LineReader;
  /** Lines read and not yet dispatched, in order (all of them until ready). */
  private readonly waiting: string[] = [];
  /** Dispatches left in this turn of the event loop. */
  private turnBudget = REQUESTS_PER_TURN;
  private nextTurnScheduled = false;
  private ready = false;
  private closing = false;
  /** Answers back up (over MAX_PENDING_OUTPUT_BYTES): no request is dispatched or read until they drain. */
  private outputBacked = false;
  private reading = true;
  /** stdin ended: the end is reported once every line read is dispatched. */
  private inputEnded = false;
  private endReported = false;
  private seq = 0;
  private readonly events: HeldEvents;
  private readonly literals = new WindowLiterals();
  private readonly unsubscribe: () => void;

  constructor(
    input: Readable,
    output: Writable,
    private readonly dispatcher: Dispatcher,
    bus: EventBus,
    private readonly options: JsonlOptions,
  ) {
    this.writer = new LineWriter(output, () => options.onEnd(), true);
    const inputEnd = () => {
      this.inputEnded = true;
      this.pump();
    };
    this.reader = new LineReader(
      input,
      (line) => this.handleLine(line),
      () => this.fail(null, new ToolError("PARSE_ERROR", "The request line is too long; send files in smaller pieces.")),
      inputEnd,
    );
    this.events = new HeldEvents();
    this.unsubscribe = bus.onAny((event, data) => this.event(event, data));
  }

  /** Says `ready` (the first line), then runs what arrived before. */
  start(): void {
    this.emitLine("ready", this.options.readyData());
    this.ready = true;
    this.pump();
  }

  /** No more requests are taken (calls in flight still answer); those already read are dispatched now. */
  stopReading(): void {
    this.closing = true;
    for (const line of this.waiting.splice(0)) this.dispatch(line);
  }

  /** Resolves once every line so far is handed to stdout; stops forwarding events. */
  async close(): Promise<void> {
    this.unsubscribe();
    this.flushEvents();
    await this.writer.idle();
  }

  private handleLine(line: string): void {
    if (this.closing || !line.trim()) return;
    this.waiting.push(line);
    this.pump();
  }

  /**
   * Dispatches waiting requests in order: at most REQUESTS_PER_TURN per turn of the event loop, none while answers back
   * up. Reads on while few wait; reports the end of input once the last line read is dispatched.
   */
  private pump(): void {
    while (this.ready && !this.outputBacked && this.turnBudget > 0 && this.waiting.length) {
      this.turnBudget--;
      this.dispatch(this.waiting.shift()!);
    }
    if (this.turnBudget < REQUESTS_PER_TURN && !this.nextTurnScheduled) {
      this.nextTurnScheduled = true;
      setImmediate(() => {
        this.nextTurnScheduled = false;
        this.turnBudget = REQUESTS_PER_TURN;
        this.pump();
      });
    }
    const read = !this.outputBacked && this.waiting.length < MAX_WAITING_REQUESTS;
    if (read !== this.reading) {
      this.reading = read;
      if (read) this.reader.resume();
      else this.reader.pause();
    }
    if (this.inputEnded && !this.waiting.length && !this.endReported) {
      this.endReported = true;
      this.options.onEnd();
    }
  }

  private dispatch(line: string): void {
    const request = this.parseEnvelope(line);
    if (!request) return;
    void this.dispatcher.call(request).then((outcome) => this.answer(request.call_id, outcome));
  }

  private answer(callId: CallId, outcome: Outcome): void {
    if (!outcome.success) {
      this.writer.write({ call_id: callId, success: false, result: withText(outcome.result) });
    } else {
      const { text, ...rest } = outcome.result;
      const literal = text instanceof RenderedWindow ? this.literals.of(text) : undefined;
      if (literal) this.writer.writeResult(callId, rest, literal);
      else this.writer.write({ call_id: callId, success: true, result: outcome.result });
    }
    this.applyBackpressure();
  }

  private applyBackpressure(): void {
    if (this.outputBacked || this.writer.pendingBytes <= MAX_PENDING_OUTPUT_BYTES) return;
    this.outputBacked = true;
    this.pump();
    const wait = async () => {
      while (!this.writer.isClosed && this.writer.pendingBytes > MAX_PENDING_OUTPUT_BYTES / 2) await this.writer.drained();
      this.outputBacked = false;
      this.pump();
    };
    void wait();
  }

  private fail(callId: CallId | null, error: ToolError): void {
    this.writer.write({ call_id: callId, success: false, result: withText({ code: error.code, message: error.message, ...error.details }) });
  }

  private event(event: EventName, data: unknown): void {
    if (!this.ready) return; // nothing before `ready` (SPEC 1); the watcher is not live before it either
    if (this.writer.isBlocked || this.events.size) {
      this.events.hold(event, data);
      void this.writer.drained().then(() => this.flushEvents());
      return;
    }
    this.emitLine(event, data);
  }

  private flushEvents(): void {
    if (this.writer.isBlocked) return;
    for (const { event, data, dropped } of this.events.take()) this.emitLine(event, data, dropped);
  }

  private emitLine(event: string, data: unknown, dropped = 0): void {
    this.writer.writeNow(dropped ? { event, seq: ++this.seq, dropped, data } : { event, seq: ++this.seq, data });
  }

  private parseEnvelope(line: string): Envelope | undefined {
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
    if (typeof id === "number" && Number.isFinite(id) && !Number.isSafeInteger(id)) {
      // JSON.parse already rounded it: answering with the rounded id would silently change it.
      this.fail(
        null,
        new ToolError(
          "INVALID_REQUEST",
          `toolcall_id ${unsafeIdText(line)} is not a safe integer (at most 2^53-1 in size), so it cannot be echoed exactly; send it as a string.`,
        ),
      );
      return undefined;
    }
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
      call_id: id,
      approved: (r.approved as boolean | undefined) ?? false,
      params: params as Record<string, unknown>,
    };
  }
}

/** A failure as answered: its fields, and `text` for a model that reads only that (as a success has). */
function withText(result: FailureResult): FailureResult {
  return { ...result, text: errorText(result) };
}

/** The toolcall_id as the caller wrote it (before JSON.parse rounded it), for the error message. */
function unsafeIdText(line: string): string {
  return /"toolcall_id"\s*:\s*(-?[0-9.eE+-]+)/.exec(line)?.[1] ?? "(a number)";
}

interface HeldEvent {
  event: EventName;
  data: unknown;
  dropped: number;
}

/**
 * Events held while stdout is blocked (SPEC 7): `fs.changed` entries merge per path (the latest state of each file, so
 * a flood costs one entry per file however long the reader stalls), the others queue up to MAX_HELD_EVENTS and the rest
 * are counted in `dropped` on the next line.
 */
class HeldEvents {
  private readonly changes = new Map<string, FsChange>();
  private others: HeldEvent[] = [];
  private dropped = 0;

  get size(): number {
    return this.changes.size + this.others.length + this.dropped;
  }

  hold(event: EventName, data: unknown): void {
    if (event === "fs.changed") {
      for (const c of (data as { changes: FsChange[] }).changes) this.changes.set(c.path, merge(this.changes.get(c.path), c));
      return;
    }
    if (this.others.length >= MAX_HELD_EVENTS) this.dropped++;
    else this.others.push({ event, data, dropped: 0 });
  }

  take(): HeldEvent[] {
    const out: HeldEvent[] = [];
    const changes = [...this.changes.values()];
    this.changes.clear();
    for (let i = 0; i < changes.length; i += HELD_CHANGES_PER_LINE) {
      out.push({ event: "fs.changed", data: { changes: changes.slice(i, i + HELD_CHANGES_PER_LINE) }, dropped: 0 });
    }
    out.push(...this.others);
    this.others = [];
    // Events are dropped only once MAX_HELD_EVENTS are held, so there is always a line to carry the count.
    if (this.dropped && out.length) {
      out[0].dropped = this.dropped;
      this.dropped = 0;
    }
    return out;
  }
}

/**
 * Two changes of one file while held: the net change, and every session that is stale for either, still bounded by
 * STALE_SESSIONS_MAX. The sessions either change left unnamed cannot be told apart, so `stale_sessions_omitted` is the
 * least the truth can be.
 */
function merge(before: FsChange | undefined, after: FsChange): FsChange {
  if (!before) return after;
  let kind = after.kind;
  if (before.kind === "created" && after.kind !== "deleted") kind = "created";
  else if (before.kind === "deleted" && after.kind === "created") kind = "modified";
  const named = [...new Set([...before.stale_sessions, ...after.stale_sessions])].sort();
  const unnamed = Math.max(before.stale_sessions_omitted ?? 0, after.stale_sessions_omitted ?? 0);
  const omitted = Math.max(0, named.length - STALE_SESSIONS_MAX) + unnamed;
  const { stale_sessions_omitted: _, ...rest } = after;
  return { ...rest, kind, stale_sessions: named.slice(0, STALE_SESSIONS_MAX), ...(omitted ? { stale_sessions_omitted: omitted } : {}) };
}
