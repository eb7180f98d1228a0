/**
 * `tool-layer/client`: the daemon spawned and spoken to as a Gateway does (docs/client.md). Calls are typed per built-in
 * tool from the registry's zod schemas; events come as an async iterator. Nothing of the daemon is loaded here: the
 * types are imported as types only, so a Gateway's process stays small.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { BuiltinToolId, ErrorResult, EventData, EventLine, ToolParams, ToolResult } from "../protocol/schema/index.js";

export type { BuiltinToolId, ErrorResult, EventData, EventLine, ToolParams, ToolResult };

/** The built daemon beside this module (dist/src/main.js). */
export const DAEMON_MAIN = fileURLToPath(new URL("../main.js", import.meta.url));

export type CallId = string | number;

export type Answer<R> = { call_id: CallId; success: true; result: R } | { call_id: CallId | null; success: false; result: ErrorResult };

export interface SpawnOptions {
  /** The workspace (`--root`). */
  root: string;
  /** More flags (README's table). */
  args?: string[];
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** The daemon's working directory (a relative root is taken from it); default this process's. */
  cwd?: string;
  /** The program and its first arguments; default this Node running DAEMON_MAIN. */
  command?: [string, ...string[]];
  /** The session calls use unless they name one; default "s1". */
  session?: string;
  /** A stdout line that is not a JSON object breaks the protocol; default: it is dropped and counted in `badLines`. */
  onBadLine?: (line: string) => void;
}

export interface CallOptions {
  session?: string;
  /** Default false: a mutating tool then runs as a dry run and returns a preview with its preview_id. */
  approved?: boolean;
  /** The toolcall_id; default the next number. */
  id?: CallId;
  /** Aborting it sends `cancel` for this call, which then answers CANCELLED. */
  signal?: AbortSignal;
}

/** `ok()`'s failure: the error result's code and message, and the whole result. */
export class ToolCallError extends Error {
  readonly code: ErrorResult["code"];
  constructor(
    readonly toolId: string,
    readonly result: ErrorResult,
  ) {
    super(`${toolId} failed: ${result.code}: ${result.message}`);
    this.code = result.code;
  }
}

