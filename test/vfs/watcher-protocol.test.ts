import { describe, expect, it } from "vitest";
import { isWatchLimitError } from "../../src/vfs/engine.js";
import { type HostEvent, decodeEvents, encodeEvents, errorFrom } from "../../src/vfs/watcher-protocol.js";

describe("the watcher host's batches", () => {
  const dir = "/work/repo";
  const events: HostEvent[] = [
    { path: "/work/repo/a.txt", type: "create" },
    { path: "/work/repo/src/deep/b.ts", type: "update" },
    { path: "/work/repo/odd\nname ü.txt", type: "delete" },
    { path: "/work/repo2/outside.txt", type: "update" },
    { path: "/work/repo", type: "delete" },
  ];

  it("carry each event as its kind's letter and its path relative to the folder, absolute when outside it", () => {
    expect(encodeEvents(dir, events)).toEqual(["ca.txt", "usrc/deep/b.ts", "dodd\nname ü.txt", "u/work/repo2/outside.txt", "d/work/repo"]);
    expect(encodeEvents(`${dir}/`, events)[0]).toBe("ca.txt");
  });

  it("come back as the events they were, through JSON; an entry of an unknown kind is left out", () => {
    const line = JSON.stringify({ s: 1, e: encodeEvents(dir, events) });
    expect(line).not.toContain("\n");
    expect(decodeEvents(dir, (JSON.parse(line) as { e: string[] }).e)).toEqual(events);
    expect(decodeEvents(dir, ["xa.txt", "", "cb.txt"])).toEqual([{ path: "/work/repo/b.txt", type: "create" }]);
  });

  it("errors keep their message and errno code, so the inotify limit is still told apart", () => {
    const e = errorFrom({ message: "inotify_add_watch on '/x' failed: No space left on device", code: "ENOSPC" });
    expect(e).toBeInstanceOf(Error);
    expect(isWatchLimitError(e)).toBe(true);
    expect(isWatchLimitError(errorFrom({ message: "Unable to poll: Interrupted system call" }))).toBe(false);
  });
});
