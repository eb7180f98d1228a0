import { statSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { FileIndex } from "../../src/vfs/file-index.js";
import { FloodTracker } from "../../src/vfs/flood.js";
import { GitEvents } from "../../src/vfs/git-events.js";
import { gitReader } from "../../src/vfs/listing.js";
import { Supervisor } from "../../src/platform/supervisor.js";
import { tmpWorkspace, writeFile } from "../helpers/tmp.js";

describe("FloodTracker.seen", () => {
  it("names a file the index learnt in a flood's folder since it began, until that flood's folders are read again", () => {
    const tracker = new FloodTracker();
    tracker.afterWindow(["a"], true, 1_000);
    expect(tracker.seen("a", 1_500)).toBe(true); // the flood in progress
    expect(tracker.seen("a", 900)).toBe(false); // known from before the flood: its event may be the one dropped
    expect(tracker.seen("a", undefined)).toBe(false);
    expect(tracker.seen("b", 1_500)).toBe(false); // a folder the flood's rescan will not read
    const over = tracker.afterWindow([], false, 2_000)!;
    expect(tracker.seen("a", 1_500)).toBe(true); // over, its rescan still to come
    tracker.reread(over);
    expect(tracker.seen("a", 1_500)).toBe(false);
  });
});

describe("GitEvents.stale", () => {
  const supervisor = new Supervisor();
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });
  afterAll(() => supervisor.stop());

  it("stats only the paths a flood's events did not bring (seenInFlood), and returns those the index has wrong", async () => {
    const ws = tmpWorkspace({ git: true, files: { "d/seen.txt": "1", "d/missed.txt": "1", "d/same.txt": "1" } });
    cleanups.push(ws.cleanup);
    const index = new FileIndex();
    for (const rel of ["d/seen.txt", "d/missed.txt", "d/same.txt"]) {
      const st = statSync(path.join(ws.dir, rel));
      index.set(rel, { size: st.size, mtimeMs: st.mtimeMs });
    }
    // both rewritten by the checkout, unseen by the index: only one of them is said seen in the flood
    writeFile(ws.dir, "d/seen.txt", "22");
    writeFile(ws.dir, "d/missed.txt", "22");
    const lane = new GitEvents(
      path.join(ws.dir, ".git"),
      ws.dir,
      gitReader(supervisor, ws.dir),
      index,
      () => undefined,
      () => 0,
      () => undefined,
      0,
    );
    const paths = ["d/seen.txt", "d/missed.txt", "d/same.txt"];
    expect(await lane.stale(paths)).toEqual(["d/seen.txt", "d/missed.txt"].map((rel) => ({ path: path.join(ws.dir, rel), kind: "update" })));
    expect(await lane.stale(paths, (rel) => rel === "d/seen.txt")).toEqual([{ path: path.join(ws.dir, "d/missed.txt"), kind: "update" }]);
  });
});
