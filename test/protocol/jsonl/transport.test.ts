import { PassThrough, Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { Dispatcher } from "../../../src/dispatch/dispatcher.js";
import { Registry } from "../../../src/dispatch/registry.js";
import { EventBus } from "../../../src/platform/bus.js";
import { Supervisor } from "../../../src/platform/supervisor.js";
import { JsonlTransport, MAX_HELD_EVENTS } from "../../../src/protocol/jsonl/transport.js";
import { STALE_SESSIONS_MAX } from "../../../src/vfs/attribution.js";
import type { FsChange } from "../../../src/vfs/events.js";
import { TOOLS } from "../../../src/tools/index.js";
import { workspaceServices } from "../../../src/dispatch/services.js";
import { Workspace } from "../../../src/workspace.js";
import { tmpWorkspace } from "../../helpers/tmp.js";

/** A stdout that refuses everything until opened, then takes lines as they come. */
class Gate extends Writable {
  readonly lines: any[] = [];
  private open = false;
  private waiting: (() => void)[] = [];
  private onLine?: () => void;
  constructor() {
    super({ highWaterMark: 16 });
  }
  /** Resolves once `n` lines have been written. */
  linesWritten(n: number): Promise<void> {
    return new Promise((resolve) => {
      this.onLine = () => this.lines.length >= n && resolve();
      this.onLine();
    });
  }
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    for (const l of chunk.toString().split("\n").filter(Boolean)) this.lines.push(JSON.parse(l));
    this.onLine?.();
    if (this.open) done();
    else this.waiting.push(done);
  }
  release(): void {
    this.open = true;
    for (const w of this.waiting.splice(0)) w();
  }
}

describe("the JSON-lines transport, in process", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function setup() {
    const tmp = tmpWorkspace();
    cleanups.push(tmp.cleanup);
    const bus = new EventBus();
    const processes = new Supervisor();
    cleanups.push(() => processes.stop());
    const ws = new Workspace({ root: tmp.dir }, processes, bus, () => undefined);
    const dispatcher = new Dispatcher(new Registry(TOOLS, undefined, bus), workspaceServices(ws));
    const input = new PassThrough();
    const output = new Gate();
    let ended = 0;
    const transport = new JsonlTransport(input, output, dispatcher, bus, { readyData: () => ({ ok: true }), onEnd: () => ended++ });
    return { bus, input, output, transport, ended: () => ended };
  }

  it("holds events while stdout is blocked: fs.changed merged per path, the rest bounded with a dropped count", async () => {
    const { bus, output, transport } = setup();
    transport.start(); // ready is written and not taken: stdout is blocked from here on
    const change = (path: string, kind: FsChange["kind"], stale: string[] = []): FsChange => ({
      path,
      kind,
      hash: null,
      origin: "external" as const,
      by: null,
      tool: null,
      stale_sessions: stale,
    });
    bus.emit("fs.changed", { changes: [change("a.txt", "created", ["s1"])] });
    bus.emit("fs.changed", { changes: [change("a.txt", "modified", ["s2"]), change("b.txt", "deleted")] });
    bus.emit("fs.changed", { changes: [change("b.txt", "created")] });
    for (let i = 0; i < MAX_HELD_EVENTS + 5; i++) bus.emit("vfs.state", { live: i % 2 === 0, reason: `r${i}` });
    output.release();
    await transport.close();
    const [ready, fs, ...rest] = output.lines;
    expect(ready).toMatchObject({ event: "ready", seq: 1 });
    expect(fs).toMatchObject({ event: "fs.changed", seq: 2, dropped: 5 });
    expect(fs.data.changes).toEqual([{ ...change("a.txt", "created"), stale_sessions: ["s1", "s2"] }, change("b.txt", "modified")]);
    expect(rest).toHaveLength(MAX_HELD_EVENTS);
    expect(rest.map((l) => l.seq)).toEqual(rest.map((_, i) => i + 3));
  });

  it("a held file's merged stale_sessions stay bounded, the rest counted in stale_sessions_omitted", async () => {
    const { bus, output, transport } = setup();
    transport.start();
    const sessions = (from: number, n: number) => Array.from({ length: n }, (_, i) => `s${String(from + i).padStart(3, "0")}`);
    const change = (kind: "created" | "modified", stale: string[], omitted?: number) => ({
      path: "a.txt",
      kind,
      hash: null,
      origin: "external" as const,
      by: null,
      tool: null,
      stale_sessions: stale,
      ...(omitted ? { stale_sessions_omitted: omitted } : {}),
    });
    bus.emit("fs.changed", { changes: [change("modified", sessions(0, STALE_SESSIONS_MAX), 5)] });
    bus.emit("fs.changed", { changes: [change("modified", sessions(STALE_SESSIONS_MAX, 10))] });
    output.release();
    await transport.close();
    const [merged] = output.lines[1].data.changes;
    expect(merged.stale_sessions).toEqual(sessions(0, STALE_SESSIONS_MAX));
    expect(merged.stale_sessions_omitted).toBe(10 + 5);
  });

  it("queues requests that arrive before ready, and answers them after it", async () => {
    const { input, output, transport } = setup();
    input.write('{"tool_id":"list","session_id":"s","toolcall_id":"early"}\n');
    output.release();
    await new Promise((r) => setImmediate(r));
    expect(output.lines).toEqual([]);
    transport.start();
    await output.linesWritten(2);
    expect(output.lines.map((l) => l.event ?? l.call_id)).toEqual(["ready", "early"]);
    await transport.close();
  });

  it("a stdout error is the end of the connection, never a crash", async () => {
    const { output, transport, ended } = setup();
    transport.start();
    output.destroy(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    await new Promise((r) => setImmediate(r));
    expect(ended()).toBe(1);
    await transport.close();
  });
});
