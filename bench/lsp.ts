/**
 * Language servers through the daemon's lsp_* tools and through our client, against a bare vscode-jsonrpc client of the
 * same server with the same settings, in the same run: initialize, open -> first diagnostics, an edit on disk ->
 * diagnostics of it (the daemon: writeFileSync, then lsp_diagnostics; the bare client: didChange, then the server's
 * publish or pull), hover / definition / references, the daemon's first answer on a cold start, and memory (VmRSS of
 * the server and its children; the daemon's from info). `node dist/bench/lsp.js [rounds]`. Figures, not assertions.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type MessageConnection, StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node.js";
import { fileHash, initHash } from "../src/core/hash.js";
import { LspClient } from "../src/lsp/client.js";
import { type ServerSpec, pythonSpec, serverEnv, typescriptSpec } from "../src/lsp/servers.js";
import { CLIENT_CAPABILITIES } from "../src/lsp/session.js";
import { treeRss } from "../src/platform/process-tree.js";
import { BenchDaemon, fmt, latencies, median, report, timed, removeTree } from "./lib.js";

/** Warm requests per kind and round: enough for a stable median, few enough to keep a round under a few seconds. */
const REQUESTS = 20;
/** Edits per round, alternating fix and break: each waits for the diagnostics of its own content. */
const EDITS = 8;

interface Case {
  spec: () => ServerSpec;
  files: Record<string, string>;
  main: string;
  fixed: (text: string) => string;
  /** hover/definition/references target in main: line and identifier. */
  at: { line: number; symbol: string };
  languageId: string;
}

