/**
 * The daemon built in the test process (no spawn) on a real root, with both transports connected over in-memory
 * streams: JSON lines (SPEC 1-2) and MCP (SPEC 13), each to the same dispatcher and services. For tests of the wiring
 * (what reaches what, what two daemons share); the e2e tests spawn the built daemon instead (helpers/daemon.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { Daemon, type DaemonOptions } from "../../src/daemon.js";
import type { CallRequest, Outcome } from "../../src/dispatch/dispatcher.js";
import { serveMcp } from "../../src/protocol/mcp/serve.js";
import { JsonlTransport } from "../../src/protocol/jsonl/transport.js";

type Json = Record<string, unknown>;

/** Newline-delimited JSON read off a stream, each message handed to whoever waits for it. */
class LineInbox {
  readonly messages: Json[] = [];
  private readonly waiters = new Set<{ match: (m: Json) => boolean; resolve: (m: Json) => void }>();
  private rest = "";

  constructor(stream: PassThrough) {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      const lines = (this.rest + chunk).split("\n");
      this.rest = lines.pop()!;
      for (const line of lines) if (line.trim()) this.take(JSON.parse(line) as Json);
    });
  }

  /** The first message (already here or still to come) `match` accepts. */
  waitFor(match: (m: Json) => boolean): Promise<Json> {
    const seen = this.messages.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.add({ match, resolve }));
  }

  private take(message: Json): void {
    this.messages.push(message);
    for (const w of this.waiters) {
      if (!w.match(message)) continue;
      this.waiters.delete(w);
      w.resolve(message);
    }
  }
}

/** A JSON-lines client: requests as the Gateway frames them, answers by call id. */
export class JsonlClient {
  private readonly input = new PassThrough();
  private readonly output = new PassThrough();
  readonly inbox = new LineInbox(this.output);
  readonly transport: JsonlTransport;

  constructor(daemon: Daemon) {
    this.transport = new JsonlTransport(this.input, this.output, daemon.dispatcher, daemon.bus, {
      readyData: () => ({ in_process: true }),
      onEnd: () => undefined,
    });
    this.transport.start();
  }

  /** Sends the requests in one write (so they are read in this order), and resolves with each one's answer. */
  send(...requests: { tool_id: string; id: string | number; params?: Json; approved?: boolean; session?: string }[]): Promise<Json[]> {
    const lines = requests.map((r) =>
      JSON.stringify({ tool_id: r.tool_id, session_id: r.session ?? "s1", toolcall_id: r.id, approved: r.approved ?? true, params: r.params ?? {} }),
    );
    this.input.write(`${lines.join("\n")}\n`);
    return Promise.all(requests.map((r) => this.inbox.waitFor((m) => m.call_id === r.id && "success" in m)));
  }

  async call(tool_id: string, params: Json = {}, opts: { approved?: boolean; id?: string } = {}): Promise<Json> {
    const [answer] = await this.send({ tool_id, id: opts.id ?? `c${++calls}`, params, approved: opts.approved });
    return answer;
  }

  async close(): Promise<void> {
    this.transport.stopReading();
    await this.transport.close();
  }
}

let calls = 0;

/** An MCP client speaking JSON-RPC lines: initialize, then tools/call and notifications. */
export class McpClient {
  private readonly input = new PassThrough();
  private readonly output = new PassThrough();
  readonly inbox = new LineInbox(this.output);
  private server?: { close(): Promise<void> };
  private nextId = 0;

  constructor(private readonly daemon: Daemon) {}

  /** Serves MCP as `--mcp` does (both revisions, the default --mcp-confirm) and opens a 2025 session. */
  async connect(): Promise<void> {
    const d = this.daemon;
    this.server = serveMcp(d.dispatcher, d.registry, d.ws, d.bus, this.input, this.output, {
      version: "in-process",
      confirm: "destructive",
      onEnd: () => undefined,
    });
    await this.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "in-process", version: "0" } });
    this.notify("notifications/initialized");
  }

  /** Sends a request and returns its id and its answer (a `result` or an `error`). */
  send(method: string, params: Json = {}): { id: number; answer: Promise<Json> } {
    const id = ++this.nextId;
    this.input.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return { id, answer: this.inbox.waitFor((m) => m.id === id) };
  }

  request(method: string, params: Json = {}): Promise<Json> {
    return this.send(method, params).answer;
  }

  notify(method: string, params: Json = {}): void {
    this.input.write(`${JSON.stringify({ jsonrpc: "2.0", method, params })}\n`);
  }

  /** tools/call's result: `content`, `structuredContent` and, for an error, `isError`. */
  async callTool(name: string, args: Json = {}): Promise<{ isError?: boolean; content: { text: string }[]; structuredContent: Json }> {
    const answer = await this.request("tools/call", { name, arguments: args });
    return answer.result as never;
  }

  async close(): Promise<void> {
    await this.server?.close();
  }
}

export interface Dispatched {
  request: CallRequest;
  outcome: Promise<Outcome>;
}

export interface InProcess {
  daemon: Daemon;
  jsonl: JsonlClient;
  mcp: McpClient;
  /**
   * The first call the dispatcher took that `match` accepts (already taken or still to come), with its outcome: the
   * MCP transport sends no answer for a cancelled call, so this is where its CANCELLED shows.
   */
  dispatched(match: (request: CallRequest) => boolean): Promise<Dispatched>;
  stop(): Promise<void>;
}

/**
 * Builds a daemon on `root` in this process, starts its services (watcher, git, terminal probe) and connects a
 * JSON-lines and an MCP client to it. Its state folder is a temp folder of its own, removed by `stop`.
 */
export async function inProcessDaemon(root: string, options: Partial<DaemonOptions> = {}): Promise<InProcess> {
  const stateDir = mkdtempSync(path.join(tmpdir(), "tool-layer-state-"));
  const daemon = new Daemon({ root, version: "in-process", stateDir, codegraph: "off", ...options }, () => undefined);
  const taken: Dispatched[] = [];
  const waiting = new Set<{ match: (r: CallRequest) => boolean; resolve: (d: Dispatched) => void }>();
  // Observes the real dispatcher (it still does all the work): which calls it took, and what it answered.
  const call = daemon.dispatcher.call.bind(daemon.dispatcher);
  daemon.dispatcher.call = (request) => {
    const outcome = call(request);
    const dispatched = { request, outcome };
    taken.push(dispatched);
    for (const w of waiting) if (w.match(request)) waiting.delete(w), w.resolve(dispatched);
    return outcome;
  };
  const dispatched = (match: (r: CallRequest) => boolean) =>
    new Promise<Dispatched>((resolve) => {
      const seen = taken.find((d) => match(d.request));
      if (seen) resolve(seen);
      else waiting.add({ match, resolve });
    });
  await daemon.start();
  const jsonl = new JsonlClient(daemon);
  const mcp = new McpClient(daemon);
  await mcp.connect();
  return {
    daemon,
    jsonl,
    mcp,
    dispatched,
    async stop() {
      await daemon.stop();
      await jsonl.close();
      await mcp.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
