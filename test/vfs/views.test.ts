import { describe, expect, it } from "vitest";
import { SESSION_IDLE_MS, SessionViews } from "../../src/vfs/views.js";

describe("SessionViews", () => {
  it("lists the sessions whose last seen version differs, sorted, without the writer", () => {
    const views = new SessionViews();
    views.record("b", "a.ts", "h1");
    views.record("a", "a.ts", "h0");
    views.record("c", "a.ts", "h2");
    expect(views.staleSessions("a.ts", "h2")).toEqual(["a", "b"]);
    expect(views.staleSessions("a.ts", "h2", "a")).toEqual(["b"]);
    expect(views.staleSessions("other.ts", "h2")).toEqual([]);
  });

  it("forgets a session that ended, everywhere", () => {
    const views = new SessionViews();
    views.record("s", "a.ts", "h0");
    views.record("s", "b.ts", "h0");
    views.record("t", "a.ts", "h0");
    expect(views.forgetSession("s")).toBe(2);
    expect(views.staleSessions("a.ts", "h1")).toEqual(["t"]);
    expect(views.staleSessions("b.ts", "h1")).toEqual([]);
    expect(views.sessions).toBe(1);
  });

  it("forgets a session idle for SESSION_IDLE_MS, and keeps one that made a call", () => {
    let now = 0;
    const views = new SessionViews(() => now);
    views.record("idle", "a.ts", "h0");
    views.record("busy", "a.ts", "h0");
    now = SESSION_IDLE_MS - 1;
    views.touch("busy");
    now = SESSION_IDLE_MS + 61_000;
    views.touch("busy"); // a call sweeps (at most once a minute: the last sweep was with the call before)
    expect(views.staleSessions("a.ts", "h1")).toEqual(["busy"]);
    expect(views.seen("idle", "a.ts")).toBeUndefined();
  });
});
