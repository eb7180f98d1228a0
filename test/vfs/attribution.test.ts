import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ATTRIBUTION_GRACE_MS, Attribution, STALE_SESSIONS_MAX } from "../../src/vfs/attribution.js";
import { SessionViews } from "../../src/vfs/views.js";

const external = { origin: "external", by: null, tool: null };

describe("Attribution", () => {
  let views: SessionViews;
  let attribution: Attribution;
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
    views = new SessionViews();
    attribution = new Attribution(views);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("gives a change the tool write that brings its hash; the writer is not stale, other readers are", () => {
    views.record("writer", "a.ts", "h0");
    views.record("reader", "a.ts", "h0");
    attribution.expect({ session: "writer", tool: "file_write", rel: "a.ts", hash: "h1" });
    views.record("writer", "a.ts", "h1");
    expect(attribution.attribute("a.ts", "a.ts", "h1", Date.now())).toEqual({ origin: "tool", by: "writer", tool: "file_write", stale_sessions: ["reader"] });
    // Used up: the same content again, later, is nobody's.
    expect(attribution.attribute("a.ts", "a.ts", "h1", Date.now())).toMatchObject(external);
  });

  it("does not give a change with another hash to the writer, and drops writes a later one overtook", () => {
    attribution.expect({ session: "s", tool: "file_write", rel: "a.ts", hash: "h1" });
    attribution.expect({ session: "s", tool: "file_write", rel: "a.ts", hash: "h2" });
    expect(attribution.attribute("a.ts", "a.ts", "other", Date.now())).toMatchObject(external);
    expect(attribution.attribute("a.ts", "a.ts", "h2", Date.now())).toMatchObject({ origin: "tool", by: "s" });
    expect(attribution.attribute("a.ts", "a.ts", "h1", Date.now())).toMatchObject(external); // overtaken by h2
  });

  it("gives changes seen while a window is open, or within the grace after, to its actor", () => {
    const opened = Date.now();
    const window = attribution.openWindow({ session: "git-user", tool: "git_checkout" });
    expect(attribution.attribute("a.ts", "a.ts", "h", opened - 1)).toMatchObject(external); // seen before it opened
    vi.advanceTimersByTime(100);
    expect(attribution.attribute("a.ts", "a.ts", "h", Date.now())).toMatchObject({ origin: "tool", by: "git-user", tool: "git_checkout" });
    window.close();
    const closed = Date.now();
    expect(attribution.attribute("b.ts", "b.ts", "h", closed + ATTRIBUTION_GRACE_MS)).toMatchObject({ origin: "tool", by: "git-user" });
    expect(attribution.attribute("b.ts", "b.ts", "h", closed + ATTRIBUTION_GRACE_MS + 1)).toMatchObject(external);
    expect(attribution.attribute("c.ts", "c.ts", "h", undefined)).toMatchObject(external); // no event time: no window
  });

  it("gives a change to the window open when it was seen, not to one that just closed before it", () => {
    const first = attribution.openWindow({ session: "a", tool: "git_reset" });
    vi.advanceTimersByTime(10);
    first.close();
    vi.advanceTimersByTime(10);
    const second = attribution.openWindow({ session: "b", tool: "git_checkout" });
    vi.advanceTimersByTime(10);
    // Within the first one's grace, but the second one is open: the change is the second operation's.
    expect(attribution.attribute("x.ts", "x.ts", "h", Date.now())).toMatchObject({ by: "b", tool: "git_checkout" });
    second.close();
    vi.advanceTimersByTime(10);
    // Both closed, both within their grace: the one that closed last.
    expect(attribution.attribute("y.ts", "y.ts", "h", Date.now())).toMatchObject({ by: "b" });
  });

  it("keeps an operation's own session stale (it did not see what the operation wrote), unlike a tool write", () => {
    views.record("git-user", "a.ts", "old");
    attribution.openWindow({ session: "git-user", tool: "git_checkout" });
    expect(attribution.attribute("a.ts", "a.ts", "new", Date.now())).toMatchObject({ by: "git-user", stale_sessions: ["git-user"] });
  });

  it("prefers the exact tool write to an open window", () => {
    attribution.openWindow({ session: "op", tool: "git_stash" });
    attribution.expect({ session: "w", tool: "file_write", rel: "a.ts", hash: "h" });
    expect(attribution.attribute("a.ts", "a.ts", "h", Date.now())).toMatchObject({ by: "w", tool: "file_write" });
  });

  it("judges staleness by the real path (a link's target), attribution by the reported one", () => {
    views.record("linkreader", "src/real.ts", "h0");
    expect(attribution.attribute("link.ts", "src/real.ts", "h1", Date.now())).toMatchObject({ stale_sessions: ["linkreader"] });
  });

  it("names at most STALE_SESSIONS_MAX stale sessions, sorted, and counts the rest", () => {
    const n = STALE_SESSIONS_MAX + 8;
    for (let i = 0; i < n; i++) views.record(`s${String(i).padStart(3, "0")}`, "a.ts", "h0");
    const c = attribution.attribute("a.ts", "a.ts", "h1", Date.now());
    expect(c.stale_sessions).toHaveLength(STALE_SESSIONS_MAX);
    expect(c.stale_sessions).toEqual([...c.stale_sessions].sort());
    expect(c.stale_sessions[0]).toBe("s000");
    expect(c.stale_sessions_omitted).toBe(8);
    // Under the bound the count is left out.
    views.forgetSession("s000");
    views.forgetSession("s001");
    for (let i = 2; i < 8; i++) views.forgetSession(`s00${i}`);
    expect(attribution.attribute("a.ts", "a.ts", "h2", Date.now())).not.toHaveProperty("stale_sessions_omitted");
  });

  it("drops a closed window once a later flush cannot hold its changes, and old tool writes", () => {
    const window = attribution.openWindow({ session: "op", tool: "git_reset" });
    window.close();
    const closed = Date.now();
    attribution.prune(closed + ATTRIBUTION_GRACE_MS); // a change seen within the grace may still be processed later
    expect(attribution.attribute("a.ts", "a.ts", "h", closed + 10)).toMatchObject({ by: "op" });
    attribution.prune(closed + ATTRIBUTION_GRACE_MS + 1);
    expect(attribution.attribute("a.ts", "a.ts", "h", closed + 10)).toMatchObject(external);

    attribution.expect({ session: "w", tool: "file_write", rel: "b.ts", hash: "h" });
    vi.advanceTimersByTime(31_000);
    attribution.prune(Date.now());
    expect(attribution.attribute("b.ts", "b.ts", "h", Date.now())).toMatchObject(external);
  });
});
