import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

function ghInstalled(): boolean {
  try {
    execFileSync("gh", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** gh is installed here and in CI; where it is not, these tests show as skipped, never as passed. */
const installed = ghInstalled();

describe("gh passthrough", () => {
  let ws: ReturnType<typeof tmpWorkspace>;
  let d: DaemonClient;
  beforeAll(async () => {
    ws = tmpWorkspace({ git: true });
    // A private config dir: the test must not see (or need) anyone's GitHub login.
    d = await startDaemon(ws.dir, [], { GH_CONFIG_DIR: ws.dir + "/.gh-config", GH_TOKEN: "", GITHUB_TOKEN: "" });
  });
  afterAll(async () => {
    await d.close();
    ws.cleanup();
  });

  it("info state says whether gh is installed and logged in", async () => {
    const r = await d.ok("info", { tool_id: "gh" });
    expect(r.mutating).toBe(true);
    expect(r.open_world).toBe(true);
    expect(r.state.installed).toBe(installed);
    if (installed) expect(r.state.logged_in).toBe(false);
  });

  it('list shows the whole first sentence of gh\'s description ("e.g." does not end it)', async () => {
    const gh = (await d.ok("list")).tools.find((t: any) => t.tool_id === "gh");
    expect(gh.description).toBe('Runs the GitHub CLI (`gh`) with the given arguments in the workspace, e.g. ["pr", "list"] or ["issue", "view", "12"].');
  });

  it.skipIf(!installed)("the preview is the command line, nothing runs", async () => {
    const r = await d.call("gh", { args: ["issue", "create", "--title", "it's a bug"] }, { approved: false });
    expect(r.result).toMatchObject({ dry_run: true, command: ["gh", "issue", "create", "--title", "it's a bug"] });
    expect(r.result.text).toBe(`would run: gh issue create --title 'it'\\''s a bug'`);
  });

  it.skipIf(!installed)("runs gh when approved; a failing gh command is GH_FAILED with its output", async () => {
    const r = await d.call("gh", { args: ["--version"] });
    expect(r.success).toBe(true);
    expect(r.result.text).toMatch(/^gh version/);
    const bad = await d.call("gh", { args: ["no-such-command"] });
    expect(bad.result.code).toBe("GH_FAILED");
    expect(bad.result.message).toContain("no-such-command");
    expect((await d.call("gh", { args: [] })).result.code).toBe("INVALID_PARAMS");
  });
});

describe("gh missing", () => {
  it("is TOOL_MISSING, in a preview too, and info says it is not installed", async () => {
    // A PATH with git and nothing else: gh is missing whether or not this machine has it.
    const bin = mkdtempSync(path.join(tmpdir(), "tool-layer-bin-"));
    symlinkSync(execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim(), path.join(bin, "git"));
    const ws = tmpWorkspace({ git: true });
    const d = await startDaemon(ws.dir, [], { PATH: bin });
    try {
      for (const approved of [false, true]) expect((await d.call("gh", { args: ["--version"] }, { approved })).result.code).toBe("TOOL_MISSING");
      expect((await d.ok("info", { tool_id: "gh" })).state).toMatchObject({ available: false, installed: false });
    } finally {
      await d.close();
      ws.cleanup();
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
