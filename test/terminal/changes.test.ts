import { describe, expect, test } from "vitest";
import { ChangeCollector, mergeChanges } from "../../src/terminal/changes.js";
import { EventBus } from "../../src/platform/bus.js";
import type { FsChange } from "../../src/vfs/events.js";

const c = (path: string, kind: "created" | "modified" | "deleted", hash: string | null = kind === "deleted" ? null : "h") => ({ path, kind, hash });

describe("mergeChanges", () => {
  test("one entry per path, in order of first report, folded as the watcher folds a window", () => {
    expect(mergeChanges([c("a", "created", "1"), c("b", "modified"), c("a", "modified", "2")])).toEqual([c("a", "created", "2"), c("b", "modified")]);
    expect(mergeChanges([c("a", "created"), c("a", "deleted")])).toEqual([]);
    expect(mergeChanges([c("a", "modified"), c("a", "deleted")])).toEqual([c("a", "deleted")]);
    expect(mergeChanges([c("a", "deleted"), c("a", "created", "3")])).toEqual([c("a", "modified", "3")]);
    expect(mergeChanges([c("a", "created"), c("a", "deleted"), c("a", "created", "4")])).toEqual([c("a", "created", "4")]);
  });
});

describe("ChangeCollector", () => {
  test("takes only the actor's changes, while subscribed", () => {
    const bus = new EventBus();
    const change = (path: string, by: string | null, tool: string | null): FsChange => ({
      path,
      kind: "created",
      hash: "h",
      origin: by ? "tool" : "external",
      by,
      tool,
      stale_sessions: [],
    });
    const collector = new ChangeCollector(bus, { session: "s1", tool: "terminal_run" }).start();
    bus.emit("fs.changed", {
      changes: [
        change("mine", "s1", "terminal_run"),
        change("other-session", "s2", "terminal_run"),
        change("file-tool", "s1", "file_write"),
        change("outside", null, null),
      ],
    });
    collector.stop();
    bus.emit("fs.changed", { changes: [change("later", "s1", "terminal_run")] });
    expect(collector.result()).toEqual({ files: [c("mine", "created")], total: 1 });
  });
});
