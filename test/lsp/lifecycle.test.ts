/** Start, crash, restart, failure and stop, on real servers; the pool that routes files to them. */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { initHash } from "../../src/core/hash.js";
import { LspClient } from "../../src/lsp/client.js";
import { LanguageServers } from "../../src/lsp/servers-pool.js";
import { pythonSpec, typescriptSpec } from "../../src/lsp/servers.js";
import { isAlive, processTree } from "../../src/platform/process-tree.js";
import { docOf, pythonProject, typescriptProject, SLOW_TEST, WAIT_MS } from "./projects.js";

beforeAll(initHash);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function untilState(client: LspClient, kind: string): Promise<void> {
  // The exit event reaches the client through node's child-process events: wait for it, not for a time.
  return new Promise((resolve) => {
    const check = () => (client.state.kind === kind ? resolve() : setImmediate(check));
    check();
  });
}

describe("a typescript-language-server killed mid-check", SLOW_TEST, () => {
  it("answers unknown, not a clean list, then restarts on the next call with its documents reopened", async () => {
    const project = typescriptProject();
    const client = new LspClient(typescriptSpec(), { root: project.dir });
    cleanups.push(project.cleanup, () => client.stop());
    await client.start();
    const leader = client.pid!;
    const main = docOf(project.dir, "src/main.ts");
    // A cold project takes seconds to check; the kill lands while tsserver is still loading it.
    const checking = client.diagnostics(main, WAIT_MS);
    process.kill(leader, "SIGKILL"); // the leader only: its tsserver must go with it all the same
    const answer = await checking;
    expect(answer).toMatchObject({ status: "unknown", hash: main.hash });
    expect(answer.status === "unknown" && answer.reason).toMatch(/exited/);
    await untilState(client, "crashed");
    expect(client.state).toMatchObject({ kind: "crashed", restarts: 0 });
    expect(client.openFiles()).toEqual(["src/main.ts"]);

    const again = await client.diagnostics(main, WAIT_MS);
    expect(again).toMatchObject({ status: "current", diagnostics: [{ line: 2, code: 2322 }] });
    expect(client.state).toEqual({ kind: "ready" });
    expect(client.pid).not.toBe(leader);
    const hover = await client.hover(main, { line: 2, symbol: "sum" });
    expect(hover.text).toContain("sum(a: number, b: number): number");
  });
});

describe("pyright-langserver", SLOW_TEST, () => {
  it("answers unknown when wait_ms passes before the diagnostics", async () => {
    const project = pythonProject();
    const client = new LspClient(pythonSpec(), { root: project.dir });
    cleanups.push(project.cleanup, () => client.stop());
    // A cold server cannot answer within a millisecond: the wait ends the call, never a clean list.
    const answer = await client.diagnostics(docOf(project.dir, "main.py"), 1);
    expect(answer).toMatchObject({ status: "unknown", reason: expect.stringMatching(/within 1 ms/) });
    const later = await client.diagnostics(docOf(project.dir, "main.py"), WAIT_MS);
    expect(later.status).toBe("current");
  });

  it("is failed, not restarted again, after crashing more often than the cap", async () => {
    const project = pythonProject();
    const client = new LspClient(pythonSpec(), { root: project.dir, maxRestarts: 1 });
    cleanups.push(project.cleanup, () => client.stop());
    await client.start();
    process.kill(client.pid!, "SIGKILL");
    await untilState(client, "crashed");
    await client.start(); // the one restart allowed
    expect(client.state).toEqual({ kind: "ready" });
    process.kill(client.pid!, "SIGKILL");
    await untilState(client, "crashed");
    expect(client.state).toMatchObject({ kind: "crashed", restarts: 1 });
    await expect(client.start()).rejects.toMatchObject({ code: "LSP_UNAVAILABLE" });
    expect(client.state).toMatchObject({ kind: "failed", reason: expect.stringMatching(/crashed 2 times/) });
    await expect(client.hover(docOf(project.dir, "main.py"), { line: 2, symbol: "add" })).rejects.toMatchObject({ code: "LSP_UNAVAILABLE" });
  });

  it("is failed with the reason when it cannot start", async () => {
    const project = pythonProject();
    const spec = { ...pythonSpec(), args: ["-e", "process.stderr.write('no such server\\n'); process.exit(3)"] };
    const client = new LspClient(spec, { root: project.dir, maxRestarts: 0 });
    cleanups.push(project.cleanup, () => client.stop());
    await expect(client.start()).rejects.toMatchObject({ code: "LSP_UNAVAILABLE", message: expect.stringMatching(/exited with code 3.*no such server/) });
    await expect(client.start()).rejects.toMatchObject({ code: "LSP_UNAVAILABLE" });
    expect(client.state.kind).toBe("failed");
  });
});

describe("LanguageServers", SLOW_TEST, () => {
  it("routes files by extension, starts servers lazily, says their state and stops them all", async () => {
    const ts = typescriptProject();
    const servers = new LanguageServers({ root: ts.dir }, { python: { missing: "Cannot find module 'pyright'" } });
    cleanups.push(ts.cleanup, () => servers.stop());
    expect(servers.info()).toEqual([
      { language: "typescript", state: "not started", version: typescriptSpec().version, pid: null, restarts: 0, memory_bytes: null, open: [] },
      { language: "python", state: "not installed", version: null, pid: null, restarts: 0, memory_bytes: null, open: [] },
    ]);
    expect(servers.installed()).toEqual(["typescript"]);
    expect(() => servers.clientFor("a.py")).toThrow(expect.objectContaining({ code: "LSP_UNAVAILABLE", message: expect.stringMatching(/not installed/) }));
    expect(() => servers.clientFor("README.md")).toThrow(expect.objectContaining({ code: "LSP_UNAVAILABLE" }));
    // A bus change never starts a server.
    servers.sync("src/main.ts", "x", "h");
    expect(servers.info()[0].state).toBe("not started");

    const client = servers.clientFor("src/main.ts");
    expect(servers.clientFor("src/other.tsx")).toBe(client);
    await client.hover(docOf(ts.dir, "src/main.ts"), { line: 2, symbol: "sum" });
    const [info] = servers.info();
    expect(info).toMatchObject({ state: "ready", open: ["src/main.ts"], memory_bytes: expect.any(Number) });
    const tree = processTree(info.pid!);
    await servers.stop();
    expect(tree.filter(isAlive)).toEqual([]);
    expect(() => servers.clientFor("src/main.ts")).toThrow(expect.objectContaining({ code: "LSP_UNAVAILABLE" }));
  });
});
