import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { approvalsFile } from "../../src/mcp/approvals.js";
import { entryDigest } from "../../src/mcp/config.js";
import { type DaemonClient, MAIN, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace, writeFile } from "../helpers/tmp.js";
import { FIXTURE_SERVER } from "../mcp/helpers.js";

/** A workspace `.mcp.json` server that leaves a mark when it starts: it runs only once approved. */
function markedServer(marker: string) {
  return { command: "sh", args: ["-c", `echo started >> '${marker}'; exec '${process.execPath}' '${FIXTURE_SERVER}'`] };
}

/** An approvals file that approves `entry` as the server `local`, as the daemon would write it. */
function approvalOf(root: string, entry: unknown): string {
  return JSON.stringify({ root, servers: { local: { digest: entryDigest(entry), approved_at: "2020-01-01T00:00:00.000Z" } } });
}

/** The state of the workspace server `local`, once the daemon has read `.mcp.json`. */
async function localState(d: DaemonClient): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const s = (await d.ok("mcp_servers")).servers.find((x: { name: string }) => x.name === "local");
    if (s) return s.state;
  }
  throw new Error("the daemon never listed the server local");
}

const scratch = mkdtempSync(path.join(os.tmpdir(), "tool-layer-state-dir-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the daemon's state folder is out of every sandbox's reach", () => {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
  afterAll(() => ws.cleanup());
  const home = path.join(scratch, "home");
  const stateDir = path.join(home, ".local", "state", "tool-layer");
  const file = approvalsFile(stateDir, ws.dir);
  const marker = path.join(scratch, "started.marker");
  const entry = markedServer(marker);
  // HOME is the terminal's home too, and XDG_STATE_HOME is unset: the state folder lies inside the folder commands get.
  const env = { HOME: home, XDG_STATE_HOME: "" };

  it("with --terminal-home $HOME a command can neither read nor write the approvals, and a forged one is not honoured", async () => {
    writeFile(ws.dir, ".mcp.json", JSON.stringify({ mcpServers: { local: entry } }));
    writeFile(ws.dir, "forged.json", approvalOf(ws.dir, entry));
    // An approvals file of the daemon's own, for the command to try to read.
    mkdirSync(path.dirname(file), { recursive: true });
    const own = JSON.stringify({ root: ws.dir, servers: { other: { digest: "own-approval-digest", approved_at: "" } } });
    writeFileSync(file, own);
    writeFile(ws.dir, ".tool-layer.json", JSON.stringify({ checks: [{ name: "peek", command: ["cat", file], on: ["commit"] }] }));

    const d = await startDaemon(ws.dir, ["--terminal-home", home], env);
    try {
      expect(await localState(d)).toBe("not approved");
      const dir = path.dirname(file);
      const r = await d.ok("terminal_run", {
        command: `cat '${file}'; echo read=$?; ls '${stateDir}' | wc -l; mkdir -p '${dir}' && cp forged.json '${file}'; echo write=$?`,
      });
      expect(r.output).not.toContain("own-approval-digest");
      expect(r.output).not.toMatch(/^read=0$/m);
      expect(r.output).toMatch(/^0$/m); // the folder shows empty
      expect(r.output).not.toMatch(/^write=0$/m);
      expect(readFileSync(file, "utf8")).toBe(own);
      // Nor by moving a folder above it away, to make the path anew (a mount point moves with its parent).
      const moved = await d.ok("terminal_run", {
        command: `mv '${path.dirname(stateDir)}' '${home}/.local/away'; echo state=$?; mv '${home}/.local' '${home}/away'; echo local=$?; mkdir -p '${dir}' && cp forged.json '${file}'; echo write=$?`,
      });
      expect(moved.output).toMatch(/^state=1$/m);
      expect(moved.output).toMatch(/^local=1$/m);
      expect(moved.output).not.toMatch(/^write=0$/m);
      expect(readFileSync(file, "utf8")).toBe(own);
      // A custom check runs in the same sandbox.
      const check = await d.ok("git_check", { name: "peek" });
      expect(check.checks[0]).toMatchObject({ name: "peek", ok: false });
      expect(check.checks[0].output).not.toContain("own-approval-digest");
    } finally {
      await d.close();
    }
    const again = await startDaemon(ws.dir, ["--terminal-home", home], env);
    try {
      expect(await localState(again)).toBe("not approved");
      expect(existsSync(marker)).toBe(false);
    } finally {
      await again.close();
    }
  });
});

describe("a state folder inside the workspace", () => {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
  afterAll(() => ws.cleanup());
  const marker = path.join(scratch, "shipped.marker");
  const entry = markedServer(marker);
  writeFile(ws.dir, ".mcp.json", JSON.stringify({ mcpServers: { local: entry } }));
  // The repository arrives with approvals where the daemon would look with HOME at the root.
  writeFile(ws.dir, path.relative(ws.dir, approvalsFile(path.join(ws.dir, ".local", "state", "tool-layer"), ws.dir)), approvalOf(ws.dir, entry));
  writeFile(ws.dir, path.relative(ws.dir, approvalsFile(path.join(ws.dir, "xdg", "tool-layer"), ws.dir)), approvalOf(ws.dir, entry));
  const outsideLink = path.join(scratch, "link-into-root");
  symlinkSync(path.join(ws.dir, "xdg"), outsideLink);

  it.each([
    ["HOME at the root", { HOME: ws.dir, XDG_STATE_HOME: "" }],
    ["HOME under the root", { HOME: path.join(ws.dir, "sub"), XDG_STATE_HOME: "" }],
    ["XDG_STATE_HOME in the root", { XDG_STATE_HOME: path.join(ws.dir, "xdg") }],
    ["XDG_STATE_HOME through a link into the root", { XDG_STATE_HOME: outsideLink }],
  ])("%s: refused at start, one line on stderr, exit 2, nothing started", (_what, env) => {
    const r = spawnSync(process.execPath, [MAIN, "--root", ws.dir], { input: "", encoding: "utf8", env: { ...process.env, ...env }, timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/state folder .* is inside the workspace/);
    expect(r.stderr).toContain("XDG_STATE_HOME");
    expect(existsSync(marker)).toBe(false);
  });
});
