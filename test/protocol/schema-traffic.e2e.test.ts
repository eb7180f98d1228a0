/**
 * The JSON Schema files in schemas/ against real traffic: one session of the real daemon that uses every tool family
 * (files, search, git, lsp, terminal, mcp servers, info/list) and makes every event kind happen, each line validated by
 * ajv (draft 2020-12) against the files as they are shipped. Recorded live, so the recording cannot go stale.
 */
import { mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_DATA } from "../../src/protocol/schema/events.js";
import { TOOLS } from "../../src/tools/index.js";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";
import { FIXTURE_SERVER } from "../mcp/helpers.js";

const SCHEMAS = fileURLToPath(new URL("../../schemas/", import.meta.url));
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020; // a CommonJS default export

const ajv = addFormats(new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true }));
const load = (rel: string): ValidateFunction => ajv.compile(JSON.parse(readFileSync(path.join(SCHEMAS, rel), "utf8")));
const request = load("request.schema.json");
const answer = load("answer.schema.json");
const event = load("event.schema.json");
const params = new Map<string, ValidateFunction>();
const results = new Map<string, ValidateFunction>();
for (const file of readdirSync(path.join(SCHEMAS, "tools"))) {
  const [id, kind] = file.split(".");
  (kind === "params" ? params : results).set(id, load(`tools/${file}`));
}

/** Every problem of one line, or [] when it is valid: the envelope, then the tool's own result. */
function problems(line: any, toolOf: (id: unknown) => string | undefined): string[] {
  const check = (validate: ValidateFunction, value: unknown, what: string) =>
    validate(value) ? [] : [`${what}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 300)}`];
  if ("event" in line) return check(event, line, `event ${line.event}`);
  const envelope = check(answer, line, "answer");
  const tool = toolOf(line.call_id);
  if (envelope.length || !line.success || !tool || !results.has(tool)) return envelope;
  return check(results.get(tool)!, line.result, `${tool} result`);
}

