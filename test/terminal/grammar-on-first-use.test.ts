/**
 * The bash grammar is loaded by the first command, not when the daemon starts (it holds about 18 MB): a daemon is
 * ready without it, and its first terminal_run is checked as every later one is.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shellParserReady } from "../../src/terminal/shell-parse.js";
import { git } from "../git/fixture.js";
import { type InProcess, inProcessDaemon } from "../helpers/in-process.js";
import { tmpWorkspace } from "../helpers/tmp.js";

describe("the bash grammar, on first use", () => {
  const tmp = tmpWorkspace({ git: true, files: { "a.txt": "one\n" } });
  let d: InProcess;
  beforeAll(async () => {
    git(tmp.dir, "add", "-A");
    git(tmp.dir, "commit", "-qm", "start");
    d = await inProcessDaemon(tmp.dir, { terminal: { sandbox: "off" } });
  });
  afterAll(async () => {
    await d?.stop();
    tmp.cleanup();
  });

  it("is not loaded at ready; the first command (a refused write) is checked, and the next one runs", async () => {
    expect(shellParserReady()).toBe(false);
    const refused = await d.jsonl.call("terminal_run", { command: "echo x > a.txt" });
    expect(refused).toMatchObject({ success: false, result: { code: "SHELL_WRITE_REFUSED" } });
    expect(shellParserReady()).toBe(true);
    const ran = await d.jsonl.call("terminal_run", { command: "echo hi" });
    expect(ran).toMatchObject({ success: true, result: { exit_code: 0 } });
    expect(JSON.stringify(ran.result)).toContain("hi");
  });
});
