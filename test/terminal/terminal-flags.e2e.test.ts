import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MAIN, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

const ws = tmpWorkspace({ files: { "a.txt": "a\n" } });
const scratch = mkdtempSync(path.join(os.tmpdir(), "tool-layer-flags-"));
afterAll(() => {
  ws.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

/** A PATH with every program of this machine but bubblewrap. */
function pathWithoutBwrap(): string {
  const bin = path.join(scratch, "bin");
  mkdirSync(bin, { recursive: true });
  for (const dir of ["/usr/local/bin", "/usr/bin", "/bin"]) {
    for (const name of readdirSync(dir)) {
      if (name === "bwrap") continue;
      try {
        symlinkSync(path.join(dir, name), path.join(bin, name));
      } catch {
        /* already linked from an earlier folder */
      }
    }
  }
  return bin;
}

describe("the terminal's flags", () => {
  it("without a working sandbox: SANDBOX_UNAVAILABLE (a dry run too) and info says why; --terminal-sandbox off runs unsandboxed and says so", async () => {
    const env = { PATH: pathWithoutBwrap() };
    const d = await startDaemon(ws.dir, [], env);
    try {
      const { state } = await d.ok("info", { tool_id: "terminal_run" });
      expect(state).toMatchObject({ available: false, sandbox: { mode: "bwrap", available: false } });
      expect(state.reason).toMatch(/not installed/);
      for (const approved of [false, true]) {
        const r = await d.call("terminal_run", { command: "echo hi" }, { approved });
        expect(r.result.code).toBe("SANDBOX_UNAVAILABLE");
        expect(r.result.message).toContain("--terminal-sandbox off");
      }
      // The write check comes first: a refused line is refused whatever the sandbox.
      expect((await d.call("terminal_run", { command: "echo hi > a.txt" })).result.code).toBe("SHELL_WRITE_REFUSED");
    } finally {
      await d.close();
    }
    const off = await startDaemon(ws.dir, ["--terminal-sandbox", "off"], env);
    try {
      expect((await off.ok("info", { tool_id: "terminal_run" })).state).toMatchObject({ available: true, sandbox: { mode: "off" } });
      const dry = await off.ok("terminal_run", { command: "cat /proc/1/comm" }, { approved: false });
      expect(dry.sandbox).toMatchObject({ mode: "off", argv: ["bash", "--noprofile", "--norc", "-c", "cat /proc/1/comm"] });
      const r = await off.ok("terminal_run", { command: "cat /proc/1/comm" });
      expect(r.sandboxed).toBe(false);
      expect(r.output.trim()).not.toBe("bwrap");
      expect(r.text).toContain("unsandboxed");
      expect((await off.call("terminal_run", { command: "echo x > a.txt" })).result.code).toBe("SHELL_WRITE_REFUSED");
    } finally {
      await off.close();
    }
  });

  it("--terminal-network keeps the network; --terminal-env passes one secret; --terminal-home binds a home", async () => {
    const home = path.join(scratch, "home");
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, ".npmrc"), "registry=x\n");
    const d = await startDaemon(ws.dir, ["--terminal-network", "--terminal-env", "GH_TOKEN", "--terminal-home", home], {
      GH_TOKEN: "gh-value",
      EXA_API_KEY: "exa-value",
    });
    try {
      const { state } = await d.ok("info", { tool_id: "terminal_run" });
      expect(state).toMatchObject({ network: "on (--terminal-network)", env_passed_through: ["GH_TOKEN"] });
      expect(state.home).toContain(home);
      const r = await d.ok("terminal_run", { command: 'env; cat "$HOME/.npmrc"; wc -l < /proc/net/dev' });
      expect(r.output).toMatch(/^GH_TOKEN=gh-value$/m);
      expect(r.output).not.toContain("exa-value");
      expect(r.output).toContain("registry=x");
      // The host's network namespace: the same interfaces as this test sees.
      expect(Number(r.output.trim().split("\n").at(-1))).toBe(readFileSync("/proc/net/dev", "utf8").trim().split("\n").length);
    } finally {
      await d.close();
    }
    // Without the flag only a private loopback: /proc/net/dev lists lo alone (two header lines and one).
    const plain = await startDaemon(ws.dir);
    try {
      expect((await plain.ok("terminal_run", { command: "wc -l < /proc/net/dev" })).output.trim()).toBe("3");
    } finally {
      await plain.close();
    }
  });

  it("a program not found (exit 127) under the host's /tmp gets a hint that /tmp is private in the sandbox", async () => {
    const bin = path.join(scratch, "toolchain", "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, "mytool"), "#!/bin/sh\necho tool ran\n", { mode: 0o755 });
    const d = await startDaemon(ws.dir, [], { PATH: `${bin}:${process.env.PATH}` });
    try {
      for (const command of ["mytool --version", `${bin}/mytool`]) {
        const r = await d.ok("terminal_run", { command });
        expect(r.exit_code, command).toBe(127);
        expect(r.text, command).toMatch(/\/tmp is private in the sandbox/);
        expect(r.text, command).toContain(bin);
        expect(r.text, command).toContain("--terminal-sandbox off");
      }
      // Found, or not found in a place the sandbox shows: no hint.
      expect((await d.ok("terminal_run", { command: "./no-such-script" })).text).not.toContain("private");
    } finally {
      await d.close();
    }
    // Nothing of PATH under /tmp (vitest puts the checkout's node_modules/.bin first, and a checkout may live there).
    const outsideTmp = (process.env.PATH ?? "")
      .split(":")
      .filter((dir) => dir !== "/tmp" && !dir.startsWith("/tmp/"))
      .join(":");
    const plain = await startDaemon(ws.dir, [], { PATH: outsideTmp });
    try {
      const r = await plain.ok("terminal_run", { command: "no-such-tool-here" });
      expect(r.exit_code).toBe(127);
      expect(r.text).not.toContain("private");
    } finally {
      await plain.close();
    }
  });

  it("a bad value is one line on stderr naming the flag, exit 2", () => {
    for (const args of [
      ["--terminal-sandbox", "maybe"],
      ["--terminal-home", "/no/such/dir"],
      ["--terminal-env", "NOT-A-NAME"],
    ]) {
      const r = spawnSync(process.execPath, [MAIN, "--root", ws.dir, ...args], { input: "", encoding: "utf8" });
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(args[0]);
      expect(r.stdout).toBe("");
    }
  });
});