const PROJECT = {
  "tsconfig.json": JSON.stringify({
    compilerOptions: { strict: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", noEmit: true },
    include: ["src"],
  }),
  "src/math.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
  "src/main.ts": 'import { add } from "./math.js";\nconst x: string = add(1, 2);\nconsole.log(x);\n',
  "a.txt": "one\ntwo\nthree\n",
};

describe("the schemas against a recorded session of the real daemon", { timeout: 240_000 }, () => {
  const ws = tmpWorkspace({ git: true, files: PROJECT });
  const state = mkdtempSync(path.join(tmpdir(), "tool-layer-state-"));
  const sent = new Map<string, string>();
  let d: DaemonClient;

  beforeAll(async () => {
    git(ws.dir, "add", "-A");
    git(ws.dir, "commit", "-q", "-m", "initial");
    const config = path.join(state, "servers.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { test: { command: process.execPath, args: [FIXTURE_SERVER] } } }));
    // The warm start on: its lsp.state events are part of the traffic (the helper turns it off by default).
    d = await startDaemon(ws.dir, ["--mcp-config", config, "--lsp-warm", "on"], { XDG_STATE_HOME: state });
  });
  afterAll(async () => {
    await d?.close();
    ws.cleanup();
    rmSync(state, { recursive: true, force: true });
  });

  /** A call as a Gateway sends it, its request and params checked against the schemas first; it must succeed unless `fails`. */
  async function call(tool: string, p: Record<string, unknown> = {}, opts: { dry?: boolean; fails?: boolean } = {}): Promise<any> {
    const approved = !opts.dry;
    const id = `${tool}-${sent.size}`;
    const line = { tool_id: tool, session_id: "s1", toolcall_id: id, approved, params: p };
    expect(request(line), ajv.errorsText(request.errors)).toBe(true);
    if (params.has(tool)) expect(params.get(tool)!(p), `${tool} params: ${ajv.errorsText(params.get(tool)!.errors)}`).toBe(true);
    sent.set(JSON.stringify(id), tool);
    const r = await d.call(tool, p, { approved, id });
    expect(r.success, `${tool}: ${JSON.stringify(r.result)}`).toBe(!opts.fails);
    return r.result;
  }
  const since = () => d.lines.length;
  /** The first `name` event since line `from` that passes `test`; on a timeout the error shows the lines since. */
  const eventAfter = (from: number, name: string, test: (data: any) => boolean = () => true, ms = 60_000) =>
    d
      .waitFor((l) => d.lines.indexOf(l) >= from && l.event === name && test(l.data), ms)
      .catch((e: Error) => {
        throw new Error(
          `no ${name}: ${e.message}\nlines since: ${d.lines
            .slice(from)
            .map((l) => JSON.stringify(l).slice(0, 300))
            .join("\n")}`,
        );
      });

  it("every line of a session over every tool family and event kind is valid, and a wrong line is not", async () => {
    // registry
    await call("list");
    await call("info", { tool_id: "file_write" });
    await call("info", { tool_id: "no_such_tool" }, { fails: true });
    await call("cancel", { call_id: "nothing-running" });

    // files (fs.changed from an edit outside and from tool writes)
    let from = since();
    writeFileSync(path.join(ws.dir, "outside.txt"), "made by someone else\n");
    await eventAfter(from, "fs.changed", (data) => data.changes.some((c: any) => c.path === "outside.txt"));
    const read = await call("file_read", { path: "a.txt" });
    const tags = await call("file_read", { path: "a.txt", lines: [2, 9] });
    const edit = { path: "a.txt", hash: read.hash, edits: [{ type: "replace", startline: `2:${tags.tags[0].tag}`, content: "TWO" }] };
    const preview = await call("file_write", edit, { dry: true });
    from = since();
    await call("file_write", { ...edit, preview_id: preview.preview_id });
    await eventAfter(from, "fs.changed", (data) => data.changes.some((c: any) => c.path === "a.txt" && c.origin === "tool"));
    const created = await call("file_write", { path: "b.txt", content: "bee\n" });
    await call("file_move", { from: "b.txt", to: "c.txt", hash: created.hash });
    await call("file_delete", { path: "c.txt", hash: created.hash }, { dry: true });
    await call("file_delete", { path: "c.txt", hash: created.hash });
    await call("file_read", { path: "c.txt" }, { fails: true });
    await call("list_dir", {});

    // search
    await call("search", { pattern: "add" });
    await call("find_file", { query: "math" });

    // git (git.changed from a commit)
    await call("git_status");
    await call("git_diff");
    await call("git_line_status", { path: "a.txt" });
    await call("git_add", { paths: ["a.txt"] }, { dry: true });
    await call("git_commit", { message: "edit a", paths: ["a.txt"] }, { dry: true });
    from = since();
    await call("git_commit", { message: "edit a", paths: ["a.txt"] });
    await eventAfter(from, "git.changed");
    await call("git_log", { limit: 2 });
    await call("git_show", { ref: "HEAD" });
    await call("git_branch");
    await call("git_changelists");

    // terminal (terminal.output and terminal.exited from a background job)
    await call("terminal_run", { command: "echo hello" }, { dry: true });
    await call("terminal_run", { command: "echo hello" });
    from = since();
    const job = await call("terminal_run", { command: "echo one; echo two", background: true });
    await eventAfter(from, "terminal.exited", (data) => data.job === job.job);
    await eventAfter(from, "terminal.output", (data) => data.job === job.job);
    await call("terminal_jobs");
    await call("terminal_output", { job: job.job });
    await call("terminal_kill", { job: job.job });

    // language servers (lsp.diagnostics once an open file changes)
    await call("lsp_hover", { path: "src/main.ts", line: 2, symbol: "add" });
    await call("lsp_definition", { path: "src/main.ts", line: 2, symbol: "add" });
    await call("lsp_diagnostics", { path: "src/main.ts", wait_ms: 60_000 });
    from = since();
    const main = readFileSync(path.join(ws.dir, "src/main.ts"), "utf8");
    writeFileSync(path.join(ws.dir, "src/main.tmp"), main.replace("const x: string", "const x: Date"));
    renameSync(path.join(ws.dir, "src/main.tmp"), path.join(ws.dir, "src/main.ts"));
    await eventAfter(from, "lsp.diagnostics", (data) => data.path === "src/main.ts");
    await call("lsp_symbols", { path: "src/math.ts" });

    // mcp servers (tools.changed when the passthrough server's tools arrive); a passthrough call's envelope
    await d.waitFor((l) => l.event === "tools.changed" && l.data.added.includes("test_echo"), 30_000);
    await call("mcp_servers");
    await call("test_echo", { text: "hi" });

    // vfs.state: the watcher host killed, then back
    const host = (await call("info", { tool_id: "file_read" })).state.host_pid as number;
    from = since();
    process.kill(host, "SIGKILL");
    await eventAfter(from, "vfs.state", (data) => data.live === true);

    // bad lines: not JSON, not an object
    d.sendRaw("not json\n[1]\n");
    await d.waitFor((l) => l.call_id === null && l.result?.code === "INVALID_REQUEST");
    await call("session_end");

    const toolOf = (id: unknown) => sent.get(JSON.stringify(id));
    expect(d.lines.flatMap((l) => problems(l, toolOf))).toEqual([]);

    const seen = new Set(d.lines.filter((l) => "event" in l).map((l) => l.event));
    expect([...seen].sort()).toEqual(["ready", ...Object.keys(EVENT_DATA)].sort());
    const families = ["file_", "search", "find_file", "git_", "lsp_", "terminal_", "mcp_servers", "info", "list"];
    const called = [...sent.values()];
    expect(families.filter((f) => !called.some((t) => t.startsWith(f)))).toEqual([]);
    const answered = new Set(d.lines.filter((l) => l.success).map((l) => toolOf(l.call_id)));
    expect(called.filter((t) => TOOLS.some((tool) => tool.id === t) && !answered.has(t))).toEqual([]);

    // The validator is not vacuous: a result of the wrong shape and an event with a field of the wrong type fail.
    const readLine = d.lines.find((l) => toolOf(l.call_id) === "file_read" && l.success);
    expect(problems({ ...readLine, result: { ...readLine.result, hash: 42 } }, toolOf)).not.toEqual([]);
    const fsLine = d.lines.find((l) => l.event === "fs.changed");
    expect(problems({ ...fsLine, data: { changes: [{ ...fsLine.data.changes[0], kind: "renamed" }] } }, toolOf)).not.toEqual([]);
  });
});