/** A line parsed from stdout: an answer or an event. */
export type StdoutLine = EventLine | Answer<Record<string, unknown>>;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Bytes of stderr kept for error messages (the rest is the caller's to read from `child.stderr`). */
const STDERR_TAIL_CHARS = 8_192;

/** Params may be left out when the tool has no required one. */
// biome-ignore lint/complexity/noBannedTypes: `{} extends T` holds exactly when T has no required property
type Params<K extends BuiltinToolId> = {} extends ToolParams<K> ? [params?: ToolParams<K>, opts?: CallOptions] : [params: ToolParams<K>, opts?: CallOptions];

export class ToolLayerClient {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves when the daemon has exited (never rejects). */
  readonly exited: Promise<Exit>;
  /** The last few kilobytes of stderr (the daemon's log). */
  stderrTail = "";
  badLines = 0;
  private readonly session: string;
  private nextId = 1;
  private readonly pending = new Map<string, { resolve: (a: Answer<Record<string, unknown>>) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Set<(line: StdoutLine) => void>();
  private readonly readyLine: Promise<EventData["ready"]>;
  private exit: Exit | undefined;

  /** Spawns the daemon; `ready()` resolves once it can take calls (calls sent before are queued by the daemon). */
  constructor(options: SpawnOptions) {
    const [cmd, ...first] = options.command ?? [process.execPath, DAEMON_MAIN];
    this.session = options.session ?? "s1";
    this.child = spawn(cmd, [...first, "--root", options.root, ...(options.args ?? [])], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: "pipe",
    });
    this.child.stderr.setEncoding("utf8").on("data", (d: string) => (this.stderrTail = (this.stderrTail + d).slice(-STDERR_TAIL_CHARS)));
    this.child.stdin.on("error", () => undefined); // EPIPE once the daemon is gone: its exit says why
    this.exited = new Promise((resolve) => {
      const done = (exit: Exit) => {
        if (this.exit) return;
        this.exit = exit;
        const gone = new Error(`the daemon exited (${exit.code ?? exit.signal}) before answering; stderr: ${this.stderrTail}`);
        for (const p of this.pending.values()) p.reject(gone);
        this.pending.clear();
        resolve(exit);
      };
      // "close", not "exit": it comes after stdout's end, so every line the daemon wrote has been handled by then.
      this.child.on("close", (code, signal) => done({ code, signal }));
      this.child.on("error", (e) => ((this.stderrTail += `\n${e.message}`), done({ code: null, signal: null })));
    });
    this.readyLine = new Promise((resolve, reject) => {
      const off = this.onLine((line) => {
        if ("event" in line && line.event === "ready") off(), resolve(line.data);
      });
      void this.exited.then((exit) => reject(new Error(`the daemon exited (${exit.code ?? exit.signal}) before ready; stderr: ${this.stderrTail}`)));
    });
    this.readyLine.catch(() => undefined); // awaited by ready(); a daemon that is only spawned to fail is not an error here
    // Lines split as the bytes come, in the data handler itself, so none is handled after stdout's close.
    let rest = "";
    this.child.stdout
      .setEncoding("utf8")
      .on("data", (chunk: string) => {
        const lines = (rest + chunk).split("\n");
        rest = lines.pop() ?? "";
        for (const text of lines) this.handle(text, options.onBadLine);
      })
      .on("end", () => rest && this.handle(rest, options.onBadLine));
  }

  /** Spawns the daemon and waits for `ready`. */
  static async start(options: SpawnOptions): Promise<ToolLayerClient> {
    const client = new ToolLayerClient(options);
    await client.ready();
    return client;
  }

  /** The `ready` line's data: version, root, number of tools. Rejects if the daemon exits first. */
  ready(): Promise<EventData["ready"]> {
    return this.readyLine;
  }

  /** Calls a built-in tool; the answer's result is typed by the tool. */
  call<K extends BuiltinToolId>(tool: K, ...[params, opts]: Params<K>): Promise<Answer<ToolResult<K>>> {
    return this.request(tool, (params ?? {}) as Record<string, unknown>, opts) as Promise<Answer<ToolResult<K>>>;
  }

  /** Like call, but resolves with the result and throws ToolCallError on a failure. */
  async ok<K extends BuiltinToolId>(tool: K, ...[params, opts]: Params<K>): Promise<ToolResult<K>> {
    const answer = await this.request(tool, (params ?? {}) as Record<string, unknown>, opts);
    if (!answer.success) throw new ToolCallError(tool, answer.result);
    return answer.result as ToolResult<K>;
  }

  /** Calls any tool by id, a passthrough server's included, untyped. */
  request(toolId: string, params: Record<string, unknown> = {}, opts: CallOptions = {}): Promise<Answer<Record<string, unknown>>> {
    const id = opts.id ?? this.nextId++;
    const answer = this.expect(id);
    this.send({ tool_id: toolId, session_id: opts.session ?? this.session, toolcall_id: id, approved: opts.approved ?? false, params });
    const signal = opts.signal;
    if (signal) {
      const cancel = () => void this.cancel(id).catch(() => undefined);
      if (signal.aborted) cancel();
      else {
        signal.addEventListener("abort", cancel, { once: true });
        void answer.then(
          () => signal.removeEventListener("abort", cancel),
          () => signal.removeEventListener("abort", cancel),
        );
      }
    }
    return answer;
  }

  /** The answer to `id` when it comes (for a request written with `send`); rejects if the daemon exits first. */
  expect(id: CallId): Promise<Answer<Record<string, unknown>>> {
    if (this.exit) return Promise.reject(new Error(`the daemon has exited (${this.exit.code ?? this.exit.signal})`));
    return new Promise((resolve, reject) => this.pending.set(JSON.stringify(id), { resolve, reject }));
  }

  /** Writes request lines as they are: an object, or raw text the caller frames itself. */
  send(request: Record<string, unknown> | string): void {
    this.child.stdin.write(typeof request === "string" ? request : `${JSON.stringify(request)}\n`);
  }

  /** Cancels a call still running (SPEC 2); true if it was. */
  async cancel(callId: CallId, opts: { session?: string } = {}): Promise<boolean> {
    return (await this.ok("cancel", { call_id: callId }, { session: opts.session })).cancelled;
  }

  /** Ends a session: the daemon forgets what it saw, so it leaves every stale_sessions list. */
  endSession(session: string = this.session): Promise<ToolResult<"session_end">> {
    return this.ok("session_end", {}, { session });
  }

  /** Every stdout line from now on, answers included; returns the unsubscribe. */
  onLine(listener: (line: StdoutLine) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The events pushed from now on (`fs.changed`, `git.changed`, …), in order, until the daemon exits or the loop stops.
   * Events wait for the loop, unbounded: a loop that stops reading should `break`.
   */
  events(): AsyncIterableIterator<EventLine> {
    const queue: EventLine[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    const off = this.onLine((line) => {
      if ("event" in line) queue.push(line), wake?.();
    });
    const end = () => ((ended = true), off(), wake?.());
    void this.exited.then(end);
    const iterator: AsyncIterableIterator<EventLine> = {
      async next() {
        while (!queue.length && !ended) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        const value = queue.shift();
        return value ? { value, done: false } : { value: undefined, done: true };
      },
      async return() {
        end();
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }

  /** Shuts the daemon down as the protocol says (stdin closed: calls in flight finish, children stop) and waits for it. */
  close(): Promise<Exit> {
    if (!this.exit) this.child.stdin.end();
    return this.exited;
  }

  /** Sends a signal (SIGTERM: the same clean shutdown as close). */
  kill(signal: NodeJS.Signals = "SIGTERM"): Promise<Exit> {
    if (!this.exit) this.child.kill(signal);
    return this.exited;
  }

  private handle(text: string, onBadLine: ((line: string) => void) | undefined): void {
    let line: StdoutLine | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) line = parsed as StdoutLine;
    } catch {
      // not JSON: counted below
    }
    if (!line) {
      this.badLines++;
      onBadLine?.(text);
      return;
    }
    if (!("event" in line)) {
      const key = JSON.stringify(line.call_id);
      const waiter = this.pending.get(key);
      this.pending.delete(key);
      waiter?.resolve(line);
    }
    for (const listener of [...this.listeners]) listener(line);
  }
}
