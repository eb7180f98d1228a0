/** The language servers' lifecycle through the real daemon: killed mid-check, the daemon killed, the sandbox flag. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { initHash } from "../../src/core/hash.js";
import { isAlive, processTree } from "../../src/platform/process-tree.js";
import { DaemonClient, startDaemon } from "../helpers/daemon.js";
import { until } from "../helpers/process.js";
import { writeFile } from "../helpers/tmp.js";
import { diagnostics, lspInfo, serverOf } from "./daemon-lsp.js";
import { typescriptProject, SLOW_TEST } from "./projects.js";

beforeAll(initHash);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function daemonOn(project: { dir: string; cleanup: () => void }, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<DaemonClient> {
  const d = await startDaemon(project.dir, args, env);
  cleanups.push(project.cleanup, () => d.close());
  return d;
}

/** The server's pid once the call that starts it has spawned it: info is the only place that says. */
async function spawnedPid(d: DaemonClient, language: string): Promise<number> {
  for (let asked = 0; asked < 10_000; asked++) {
    const { pid } = await serverOf(d, language);
    if (pid) return pid;
  }
  throw new Error(`no ${language} server was started`);
}

describe("language servers of the daemon", SLOW_TEST, () => {
  it("answer status unknown, not a clean list, when the server is killed mid-check; the next call restarts it", async () => {
    const d = await daemonOn(typescriptProject());
    // A cold project takes seconds to load and check: the kill lands while tsserver is still at it.
    const checking = diagnostics(d, "src/main.ts");
    process.kill(await spawnedPid(d, "typescript"), "SIGKILL");
    const answer = await checking;
    expect(answer).toMatchObject({ status: "unknown", diagnostics: null, reason: expect.stringMatching(/exited|could not start/) });
    expect(answer.text).toContain("not a clean result");
    const again = await diagnostics(d, "src/main.ts");
    expect(again).toMatchObject({ status: "current", diagnostics: [expect.objectContaining({ code: 2322 })] });
    expect((await serverOf(d, "typescript")).restarts).toBe(1);
  });

  it("search the project's symbols on a first call, through the project's first file opened for it (not node_modules)", async () => {
    const d = await daemonOn(typescriptProject());
    const found = await d.ok("lsp_symbols", { query: "total" });
    expect(found.symbols).toContainEqual(expect.objectContaining({ name: "total", kind: "constant", path: "src/other.ts", line: 2 }));
    expect((await serverOf(d, "typescript")).open).toEqual(["src/main.ts"]);
  });

  it("leave no process behind when the daemon is killed with SIGKILL", async () => {
    const ts = typescriptProject();
    writeFile(ts.dir, "py/util.py", "def add(a: int) -> int:\n    return a\n");
    const d = await daemonOn(ts);
    await Promise.all([d.ok("lsp_hover", { path: "src/main.ts", line: 2, symbol: "sum" }), d.ok("lsp_hover", { path: "py/util.py", line: 1, symbol: "add" })]);
    const servers = (await lspInfo(d)).servers.filter((s) => s.pid);
    expect(servers.map((s) => s.language).sort()).toEqual(["python", "typescript"]);
    const tree = servers.flatMap((s) => processTree(s.pid!));
    d.child.kill("SIGKILL");
    await d.exited;
    // SPEC 1: none still running a second after the daemon is gone (the watchdog kills what it leaves).
    await until(() => tree.every((p) => !isAlive(p)), "every language server process to end", 1_000);
  });

  it("refuse with LSP_UNAVAILABLE under --lsp-sandbox on where bubblewrap is missing, and run unsandboxed under off", async () => {
    // A PATH with git but no bwrap.
    const bin = mkdtempSync(path.join(tmpdir(), "tool-layer-bin-"));
    symlinkSync(execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim(), path.join(bin, "git"));
    cleanups.push(() => rmSync(bin, { recursive: true, force: true }));
    const on = await daemonOn(typescriptProject(), ["--lsp-sandbox", "on"], { PATH: bin });
    const refused = await on.call("lsp_hover", { path: "src/main.ts", line: 2, symbol: "sum" });
    expect(refused.result).toMatchObject({ code: "LSP_UNAVAILABLE", message: expect.stringMatching(/sandbox.*bwrap/) });
    expect((await serverOf(on, "typescript")).pid).toBeNull();

    const off = await daemonOn(typescriptProject(), ["--lsp-sandbox", "off"]);
    await off.ok("lsp_hover", { path: "src/main.ts", line: 2, symbol: "sum" });
    expect((await lspInfo(off)).sandbox).toBe("off: --lsp-sandbox off");
    expect((await serverOf(off, "typescript")).state).toBe("ready");
  });

  it("say a bad --lsp-sandbox value on stderr, exit 2", async () => {
    const project = typescriptProject();
    cleanups.push(project.cleanup);
    const d = new DaemonClient(project.dir, ["--lsp-sandbox", "maybe"]); // never ready: no startDaemon
    expect(await d.exited).toMatchObject({ code: 2 });
    expect(d.stderr).toContain("--lsp-sandbox must be auto, on or off, not maybe");
  });
});
