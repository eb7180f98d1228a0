import { describe, expect, it } from "vitest";
import { once } from "../../src/core/once.js";

describe("once", () => {
  it("loads on the first call only, concurrent calls sharing it, and holds the value after", async () => {
    let loads = 0;
    const load = once(async () => ({ n: ++loads }));
    expect(load.value).toBeUndefined();
    const [a, b] = await Promise.all([load(), load()]);
    expect(a).toBe(b);
    expect(await load()).toBe(a);
    expect(load.value).toBe(a);
    expect(loads).toBe(1);
  });

  it("forgets a failed load, so the next call tries again", async () => {
    let calls = 0;
    const load = once(async () => {
      if (++calls === 1) throw new Error("first load fails");
      return "loaded";
    });
    await expect(load()).rejects.toThrow("first load fails");
    expect(load.value).toBeUndefined();
    expect(await load()).toBe("loaded");
    expect(calls).toBe(2);
  });
});