const CASES: Record<string, Case> = {
  typescript: {
    spec: typescriptSpec,
    files: {
      "tsconfig.json": JSON.stringify({
        compilerOptions: { strict: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", noEmit: true },
        include: ["src"],
      }),
      "src/math.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
      "src/main.ts": 'import { add as sum } from "./math.js";\nconst x: string = sum(1, 2);\nconsole.log(x, sum(3, 4));\n',
    },
    main: "src/main.ts",
    fixed: (t) => t.replace("const x: string", "const x: number"),
    at: { line: 2, symbol: "sum" },
    languageId: "typescript",
  },
  python: {
    spec: pythonSpec,
    files: {
      "util.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
      "main.py": "from util import add\nx: str = add(1, 2)\nprint(x)\n",
    },
    main: "main.py",
    fixed: (t) => t.replace("x: str", "x: int"),
    at: { line: 2, symbol: "add" },
    languageId: "python",
  },
};

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-bench-lsp-"));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

interface Figures {
  init: number;
  firstDiagnostics: number;
  /** Median of EDITS edits, each to the diagnostics of its content. */
  cleared: number;
  hover: number;
  definition: number;
  references: number;
  rss: number;
}

async function ours(c: Case, dir: string): Promise<Figures> {
  const client = new LspClient(c.spec(), { root: dir });
  const text = readFileSync(path.join(dir, c.main), "utf8");
  const doc = (t: string) => ({ path: c.main, text: t, hash: fileHash(Buffer.from(t)) });
  const [init] = await timed(() => client.start());
  const [firstDiagnostics, first] = await timed(() => client.diagnostics(doc(text), 60_000));
  if (first.status !== "current" || first.diagnostics.length !== 1) throw new Error(`ours: unexpected ${JSON.stringify(first)}`);
  const fixed = c.fixed(text);
  const edits: number[] = [];
  for (let i = 0; i < EDITS; i++) {
    const now = i % 2 ? text : fixed;
    const [ms, after] = await timed(() => {
      client.sync(c.main, now, fileHash(Buffer.from(now)));
      return client.diagnostics(doc(now), 60_000);
    });
    if (after.status !== "current" || after.diagnostics.length !== i % 2) throw new Error(`ours: unexpected ${JSON.stringify(after)}`);
    edits.push(ms);
  }
  const cleared = median(edits);
  const lat = async (fn: () => Promise<unknown>) => median(await latencies(fn, REQUESTS));
  const hover = await lat(() => client.hover(doc(fixed), c.at));
  const definition = await lat(() => client.definition(doc(fixed), c.at));
  const references = await lat(() => client.references(doc(fixed), c.at));
  const rss = client.rss() ?? 0;
  await client.stop();
  return { init, firstDiagnostics, cleared, hover, definition, references, rss };
}

/** The same server and settings over a bare connection: push for tsls (its only way), pull for pyright. */
async function bare(c: Case, dir: string): Promise<Figures> {
  const spec = c.spec();
  const started = performance.now(); // like ours, initialize counts from the spawn
  const child: ChildProcessWithoutNullStreams = spawn(spec.command, spec.args, {
    cwd: dir,
    env: serverEnv(spec, process.env, dir),
    stdio: "pipe",
    detached: true,
  });
  const conn: MessageConnection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const publishes: { diagnostics: unknown[] }[] = [];
  let onPublish = () => {};
  conn.onNotification("textDocument/publishDiagnostics", (p: { diagnostics: unknown[] }) => {
    publishes.push(p);
    onPublish();
  });
  conn.onRequest("workspace/configuration", (p: { items: { section?: string }[] }) =>
    p.items.map((i) => (i.section ? (spec.settings[i.section] ?? null) : null)),
  );
  conn.onRequest((_method: string) => null);
  conn.onNotification(() => {});
  conn.listen();
  const uri = (rel: string) => pathToFileURL(path.join(dir, rel)).href;
  await conn.sendRequest("initialize", {
    processId: process.pid,
    rootUri: pathToFileURL(dir).href,
    workspaceFolders: [{ uri: pathToFileURL(dir).href, name: "w" }],
    capabilities: CLIENT_CAPABILITIES,
    initializationOptions: spec.initializationOptions,
  });
  await conn.sendNotification("initialized", {});
  const init = performance.now() - started;
  const text = readFileSync(path.join(dir, c.main), "utf8");
  const pushed = (want: (n: number) => boolean) =>
    new Promise<void>((resolve) => {
      const from = publishes.length;
      onPublish = () => publishes.slice(from).some((p) => want(p.diagnostics.length)) && resolve();
    });
  const pull = async () => ((await conn.sendRequest("textDocument/diagnostic", { textDocument: { uri: uri(c.main) } })) as { items: unknown[] }).items.length;
  const push = spec.diagnostics === "tsserver";
  const [firstDiagnostics] = await timed(async () => {
    const got = push ? pushed((n) => n > 0) : undefined;
    await conn.sendNotification("textDocument/didOpen", { textDocument: { uri: uri(c.main), languageId: c.languageId, version: 1, text } });
    if (got) await got;
    else if ((await pull()) !== 1) throw new Error("bare: no error");
  });
  const fixed = c.fixed(text);
  const edits: number[] = [];
  for (let i = 0; i < EDITS; i++) {
    const want = i % 2;
    const [ms] = await timed(async () => {
      const got = push ? pushed((n) => n === want) : undefined;
      await conn.sendNotification("textDocument/didChange", {
        textDocument: { uri: uri(c.main), version: i + 2 },
        contentChanges: [{ text: want ? text : fixed }],
      });
      if (got) await got;
      else if ((await pull()) !== want) throw new Error("bare: unexpected diagnostics");
    });
    edits.push(ms);
  }
  const cleared = median(edits);
  const line = fixed.split("\n")[c.at.line - 1];
  const position = { line: c.at.line - 1, character: line.indexOf(c.at.symbol) };
  const lat = async (method: string, extra: object = {}) =>
    median(await latencies(() => conn.sendRequest(method, { textDocument: { uri: uri(c.main) }, position, ...extra }), REQUESTS));
  const hover = await lat("textDocument/hover");
  const definition = await lat("textDocument/definition");
  const references = await lat("textDocument/references", { context: { includeDeclaration: true } });
  const rss = treeRss(child.pid!);
  await conn.sendRequest("shutdown").catch(() => {});
  await conn.sendNotification("exit").catch(() => {});
  conn.dispose();
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    /* gone */
  }
  return { init, firstDiagnostics, cleared, hover, definition, references, rss };
}

interface DaemonFigures {
  /** A cold daemon: its first lsp_hover (sandbox probe, server start, project load). */
  coldHover: number;
  /** Then its first lsp_diagnostics of that file. */
  firstDiagnostics: number;
  edit: number;
  hover: number;
  definition: number;
  references: number;
  rss: number;
}

