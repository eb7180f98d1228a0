import { execFile } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ProcessSpec,
  CODEGRAPH_TOOLS,
  codegraphIndexed,
  codegraphInstalled,
  codegraphServerEntry,
  initCommand,
  syncCommand,
} from "../../src/mcp/codegraph.js";
import { ServerConnection } from "../../src/mcp/server-connection.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { testSpawn } from "./helpers.js";

const run = promisify(execFile);
const spawn = testSpawn();
const runSpec = (spec: ProcessSpec) =>
  run(spec.argv[0], spec.argv.slice(1), { cwd: spec.cwd, env: { ...getDefaultEnvironment(), ...spec.env }, timeout: 120_000 });

/** Processes whose command line or working folder mentions one of `needles`: what CodeGraph could leave behind. */
function processesMentioning(...needles: string[]): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      let cwd = "";
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        /* not ours to read */
      }
      if (needles.some((n) => cmd.includes(n) || cwd === n || cwd.startsWith(`${n}/`))) found.push(`${pid}: ${cmd}`);
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

describe.skipIf(!codegraphInstalled())("CodeGraph, wrapped as it is", () => {
  let repo: ReturnType<typeof tmpWorkspace>;
  let state: ReturnType<typeof tmpWorkspace>;
  let conn: ServerConnection;

  beforeAll(async () => {
    repo = tmpWorkspace({
      git: true,
      files: {
        "src/math.ts": "export function addNumbers(a: number, b: number): number {\n  return a + b;\n}\n",
        "src/main.ts": 'import { addNumbers } from "./math";\nexport function total(): number {\n  return addNumbers(1, 2);\n}\n',
      },
    });
    state = tmpWorkspace();
    expect(codegraphIndexed(repo.dir)).toBe(false);
    await runSpec(initCommand(repo.dir, state.dir)!);
  });
  afterAll(async () => {
    await conn?.close();
    repo.cleanup();
    state.cleanup();
  });

  it("resolves the platform bundle's launcher, not the npm shim", () => {
    const cg = codegraphInstalled()!;
    expect(cg.bin).toMatch(/codegraph-[a-z0-9]+-[a-z0-9]+\/bin\/codegraph$/);
    expect(cg.version).toBe("1.6.1");
  });

  it("init indexes the root into .codegraph/ and installs no git hooks", () => {
    expect(codegraphIndexed(repo.dir)).toBe(true);
    const hooks = readdirSync(path.join(repo.dir, ".git", "hooks")).filter((h) => !h.endsWith(".sample"));
    expect(hooks).toEqual([]);
  });

  it("its MCP server starts through ServerConnection with the daemon's settings; its tools are read-only", async () => {
    conn = new ServerConnection(codegraphServerEntry(repo.dir, state.dir)!, { spawn });
    const tools = await conn.start();
    const names = tools.map((t) => t.name);
    // A tiny repository lists search, node and explore (CodeGraph's own rule); all are among the eight it defines.
    expect(names).toEqual(expect.arrayContaining(["codegraph_search", "codegraph_explore"]));
    for (const t of tools) {
      expect(CODEGRAPH_TOOLS).toContain(t.name);
      expect(t.readOnly).toBe(true);
    }
    const environ = readFileSync(`/proc/${conn.status().pid}/environ`, "utf8").split("\0");
    expect(environ).toEqual(
      expect.arrayContaining([`HOME=${path.join(state.dir, "codegraph-home")}`, "DO_NOT_TRACK=1", "CODEGRAPH_NO_DAEMON=1", "CODEGRAPH_NO_WATCH=1"]),
    );
  });

  it("answers a query; after a change and its sync, the next answer shows the change", async () => {
    const before = await conn.callTool("codegraph_search", { query: "addNumbers" });
    expect(before.text).toContain("src/math.ts");
    // A tool it does not list on a tiny repository still answers.
    expect((await conn.callTool("codegraph_callers", { symbol: "addNumbers" })).text).toContain("total");

    appendFileSync(path.join(repo.dir, "src/math.ts"), "export function multiplyNumbers(a: number, b: number): number {\n  return a * b;\n}\n");
    expect((await conn.callTool("codegraph_search", { query: "multiplyNumbers" })).text).not.toContain("src/math.ts");
    await runSpec(syncCommand(repo.dir, state.dir)!);
    const after = await conn.callTool("codegraph_search", { query: "multiplyNumbers" });
    expect(after.text).toContain("multiplyNumbers");
    expect(after.text).toContain("src/math.ts");
  });

  it("leaves no CodeGraph process (server, daemon, sync) once closed", async () => {
    const pid = conn.status().pid!;
    await conn.close();
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(processesMentioning(repo.dir, state.dir)).toEqual([]);
  });
});
