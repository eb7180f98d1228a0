import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RawEvent } from "../../src/vfs/engine.js";
import { type Batch, EventWindow, FLOOD_EVENTS, FLOOD_WINDOW_MS, WINDOW_MS } from "../../src/vfs/event-window.js";

const ev = (path: string, kind: RawEvent["kind"] = "update"): RawEvent => ({ path, kind });
const many = (n: number, prefix = "/r/f") => Array.from({ length: n }, (_, i) => ev(`${prefix}${i}`));

/** An EventWindow whose processing of each batch finishes when the test says (or at once). */
function harness(options: { engineDelayMs?: number; again?: () => boolean; manual?: boolean } = {}) {
  const batches: (Batch & { at: number })[] = [];
  const finishers: (() => void)[] = [];
  const logs: string[] = [];
  const window = new EventWindow(
    async (batch) => {
      batches.push({ ...batch, at: Date.now() });
      if (options.manual) await new Promise<void>((resolve) => finishers.push(resolve));
    },
    { engineDelayMs: options.engineDelayMs, again: options.again, log: (m) => logs.push(m) },
  );
  return { window, batches, logs, finish: () => finishers.shift()?.() };
}

describe("EventWindow", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("holds events until open, then hands them over in one window", async () => {
    const { window, batches } = harness();
    window.push([ev("/r/a"), ev("/r/b")]);
    await vi.advanceTimersByTimeAsync(WINDOW_MS * 4);
    expect(batches).toHaveLength(0);
    window.open();
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(batches.map((b) => b.events.map((e) => e.path))).toEqual([["/r/a", "/r/b"]]);
  });

  it("gathers for WINDOW_MS after the first event, less what the engine already held", async () => {
    for (const engineDelayMs of [0, 50]) {
      const { window, batches } = harness({ engineDelayMs });
      window.open();
      const t0 = Date.now();
      window.push([ev("/r/a")]);
      await vi.advanceTimersByTimeAsync(10);
      window.push([ev("/r/b")]); // later events join the same window; they do not push it back
      await vi.advanceTimersByTimeAsync(WINDOW_MS - engineDelayMs - 11);
      expect(batches, `engine delay ${engineDelayMs}`).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(batches).toHaveLength(1);
      expect(batches[0].at - t0).toBe(WINDOW_MS - engineDelayMs);
      expect(batches[0].events).toHaveLength(2);
      expect(batches[0].firstEventAt).toBe(t0);
      expect(batches[0].seenAt.get("/r/b")).toBe(t0 + 10);
    }
  });

  it("gives events that come while a window is processed a window of their own", async () => {
    const { window, batches, finish } = harness({ manual: true });
    window.open();
    window.push([ev("/r/a")]);
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(batches).toHaveLength(1);
    window.push([ev("/r/b")]);
    await vi.advanceTimersByTimeAsync(WINDOW_MS * 10); // the first is still being processed: nothing else starts
    expect(batches).toHaveLength(1);
    const finishedAt = Date.now();
    finish();
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(batches).toHaveLength(2);
    expect(batches[1].at - finishedAt).toBe(WINDOW_MS); // a full window from when the slow one ended
    expect(batches[1].events.map((e) => e.path)).toEqual(["/r/b"]);
    finish();
  });

  it("calls a window of FLOOD_EVENTS engine events a flood and lengthens the next one", async () => {
    const { window, batches } = harness();
    window.open();
    window.push(many(FLOOD_EVENTS - 1));
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(batches[0].flooding).toBe(false);

    window.push(many(FLOOD_EVENTS));
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(batches[1].flooding).toBe(true);

    const t = Date.now();
    window.push([ev("/r/late")]);
    await vi.advanceTimersByTimeAsync(FLOOD_WINDOW_MS - 1);
    expect(batches).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches[2].at - t).toBe(FLOOD_WINDOW_MS);
    expect(batches[2].flooding).toBe(false);

    // The flood is over: back to the short window.
    window.push([ev("/r/after")]);
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(batches).toHaveLength(4);
  });

  it("does not count the VFS's own rescans towards a flood", async () => {
    const { window, batches } = harness();
    window.open();
    window.push(many(FLOOD_EVENTS * 4), true);
    window.push([ev("/r/engine")]);
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(batches[0]).toMatchObject({ flooding: false });
    expect(batches[0].events).toHaveLength(FLOOD_EVENTS * 4 + 1);
  });

  it("runs empty windows while `again` says a flood lasts, and stops when it says no more", async () => {
    let flood = true;
    const { window, batches } = harness({ again: () => flood });
    window.open();
    window.push(many(FLOOD_EVENTS));
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    await vi.advanceTimersByTimeAsync(FLOOD_WINDOW_MS);
    expect(batches).toHaveLength(2);
    expect(batches[1].events).toEqual([]);
    flood = false;
    await vi.advanceTimersByTimeAsync(WINDOW_MS); // the empty window after the flood window
    const n = batches.length;
    await vi.advanceTimersByTimeAsync(FLOOD_WINDOW_MS * 10);
    expect(batches).toHaveLength(n);
  });

  it("idle() waits for every window, including one for events pushed while processing", async () => {
    const { window, batches, finish } = harness({ manual: true });
    window.open();
    let idle = false;
    await window.idle(); // nothing pending: at once
    window.push([ev("/r/a")]);
    const done = window.idle().then(() => (idle = true));
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    window.push([ev("/r/b")]);
    finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(idle).toBe(false);
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(batches).toHaveLength(2);
    expect(idle).toBe(false);
    finish();
    await done;
    expect(idle).toBe(true);
  });

  it("logs a window that failed and goes on", async () => {
    const logs: string[] = [];
    let calls = 0;
    const window = new EventWindow(
      async () => {
        if (++calls === 1) throw new Error("boom");
      },
      { log: (m) => logs.push(m) },
    );
    window.open();
    window.push([ev("/r/a")]);
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    window.push([ev("/r/b")]);
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(calls).toBe(2);
    expect(logs.join("\n")).toMatch(/lost a window[\s\S]*boom/);
  });

  it("after stop, takes no events and releases idle waiters", async () => {
    const { window, batches } = harness();
    window.open();
    window.push([ev("/r/a")]);
    const waiting = window.idle();
    await window.stop();
    await waiting;
    window.push([ev("/r/b")]);
    await vi.advanceTimersByTimeAsync(WINDOW_MS * 4);
    expect(batches).toHaveLength(0);
  });
});
