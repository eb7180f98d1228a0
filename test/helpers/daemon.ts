import { afterAll, beforeAll } from "vitest";
import { ToolLayerClient } from "../../src/client/index.js";
import { builtMain } from "./built.js";

/**
 * The built daemon; importing this module fails when dist/ is older than src/ (built.ts). The client's own default is
 * the main.js beside it, which from src/ (as vitest runs it) is not built.
 */
export const MAIN = builtMain();

export interface Response {
  call_id: string | number | null;
  success: boolean;
  result: Record<string, any>;
}
export interface EventLine {
  event: string;
  /** SPEC: every event line is numbered, one more each time. */
  seq: number;
  data: any;
}

/**
 * The built daemon over real pipes, spoken to as the Gateway does: a thin layer over the package's client
 * (src/client/), so every end-to-end test exercises it. It adds what tests need: every stdout line kept, waitFor over
 * them, the whole stderr, and calls approved unless a test says otherwise.
 */
export class DaemonClient {
  readonly client: ToolLayerClient;
  readonly lines: any[] = [];
  readonly events: EventLine[] = [];
  stderr = "";
  private nextId = 1;
  private readonly lineWaiters: { test: (l: any) => boolean; resolve: (l: any) => void }[] = [];

  constructor(root: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
    // No language server starts unasked (--lsp-warm off) unless a test says otherwise: most fixtures have a package.json.
    const warm = args.some((a) => a === "--lsp-warm" || a.startsWith("--lsp-warm=")) ? [] : ["--lsp-warm", "off"];
    this.client = new ToolLayerClient({
      root,
      args: [...warm, ...args],
      env,
      command: [process.execPath, MAIN],
      onBadLine: (line) => {
        throw new Error(`stdout line is not JSON: ${line.slice(0, 200)}`); // fails the test loudly
      },
    });
    this.client.child.stderr.on("data", (d: string) => (this.stderr += d));
    this.client.onLine((msg) => {
      this.lines.push(msg);
      if ("event" in msg) this.events.push(msg);
      for (const w of [...this.lineWaiters]) {
        if (w.test(msg)) {
          this.lineWaiters.splice(this.lineWaiters.indexOf(w), 1);
          w.resolve(msg);
        }
      }
    });
  }

  get child() {
    return this.client.child;
  }

  get exited() {
    return this.client.exited;
  }

  /** Resolves with the first stdout line (already seen or future) that passes `test`. */
  waitFor(test: (line: any) => boolean, timeoutMs = 10_000): Promise<any> {
    const seen = this.lines.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching line within ${timeoutMs} ms; stderr: ${this.stderr}`)), timeoutMs);
      this.lineWaiters.push({ test, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  }

  ready(): Promise<EventLine> {
    return this.waitFor((l) => l.event === "ready", 20_000);
  }

  sendRaw(text: string): void {
    this.client.send(text);
  }

  /** Sends one call and resolves with its response. */
  call(tool_id: string, params: Record<string, unknown> = {}, opts: { session?: string; approved?: boolean; id?: string | number } = {}): Promise<Response> {
    return this.answer(this.client.request(tool_id, params, { session: opts.session, approved: opts.approved ?? true, id: opts.id ?? this.nextId++ }));
  }

  /** Sends every call in one write (as a Gateway flushing a backlog does) and resolves with their responses, in call order. */
  burst(calls: { tool_id: string; params?: Record<string, unknown>; session?: string }[]): Promise<Response[]> {
    const ids = calls.map(() => this.nextId++);
    const answers = ids.map((id) => this.answer(this.client.expect(id)));
    const lines = calls.map((c, i) =>
      JSON.stringify({ tool_id: c.tool_id, session_id: c.session ?? "s1", toolcall_id: ids[i], approved: true, params: c.params ?? {} }),
    );
    this.sendRaw(`${lines.join("\n")}\n`);
    return Promise.all(answers);
  }

  /** Like call, but throws unless it succeeded; returns the result. */
  async ok(tool_id: string, params: Record<string, unknown> = {}, opts: { session?: string; approved?: boolean } = {}): Promise<any> {
    const r = await this.call(tool_id, params, opts);
    if (!r.success) throw new Error(`${tool_id} failed: ${JSON.stringify(r.result)}`);
    return r.result;
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /** A call the daemon's death leaves unanswered rejects; a test that kills it need not await every call it sent. */
  private answer(answer: Promise<Response>): Promise<Response> {
    answer.catch(() => undefined);
    return answer;
  }
}

export async function startDaemon(root: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<DaemonClient> {
  const d = new DaemonClient(root, args, env);
  await d.ready();
  return d;
}

/**
 * The daemon on `ws` for the tests of one file or describe: started before them, stopped (and `ws` removed) after.
 * `set` receives the client, so tests keep a plain `d` variable.
 */
export function daemonForSuite(
  ws: { dir: string; cleanup: () => void },
  set: (d: DaemonClient) => void,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): void {
  let client: DaemonClient | undefined;
  beforeAll(async () => {
    client = await startDaemon(ws.dir, args, env);
    set(client);
  });
  afterAll(async () => {
    await client?.close();
    ws.cleanup();
  });
}

/** The rendered lines of a file_read or file_write `text`, after its header line (which must be there: SPEC 5). */
export function bodyLines(text: string): string[] {
  const [header, ...lines] = text.split("\n");
  if (!header.startsWith("file ")) throw new Error(`text has no header line: ${JSON.stringify(text.slice(0, 200))}`);
  return lines;
}
