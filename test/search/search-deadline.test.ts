import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

/**
 * A search whose deadline passes answers what rg found by then. rg is made slow deterministically: `stuck/.gitignore` is a
 * FIFO no one writes, and the rg thread that enters `stuck/` blocks reading it for good while the others search on.
 */
describe("search at its deadline", () => {
  const ws = tmpWorkspace({
    files: {
      "a/one.txt": "needle one\n",
      "b/two.txt": "needle two\n",
      "c/three.txt": "needle three\n",
      "stuck/four.txt": "needle four\n",
    },
  });
  execFileSync("mkfifo", [path.join(ws.dir, "stuck/.gitignore")]);
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));

  it("answers the matches found so far, truncated, with the reason, instead of TIMEOUT", async () => {
    const r = await d.ok("search", { pattern: "needle", timeout_ms: 500 });
    expect(r.truncated).toBe(true);
    expect(r.timed_out).toBe(true);
    const paths = r.matches.map((f: { path: string }) => f.path);
    expect(paths).toEqual(["a/one.txt", "b/two.txt", "c/three.txt"]);
    expect(r.total).toBe(3);
    expect(r.text).toMatch(/The search stopped at its 500 ms deadline; these are the matches found by then\./);
    // read and hashed as found: the same hash file_read gives
    const read = await d.ok("file_read", { path: "a/one.txt" });
    expect(r.matches[0].hash).toBe(read.hash);
  });

  it("keeps answering after one (rg was stopped)", async () => {
    const r = await d.ok("search", { pattern: "three", path: "c" });
    expect(r.truncated).toBe(false);
    expect(r.matches.map((f: { path: string }) => f.path)).toEqual(["c/three.txt"]);
  });

  it("refuses a timeout_ms out of range", async () => {
    for (const timeout_ms of [0, 99, 25_001, 1.5]) {
      const r = await d.call("search", { pattern: "needle", timeout_ms });
      expect(r.success).toBe(false);
      expect(r.result.code).toBe("INVALID_PARAMS");
    }
  });
});
