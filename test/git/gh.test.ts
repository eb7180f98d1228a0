import { execFileSync } from "node:child_process";
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

describe("gh passthrough", () => {
  let ws: ReturnType<typeof tmpWorkspace>;
  let d: DaemonClient;
  const installed = ghInstalled();
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
    expect(r.state.installed).toBe(installed);
    if (installed) expect(r.state.logged_in).toBe(false);
  });

  it("the preview is the command line, nothing runs", async () => {
    const r = await d.call("gh", { args: ["issue", "create", "--title", "it's a bug"] }, { approved: false });
    if (!installed) return expect(r.result.code).toBe("TOOL_MISSING");
    expect(r.result).toMatchObject({ dry_run: true, command: ["gh", "issue", "create", "--title", "it's a bug"] });
    expect(r.result.text).toBe(`would run: gh issue create --title 'it'\\''s a bug'`);
  });

  it("runs gh when approved; a failing gh command is GH_FAILED with its output", async () => {
    const r = await d.call("gh", { args: ["--version"] });
    if (!installed) return expect(r.result.code).toBe("TOOL_MISSING");
    expect(r.success).toBe(true);
    expect(r.result.text).toMatch(/^gh version/);
    const bad = await d.call("gh", { args: ["no-such-command"] });
    expect(bad.result.code).toBe("GH_FAILED");
    expect(bad.result.message).toContain("no-such-command");
    expect((await d.call("gh", { args: [] })).result.code).toBe("INVALID_PARAMS");
  });
});
