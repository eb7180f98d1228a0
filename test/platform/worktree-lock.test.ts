import { describe, expect, it } from "vitest";
import { WorktreeLock } from "../../src/platform/worktree-lock.js";

/** A piece of work that runs until `finish()`, noting when it starts. */
function gate(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { work: async () => (log.push(name), await done, name), finish };
}

/** Every promise callback queued so far has run (one turn of the event loop, not a wait for time). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("WorktreeLock, the daemon's one lock type", () => {
  it("one writer per key, in arrival order; other keys run meanwhile; a failure frees the key", async () => {
    const lock = new WorktreeLock();
    const log: string[] = [];
    const a1 = gate(log, "a1");
    const first = lock.file("a", a1.work);
    const second = lock.file("a", async () => (log.push("a2"), "a2"));
    const failing = lock.file("b", async () => Promise.reject(new Error("no")));
    const third = lock.file("b", async () => (log.push("b2"), "b2"));
    await expect(failing).rejects.toThrow("no");
    expect(await third).toBe("b2");
    expect(log).toEqual(["a1", "b2"]);
    a1.finish();
    expect(await Promise.all([first, second])).toEqual(["a1", "a2"]);
    expect(log).toEqual(["a1", "b2", "a2"]);
  });

  it("an exclusive operation waits for the writes in flight and holds back the writes after it", async () => {
    const lock = new WorktreeLock();
    const log: string[] = [];
    const write = gate(log, "write");
    const inFlight = lock.file("a", write.work);
    const op = gate(log, "exclusive");
    const exclusive = lock.exclusive(op.work);
    const later = lock.file("b", async () => (log.push("later"), "later"));
    await settle();
    expect(log).toEqual(["write"]);
    write.finish();
    await inFlight;
    await settle();
    expect(log).toEqual(["write", "exclusive"]);
    op.finish();
    expect(await exclusive).toBe("exclusive");
    expect(await later).toBe("later");
    expect(log).toEqual(["write", "exclusive", "later"]);
  });
});
