import { describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

describe("a call's timeout counts from when it runs, not while it waits for a pool slot", () => {
  const ws = tmpWorkspace();
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c), [], { TOOL_LAYER_DEBUG_TOOLS: "1" });

  it("48 calls of 500 ms in one write through a pool of 8, each with a 2 s timeout: every one succeeds", async () => {
    const ids = Array.from({ length: 48 }, (_, i) => `q-${i}`);
    const answers = ids.map((id) => d.waitFor((l) => l.call_id === id, 60_000));
    d.sendRaw(ids.map((id) => JSON.stringify({ tool_id: "debug_sleep", session_id: "s", toolcall_id: id, params: { ms: 500, pooled: true } }) + "\n").join(""));
    const codes = (await Promise.all(answers)).map((a) => (a.success ? "ok" : a.result.code));
    expect(codes).toEqual(ids.map(() => "ok"));
  });

  it("a call still waiting for a slot can be cancelled", async () => {
    const blockers = Array.from({ length: 8 }, (_, i) => d.call("debug_sleep", { ms: 1_500, pooled: true }, { id: `b-${i}` }));
    const waiting = d.call("debug_sleep", { ms: 100, pooled: true }, { id: "waiting" });
    expect(await d.ok("cancel", { call_id: "waiting" })).toMatchObject({ cancelled: true });
    expect((await waiting).result.code).toBe("CANCELLED");
    for (const b of await Promise.all(blockers)) expect(b.success).toBe(true);
  });
});
