import { describe, expect, it } from "vitest";
import { CallAbort } from "../../src/dispatch/call-abort.js";

describe("CallAbort: a call's cancellation with its AbortSignal made on first use", () => {
  it("makes no signal until one is asked for, and the same one afterwards", () => {
    const a = new CallAbort();
    expect(a.madeSignal).toBeUndefined();
    const s = a.signal;
    expect(a.madeSignal).toBe(s);
    expect(a.signal).toBe(s);
    expect(s.aborted).toBe(false);
  });

  it("a signal asked for after the abort is aborted already, with the reason", () => {
    const a = new CallAbort();
    const why = new Error("cancelled");
    a.abort(why);
    expect(a.madeSignal).toBeUndefined();
    expect(a.signal.aborted).toBe(true);
    expect(a.signal.reason).toBe(why);
    expect(() => a.throwIfAborted()).toThrow(why);
    expect(() => a.signal.throwIfAborted()).toThrow(why);
  });

  it("aborts once: the signal's listeners, then onAbort's in order, each once; a later abort changes nothing", () => {
    const a = new CallAbort();
    const seen: string[] = [];
    a.onAbort(() => seen.push("first"));
    a.signal.addEventListener("abort", () => seen.push("signal"));
    a.onAbort(() => seen.push("second"));
    const first = new Error("timeout after 5 ms");
    a.abort(first);
    a.abort(new Error("cancelled"));
    expect(seen).toEqual(["signal", "first", "second"]);
    expect(a.reason).toBe(first);
    expect(a.signal.reason).toBe(first);
  });

  it("a listener taken back is not called, and taking it back twice is harmless", () => {
    const a = new CallAbort();
    const seen: string[] = [];
    const back = a.onAbort(() => seen.push("gone"));
    a.onAbort(() => seen.push("kept"));
    back();
    back();
    expect(() => a.throwIfAborted()).not.toThrow();
    a.abort(new Error("x"));
    expect(seen).toEqual(["kept"]);
  });
});
