/**
 * On a 2025 connection a plain tools/call of a read-only built-in tool is answered without the SDK's per-request work
 * (McpStdioTransport.answerCallsWith, McpAdapter.directCall); `_meta` in the params sends the same call through the SDK.
 * The property: for seeded random calls (good and bad params, missing paths, paths outside the root, windows, other
 * read-only tools, mutating ones) both answers are the same bytes, the id aside. Then cancellation and the connection's
 * end, which a direct call must honour as the SDK does.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAIN } from "../../helpers/daemon.js";
import { descendants, processes, until, waitDead } from "../../helpers/process.js";
import { git, tmpWorkspace } from "../../helpers/tmp.js";
import { check } from "../../property/runs.js";

/** The daemon --mcp over raw lines: what it answers, by id, as the exact text of the line. */
class RawMcp {
  readonly child: ChildProcessWithoutNullStreams;
  private readonly answered = new Map<number, string>();
  private readonly waiting = new Map<number, (line: string) => void>();
  readonly exited: Promise<number | null>;

  constructor(root: string, state: string) {
    this.child = spawn(process.execPath, [MAIN, "--mcp", "--root", root, "--mcp-confirm", "none"], {
      env: { ...process.env, XDG_STATE_HOME: state, TOOL_LAYER_DEBUG_TOOLS: "1" },
    });
    this.child.stderr.resume();
    this.exited = new Promise((resolve) => this.child.once("exit", resolve));
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      const id = (JSON.parse(line) as { id?: unknown }).id;
      if (typeof id !== "number") return;
      this.answered.set(id, line);
      this.waiting.get(id)?.(line);
    });
  }

  send(message: object): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  }

  answer(id: number): Promise<string> {
    const line = this.answered.get(id);
    return line !== undefined ? Promise.resolve(line) : new Promise((resolve) => this.waiting.set(id, resolve));
  }

  has(id: number): boolean {
    return this.answered.has(id);
  }

  async request(id: number, method: string, params?: object): Promise<string> {
    this.send({ id, method, ...(params && { params }) });
    return this.answer(id);
  }
}

const FILES: Record<string, string> = {
  "a.txt": "one\ntwo\nthree\n",
  "src/long.ts": Array.from({ length: 400 }, (_, i) => `export const v${i} = ${i}; // line ${i + 1}`).join("\n"),
  "crlf.txt": "first\r\nsecond\r\n",
  "wide.txt": `${"é".repeat(30)}\n${"x".repeat(2500)}\n\tindented "quoted" \\ back\n`,
  "bin.dat": "\u0000\u0001binary",
  "nonl.txt": "no final newline",
};
const PATHS = [...Object.keys(FILES), "missing.txt", "../outside.txt", "/etc/passwd", "src", "", "src/../a.txt", "./a.txt"];

/** Arguments for a tool call: mostly good, some wrong in type or range, some with unknown keys. */
const anyValue = fc.oneof(fc.integer({ min: -3, max: 500 }), fc.string({ maxLength: 4 }), fc.boolean(), fc.constant(null), fc.constant([1]));
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
const fileRead = fc.record(
  {
    path: fc.oneof(fc.constantFrom(...PATHS), anyValue),
    offset: optional(fc.oneof(fc.integer({ min: 1, max: 420 }), anyValue)),
    limit: optional(fc.oneof(fc.integer({ min: 1, max: 300 }), anyValue)),
    lines: optional(fc.oneof(fc.array(fc.integer({ min: 1, max: 410 }), { minLength: 1, maxLength: 5 }), anyValue)),
    since: optional(fc.oneof(fc.constant("0123456789abcdef"), anyValue)),
    extra: optional(anyValue),
  },
  { requiredKeys: [] },
);
const call = fc.oneof(
  { weight: 6, arbitrary: fc.record({ name: fc.constant("file_read"), arguments: fileRead }) },
  {
    weight: 1,
    arbitrary: fc.record({
      name: fc.constant("search"),
      arguments: fc.record({ pattern: fc.oneof(fc.constantFrom("line 1", "v3", "é", "(", " ", "two"), anyValue) }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ name: fc.constant("find_file"), arguments: fc.record({ query: fc.oneof(fc.constantFrom("lon", "a", "txt", "zz"), anyValue) }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ name: fc.constant("list_dir"), arguments: fc.record({ path: fc.constantFrom("", "src", "missing", "../x", "a.txt") }) }),
  },
  { weight: 1, arbitrary: fc.constantFrom({ name: "git_status", arguments: {} }, { name: "git_log", arguments: { limit: 2 } }, { name: "git_status" }) },
  // Mutating (the SDK takes both), unknown, or not served: the direct path must leave them alone.
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { name: "file_write", arguments: { path: "a.txt", hash: "0000000000000000", content: "x\n", dry_run: true } },
      { name: "no_such_tool", arguments: {} },
      { name: "list", arguments: {} },
      { name: "file_read", arguments: [] },
      { name: 7, arguments: {} },
    ),
  },
);

