import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initHash } from "../../src/core/hash.js";
import type { GitRepo } from "../../src/git/repo.js";
import { EventBus } from "../../src/platform/bus.js";
import { Supervisor } from "../../src/platform/supervisor.js";
import type { FsChange } from "../../src/vfs/events.js";
import { Workspace } from "../../src/workspace.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, git, writeFile } from "./fixture.js";

/**
 * The changelist tracker on a real workspace and repository, driven by the bus events the VFS would emit (the daemon
 * tests cover the real watcher): what it does for a flood, for a marked file, for a HEAD move.
 */
describe("the changelist tracker on the bus", () => {
  const tmp = tmpWorkspace({ git: true });
  const processes = new Supervisor();
  const bus = new EventBus();
  let ws: Workspace;
  const lines = Array.from({ length: 20 }, (_, i) => `row ${i + 1}`);
  const body = (l: string[]) => `${l.join("\n")}\n`;
  const change = (p: string, hash: string | null = null): FsChange => ({
    path: p,
    kind: "modified",
    hash,
    origin: "external",
    by: null,
    tool: null,
    stale_sessions: [],
  });

  beforeAll(async () => {
    await initHash();
    ws = new Workspace({ root: tmp.dir }, processes, bus, () => undefined);
    ws.git.start();
    commitFile(tmp.dir, "m.txt", body(lines));
  });
  afterAll(async () => {
    await ws.dispose();
    await processes.stop();
    tmp.cleanup();
  });

  const marksOf = async (svc: GitRepo) => {
    const file = await svc.lines.load({ repo: svc }, "m.txt");
    const marks = await svc.changelists.marksFor(file);
    return Object.fromEntries([...marks.lines].map(([l, list]) => [l + 1, list]));
  };

  it("reads only the marked file of a 10,000-file flood, and carries its marks through the edit", async () => {
    const svc = ws.git;
    await svc.changelists.ready();
    const edited = [...lines];
    edited[9] = "row 10 changed";
    writeFile(tmp.dir, "m.txt", body(edited));
    const file = await svc.lines.load({ repo: svc }, "m.txt");
    await svc.changelists.mark(file, { lines: [10] }, "marked");
    const before = svc.changelists.followed;

    const moved = ["inserted", ...edited];
    writeFileSync(path.join(tmp.dir, "m.txt"), body(moved));
    const flood = Array.from({ length: 10_000 }, (_, i) => change(`src/d${i % 100}/f${i}.ts`, "0123456789abcdef"));
    bus.emit("fs.changed", { changes: [...flood.slice(0, 5_000), change("m.txt", "feedfacefeedface"), ...flood.slice(5_000)] });
    await svc.changelists.idle();
    expect(svc.changelists.followed - before).toBe(1);
    expect(await marksOf(svc)).toEqual({ 1: "default", 11: "marked" });
  });

  it("settles the marks when HEAD moves (git.changed), dropping the changes HEAD now has", async () => {
    const svc = ws.git;
    const now = ["inserted", ...lines];
    now[10] = "row 10 changed";
    writeFile(tmp.dir, "m.txt", body(["inserted", ...lines]));
    git(tmp.dir, "commit", "-qam", "the inserted line");
    writeFile(tmp.dir, "m.txt", body(now));
    bus.emit("git.changed", { head: git(tmp.dir, "rev-parse", "HEAD").trim(), branch: "main", index: true, refs: true, operation: null });
    await svc.changelists.idle();
    // Followed from the event alone: the saved state is on the new HEAD's blob before any call asked.
    await svc.changelists.persistNow();
    const stored = JSON.parse(readFileSync(path.join(tmp.dir, ".git/tool-layer/changelists.json"), "utf8"));
    expect(stored.files["m.txt"]).toMatchObject({ head: git(tmp.dir, "rev-parse", "HEAD:m.txt").trim(), marks: { lines: [[10, 11, "marked"]] } });
    expect(await marksOf(svc)).toEqual({ 11: "marked" });
  });
});
