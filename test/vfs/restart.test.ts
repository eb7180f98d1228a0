import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { initHash } from "../../src/core/hash.js";
import { MAX_RESTARTS, Vfs } from "../../src/vfs/vfs.js";
import { Workspace } from "../../src/workspace.js";
import { EventBus } from "../../src/platform/bus.js";
import { Supervisor } from "../../src/platform/supervisor.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";

// A real engine failure cannot be provoked on demand (and the inotify limit is system-wide), so these tests hand the
// VFS the error an engine would report, with real engines and real files around it.
describe.each(["parcel", "chokidar"] as const)("VFS failure handling with %s", (engine) => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup() {
    const tmp = tmpWorkspace({ git: true, files: { "a.txt": "1\n" } });
    cleanups.push(tmp.cleanup);
    const logs: string[] = [];
    const logWaiters: { test: RegExp; resolve: () => void }[] = [];
    const onLog = (m: string) => {
      logs.push(m);
      for (const w of [...logWaiters]) if (w.test.test(m)) logWaiters.splice(logWaiters.indexOf(w), 1), w.resolve();
    };
    const logged = (test: RegExp) => new Promise<void>((resolve) => (logs.some((m) => test.test(m)) ? resolve() : logWaiters.push({ test, resolve })));
    const waiters: { test: (p: string) => boolean; resolve: () => void }[] = [];
    const bus = new EventBus(onLog);
    const states: { live: boolean; reason: string }[] = [];
    let liveAgain!: () => void;
    const backLive = new Promise<void>((resolve) => (liveAgain = resolve));
    bus.on("vfs.state", (s) => {
      states.push(s);
      if (s.live) liveAgain();
    });
    bus.on("fs.changed", (data) => {
      for (const w of [...waiters]) if (data.changes.some((c) => w.test(c.path))) waiters.splice(waiters.indexOf(w), 1), w.resolve();
    });
    const processes = new Supervisor();
    cleanups.push(() => processes.stop());
    const ws = new Workspace({ root: tmp.dir, watcher: engine }, processes, bus, onLog);
    await initHash();
    const vfs = new Vfs(ws);
    await vfs.start();
    cleanups.push(() => vfs.stop());
    const changed = (rel: string) => new Promise<void>((resolve) => waiters.push({ test: (p) => p === rel, resolve }));
    const fail = (error: Error, keptWatching = false) => (vfs as any).onError("tree", (vfs as any).engines.get("tree"), error, keptWatching);
    return { dir: tmp.dir, vfs, logs, logged, changed, fail, states, backLive };
  }

  it("logs an engine error, restarts, and reports what changed while it was down", async () => {
    const { dir, vfs, logs, logged, changed, fail, states, backLive } = await setup();
    fail(new Error("simulated engine failure"));
    expect(states).toEqual([{ live: false, reason: expect.stringContaining("simulated engine failure") }]);
    const arrived = changed("b.txt");
    writeFileSync(path.join(dir, "b.txt"), "while down\n");
    // The simulated failure leaves the old engine healthy until it is stopped, so b.txt may arrive before the restart.
    await Promise.all([arrived, logged(/restarted/), backLive]);
    expect(vfs.state()).toMatchObject({ ready: true, restarts: 1, errors: ["tree: simulated engine failure"] });
    expect(logs.join("\n")).toMatch(/failed: simulated engine failure[\s\S]*restarted/);
    // vfs.state says live again only once what was missed has been reported (b.txt came before it).
    expect(states).toEqual([expect.objectContaining({ live: false }), { live: true, reason: expect.stringContaining("restarted") }]);
    const again = changed("a.txt");
    writeFileSync(path.join(dir, "a.txt"), "after restart\n");
    await again;
  });

  it("reports a file modified while no watcher watched before it says live again", async () => {
    const { dir, vfs, fail, states, backLive } = await setup();
    const reported: { path: string; kind: string }[] = [];
    let liveAfter = -1;
    (vfs as any).ws.bus.on("fs.changed", (data: { changes: { path: string; kind: string }[] }) => reported.push(...data.changes));
    (vfs as any).ws.bus.on("vfs.state", (s: { live: boolean }) => s.live && (liveAfter = reported.length));
    const engine = (vfs as any).engines.get("tree");
    await engine.stop(); // the engine is gone before the change: only the restart's own look can find it
    writeFileSync(path.join(dir, "a.txt"), "changed while down\n");
    fail(new Error("simulated engine failure"));
    await backLive;
    expect(states.map((s) => s.live)).toEqual([false, true]);
    expect(reported.slice(0, liveAfter)).toEqual([expect.objectContaining({ path: "a.txt", kind: "modified" })]);
  });

  it("reports a commit made while the git watcher was down before it says live again", async () => {
    const { dir, vfs, states, backLive } = await setup();
    const heads: (string | null)[] = [];
    let headsAtLive = -1;
    (vfs as any).ws.bus.on("git.changed", (data: { head: string | null }) => heads.push(data.head));
    (vfs as any).ws.bus.on("vfs.state", (s: { live: boolean }) => s.live && (headsAtLive = heads.length));
    const engine = (vfs as any).engines.get("git");
    await engine.stop();
    writeFileSync(path.join(dir, "a.txt"), "2\n");
    git(dir, "add", "-A");
    git(dir, "commit", "-qm", "while the git watcher was down");
    const head = git(dir, "rev-parse", "HEAD").trim();
    (vfs as any).onError("git", engine, new Error("simulated git watcher failure"));
    await backLive;
    expect(states.map((s) => s.live)).toEqual([false, true]);
    expect(heads.slice(0, headsAtLive)).toContain(head);
  });

  it("says once that it gave up after MAX_RESTARTS, and reports itself not ready", async () => {
    const { vfs, fail, states, logs } = await setup();
    (vfs as any).restarts = MAX_RESTARTS; // as after that many failed restarts
    fail(new Error("simulated engine failure"));
    expect(states).toEqual([{ live: false, reason: expect.stringMatching(/is off/) }]);
    expect(vfs.state()).toMatchObject({ ready: false, restarts: MAX_RESTARTS });
    expect(logs.join("\n")).toMatch(/gave up/);
  });

  it("logs an error the engine survived (a path it could not read) without restarting it", async () => {
    const { dir, vfs, logs, changed, fail } = await setup();
    fail(Object.assign(new Error("EACCES: permission denied, watch '/x'"), { code: "EACCES" }), true);
    expect(vfs.state()).toMatchObject({ restarts: 0, errors: ["tree: EACCES: permission denied, watch '/x'"] });
    expect(logs.join("\n")).toMatch(/EACCES/);
    const arrived = changed("a.txt");
    writeFileSync(path.join(dir, "a.txt"), "still watched\n");
    await arrived;
  });

  it("reports the inotify limit without restarting, and keeps working", async () => {
    const { dir, vfs, logs, changed, fail } = await setup();
    fail(Object.assign(new Error("inotify_add_watch on '/x' failed: No space left on device"), { code: "ENOSPC" }));
    expect(vfs.state()).toMatchObject({ inotify_limit_hit: true, restarts: 0 });
    expect(logs.join("\n")).toMatch(/inotify watch limit/);
    const arrived = changed("a.txt");
    writeFileSync(path.join(dir, "a.txt"), "still watched\n");
    await arrived;
  });
});