describe("tool-layer --mcp: calls answered without the SDK", () => {
  const ws = tmpWorkspace({ git: true, files: FILES });
  const state = tmpWorkspace();
  let mcp: RawMcp;
  let id = 0;

  beforeAll(async () => {
    git(ws.dir, "add", "-A");
    git(ws.dir, "commit", "-qm", "initial");
    mcp = new RawMcp(ws.dir, state.dir);
    const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } };
    expect(JSON.parse(await mcp.request(++id, "initialize", init)).result.protocolVersion).toBe("2025-06-18");
    mcp.send({ method: "notifications/initialized" });
  });
  afterAll(async () => {
    mcp.child.stdin.end();
    await mcp.exited;
    ws.cleanup();
    state.cleanup();
  });

  /** The line without its id: last in a result (`{"result":...,"jsonrpc":"2.0","id":N}`), second in an error. */
  const withoutId = (line: string, n: number) => {
    if (line.endsWith(`,"id":${n}}`)) return `${line.slice(0, -`${n}}`.length)}_}`;
    const start = `{"jsonrpc":"2.0","id":${n},`;
    expect(line.startsWith(start), line).toBe(true);
    return `{"jsonrpc":"2.0","id":_,${line.slice(start.length)}`;
  };

  it("answers a random call with the same bytes as the SDK does", async () => {
    await check(
      fc.asyncProperty(call, async (params) => {
        const direct = ++id;
        const viaSdk = ++id;
        // Sent at once, so the two run side by side, as a client's calls do.
        mcp.send({ id: direct, method: "tools/call", params });
        mcp.send({ id: viaSdk, method: "tools/call", params: { ...params, _meta: {} } });
        const [a, b] = await Promise.all([mcp.answer(direct), mcp.answer(viaSdk)]);
        expect(withoutId(a, direct)).toBe(withoutId(b, viaSdk));
      }),
      150,
    );
  });

  it("answers a file window with its tagged lines and hash, through the direct path", async () => {
    const line = await mcp.request(++id, "tools/call", { name: "file_read", arguments: { path: "src/long.ts", offset: 3, limit: 2 } });
    const { result } = JSON.parse(line);
    expect(Object.keys(result)).toEqual(["content", "structuredContent"]);
    expect(result.content[0].text.split("\n").slice(1)).toEqual([expect.stringMatching(/^3\|[0-9A-F]{4} export const v2 = 2;/), expect.stringMatching(/^4\|/)]);
    expect(result.structuredContent.hash).toMatch(/^[0-9a-f]{16}$/);
  });

  it("a cancelled direct call is stopped and never answered; the connection goes on", async () => {
    const slow = ++id;
    mcp.send({ id: slow, method: "tools/call", params: { name: "debug_sleep", arguments: { ms: 1_800, pooled: true } } });
    const sleeping = await sleepUnder(mcp.child.pid!);
    mcp.send({ method: "notifications/cancelled", params: { requestId: slow, reason: "test" } });
    await waitDead(sleeping);
    // A call sent after the cancel that outlasts the cancelled one's own 1.8 s: had that one gone on, it would have
    // answered first.
    const after = ++id;
    const line = await mcp.request(after, "tools/call", { name: "debug_sleep", arguments: { ms: 1_900 } });
    expect(JSON.parse(line).result.structuredContent.slept).toBe(1_900);
    expect(mcp.has(slow)).toBe(false);
  });
});

describe("tool-layer --mcp: the end of the connection", () => {
  it("stops a direct call in flight when stdin closes, and exits", async () => {
    const ws = tmpWorkspace({ git: true, files: FILES });
    const state = tmpWorkspace();
    const mcp = new RawMcp(ws.dir, state.dir);
    try {
      const init = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } };
      await mcp.request(1, "initialize", init);
      mcp.send({ method: "notifications/initialized" });
      mcp.send({ id: 2, method: "tools/call", params: { name: "debug_sleep", arguments: { ms: 60_000, pooled: true } } });
      const sleeping = await sleepUnder(mcp.child.pid!);
      mcp.child.stdin.end();
      expect(await mcp.exited).toBe(0);
      await waitDead(sleeping);
      expect(mcp.has(2)).toBe(false);
    } finally {
      mcp.child.kill("SIGKILL");
      ws.cleanup();
      state.cleanup();
    }
  });
});

/** The pid of the `sleep` a pooled debug_sleep started under the daemon `pid`. */
async function sleepUnder(pid: number): Promise<number> {
  let found: number | undefined;
  await until(
    () => (found = processes().find((p) => descendants(pid).includes(p.pid) && /^sleep /.test(p.cmd))?.pid) !== undefined,
    "the pooled sleep to start",
  );
  return found!;
}