/** The lsp_* tools through the built daemon, as the Gateway calls them. */
async function daemon(c: Case, dir: string): Promise<DaemonFigures> {
  const d = new BenchDaemon(dir);
  await d.ready;
  const at = { path: c.main, ...c.at };
  const ok = (tool: string, params: Record<string, unknown>) => d.ok(tool, params);
  try {
    const [coldHover] = await timed(() => ok("lsp_hover", at));
    const [firstDiagnostics, first] = await timed(() => ok("lsp_diagnostics", { path: c.main, wait_ms: 60_000 }));
    if (first.status !== "current" || first.diagnostics.length !== 1) throw new Error(`daemon: unexpected ${JSON.stringify(first)}`);
    const text = readFileSync(path.join(dir, c.main), "utf8");
    const fixed = c.fixed(text);
    const edits: number[] = [];
    for (let i = 0; i < EDITS; i++) {
      const [ms, after] = await timed(() => {
        writeFileSync(path.join(dir, c.main), i % 2 ? text : fixed);
        return ok("lsp_diagnostics", { path: c.main, wait_ms: 60_000 });
      });
      if (after.status !== "current" || after.diagnostics.length !== i % 2) throw new Error(`daemon: unexpected ${JSON.stringify(after)}`);
      edits.push(ms);
    }
    // The watcher's events for the last edits and the checks they start: settled before the latency runs.
    await ok("lsp_diagnostics", { path: c.main, wait_ms: 60_000 });
    const lat = async (tool: string) => median(await latencies(() => ok(tool, at), REQUESTS));
    const hover = await lat("lsp_hover");
    const definition = await lat("lsp_definition");
    const references = await lat("lsp_references");
    const info = await ok("info", { tool_id: "lsp_hover" });
    const rss = info.state.servers.find((s: { language: string }) => s.language === c.spec().language).memory_bytes ?? 0;
    return { coldHover, firstDiagnostics, edit: median(edits), hover, definition, references, rss };
  } finally {
    await d.close();
  }
}

export default async function run(rounds = 3): Promise<void> {
  await initHash();
  for (const [name, c] of Object.entries(CASES)) {
    const mine: Figures[] = [];
    const theirs: Figures[] = [];
    const tools: DaemonFigures[] = [];
    for (let r = 0; r < rounds; r++) {
      // One server at a time, rotating which goes first, so none always meets a warmer disk cache.
      const order = ["ours", "bare", "daemon"];
      for (let i = 0; i < order.length; i++) {
        const who = order[(i + r) % order.length];
        const dir = project(c.files);
        try {
          if (who === "ours") mine.push(await ours(c, dir));
          else if (who === "bare") theirs.push(await bare(c, dir));
          else tools.push(await daemon(c, dir));
        } finally {
          removeTree(dir);
        }
      }
    }
    console.log(`\n### ${name} (${rounds} rounds, median; latencies: median of ${REQUESTS} warm requests, edits: median of ${EDITS})`);
    const m = (list: Figures[], k: keyof Figures) => median(list.map((f) => f[k]));
    const t = (k: keyof DaemonFigures) => median(tools.map((f) => f[k]));
    console.log("our client (src/lsp/client.ts, in process):");
    for (const [label, key] of [
      ["initialize", "init"],
      ["open -> first diagnostics (cold)", "firstDiagnostics"],
      ["edit -> its diagnostics", "cleared"],
      ["hover", "hover"],
      ["definition", "definition"],
      ["references", "references"],
    ] as const) {
      report(`  ${label}`, m(mine, key), m(theirs, key), "ms", "bare client");
    }
    console.log("through the daemon (lsp_* tools over JSON lines; servers sandboxed where bwrap works):");
    report(
      "  cold start -> first lsp_hover answer",
      t("coldHover"),
      m(theirs, "init") + m(theirs, "firstDiagnostics"),
      "ms",
      "bare init + open -> diagnostics",
    );
    report("  then first lsp_diagnostics", t("firstDiagnostics"), undefined, "ms");
    report("  writeFileSync -> lsp_diagnostics of it", t("edit"), m(theirs, "cleared"), "ms", "bare didChange -> publish/pull");
    for (const key of ["hover", "definition", "references"] as const) {
      const peer = m(theirs, key);
      const extra = t(key) - peer;
      console.log(`  ${`lsp_${key}`.padEnd(46)} ${fmt(t(key)).padStart(10)} ms  (bare ${fmt(peer)} ms, ${extra < 0 ? "-" : "+"}${fmt(Math.abs(extra))} ms)`);
    }
    const mib = (b: number) => fmt(b / 2 ** 20);
    console.log(
      `${"RSS, server and children".padEnd(48)} ${mib(m(mine, "rss")).padStart(10)} MiB (daemon's ${mib(t("rss"))} MiB, bare ${mib(m(theirs, "rss"))} MiB)`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await run(Number(process.argv[2] ?? 3));
