import { describe, expect, it } from "vitest";
import { isWatchLimitError } from "../../src/vfs/engine.js";

describe("isWatchLimitError", () => {
  it("recognises the inotify watch limit as each engine reports it", () => {
    expect(isWatchLimitError(Object.assign(new Error("watch /x ENOSPC"), { code: "ENOSPC" }))).toBe(true); // chokidar (fs.watch)
    expect(isWatchLimitError(new Error("inotify_add_watch on '/x' failed: No space left on device"))).toBe(true); // parcel
  });

  it("leaves other failures to the restart path", () => {
    expect(isWatchLimitError(Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" }))).toBe(false);
    expect(isWatchLimitError(undefined)).toBe(false);
  });
});
