import { describe, expect, it } from "vitest";
import { type DaemonClient, type EventLine, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { lspInfo } from "./daemon-lsp.js";
import { SLOW_TEST, WAIT_MS, typescriptProject } from "./projects.js";

const states = (d: DaemonClient, language: string) =>
  d.events.filter((e: EventLine) => e.event === "lsp.state" && e.data.language === language).map((e) => e.data.state);

/** The warm start through the real daemon and the real typescript-language-server: no lsp_* call is made. */
describe("lsp warm start (--lsp-warm on)", () => {
  const ws = typescriptProject();
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c), ["--lsp-warm", "on"]);

  it("pushes lsp.state starting, then ready, for a TypeScript project, and info shows it", SLOW_TEST, async () => {
    const ready = await d.waitFor(
      (l) => l.event === "lsp.state" && l.data.language === "typescript" && l.data.state !== "starting" && l.data.state !== "indexing",
      WAIT_MS,
    );
    expect(ready.data).toMatchObject({ language: "typescript", server: "typescript-language-server", state: "ready" });
    const seen = states(d, "typescript");
    expect(seen[0]).toBe("starting");
    expect(seen.at(-1)).toBe("ready");
    expect(seen.filter((s: string) => s !== "starting" && s !== "indexing" && s !== "ready")).toEqual([]);
    // the ready line came after the daemon's own ready
    expect(d.lines.findIndex((l) => l.event === "ready")).toBeLessThan(d.lines.findIndex((l) => l.event === "lsp.state"));
    const ts = (await lspInfo(d)).servers.find((s) => s.language === "typescript")!;
    expect(ts.state).toBe("ready");
    expect(ts.open.length).toBe(1);
    // nothing for a language without project files here
    expect(states(d, "python")).toEqual([]);
  });
});

describe("lsp warm start off", () => {
  const ws = typescriptProject();
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c), ["--lsp-warm", "off"]);

  it("starts no server until a call needs one", async () => {
    const ts = (await lspInfo(d)).servers.find((s) => s.language === "typescript")!;
    expect(ts.state).toBe("not started");
    expect(d.events.some((e) => e.event === "lsp.state")).toBe(false);
  });
});

describe("lsp warm start without project files", () => {
  const ws = tmpWorkspace({ files: { "a.ts": "export const a = 1;\n" } });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c), ["--lsp-warm", "on"]);

  it("starts nothing", async () => {
    const ts = (await lspInfo(d)).servers.find((s) => s.language === "typescript")!;
    expect(ts.state).toBe("not started");
  });

  it("refuses a bad --lsp-warm value", async () => {
    const { spawnSync } = await import("node:child_process");
    const { MAIN } = await import("../helpers/daemon.js");
    const r = spawnSync(process.execPath, [MAIN, "--root", ws.dir, "--lsp-warm", "maybe"], { encoding: "utf8" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/--lsp-warm must be on or off, not maybe/);
  });
});
