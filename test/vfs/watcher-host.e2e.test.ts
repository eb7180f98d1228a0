/**
 * The parcel watcher runs in a process of its own (src/vfs/watcher-host.ts): inside the daemon a SIGCHLD that lands on
 * its poll thread makes it throw "Unable to poll: Interrupted system call" (parcel-bundler/watcher#253), and an
 * unsubscribe after that once deadlocked the daemon. Through the real daemon: a flood of child exits while files change,
 * and a watcher host killed outright.
 */
import { unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { DaemonClient, Response } from "../helpers/daemon.js";
import { MAX_LOG_LIMIT } from "../../src/tools/git-log.js";
import { alive, waitDead } from "../helpers/process.js";
import { at, committedDaemons, waitChange } from "./daemon-changes.js";

/**
 * Calls in the flood, each a child process (git log, or a `sleep 0` through the pool) that exits: a SIGCHLD each. Parcel
 * is the engine the signals broke, so it gets the long flood; chokidar (no poll thread) a shorter one, to show the
 * flood's handling is the engine's own.
 */
const FLOOD_CALLS: Record<string, number> = { parcel: 3_000, chokidar: 1_000 };
/** Files written one after another while the flood runs, at least. */
const FLOOD_FILES = 100;
/** A clean shutdown, bounded: the calls' drain, the engines' stop, the supervisor's sweep. */
const SHUTDOWN_BOUND_MS = 30_000;

/** The flood: git_log with a different limit each time (so no two are shared) and pooled sleeps, in one write. */
function flood(n: number): { tool_id: string; params: Record<string, unknown> }[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 ? { tool_id: "debug_sleep", params: { ms: 0, pooled: true } } : { tool_id: "git_log", params: { limit: 1 + (i % MAX_LOG_LIMIT) } },
  );
}

const vfsState = async (d: DaemonClient) => (await d.ok("info", { tool_id: "file_read" })).state;

/** The daemon's exit after stdin's end, or "still running" past the bound. */
async function shutDown(d: DaemonClient): Promise<unknown> {
  d.child.stdin.end();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((resolve) => (timer = setTimeout(() => resolve("still running"), SHUTDOWN_BOUND_MS)));
  const ended = await Promise.race([d.exited, late]);
  clearTimeout(timer);
  if (alive(d.child.pid!)) d.child.kill("SIGKILL");
  return ended;
}

describe.each(["parcel", "chokidar"])("a flood of child exits with the %s engine", (engine) => {
  const { setup } = committedDaemons(engine, { "a.txt": "one\n" }, { TOOL_LAYER_DEBUG_TOOLS: "1" });

  it("every change made meanwhile is reported, the watcher never fails, every call is answered, the daemon shuts down cleanly", async () => {
    const { dir, d } = await setup();
    let answered = false;
    const answers = d.burst(flood(FLOOD_CALLS[engine])).then((a) => ((answered = true), a));
    // One file at a time, each awaited as an event, for as long as the flood runs.
    let written = 0;
    for (; written < FLOOD_FILES || !answered; written++) {
      const rel = `f${written}.txt`;
      writeFileSync(path.join(dir, rel), `${written}\n`);
      await waitChange(d, at(rel, "created"), 60_000);
    }
    const failed = (await answers).filter((a: Response) => !a.success);
    expect(failed.map((a) => a.result.code)).toEqual([]);
    expect(await vfsState(d)).toMatchObject({ ready: true, restarts: 0, errors: [] });
    expect(d.stderr).not.toMatch(/watcher \(\w+\) failed/);
    expect(await shutDown(d)).toEqual({ code: 0, signal: null });
  }, 600_000);
});

describe("the watcher host", () => {
  const { setup } = committedDaemons("parcel", { "a.txt": "one\n", "gone.txt": "x\n" });

  it("killed, is restarted, and what changed while it was down is reported before vfs.state says live again", async () => {
    const { dir, d } = await setup();
    const before = await vfsState(d);
    expect(before.host_pid).toBeGreaterThan(0);
    const seen = d.lines.length;
    // Stopped first, so the changes surely land while no host can see them: written after the kill, they could come
    // after a quick restart's relisting and be reported as ordinary events, after live:true.
    process.kill(before.host_pid, "SIGSTOP");
    writeFileSync(path.join(dir, "new.txt"), "new\n");
    writeFileSync(path.join(dir, "a.txt"), "changed while down\n");
    unlinkSync(path.join(dir, "gone.txt"));
    process.kill(before.host_pid, "SIGKILL");
    await waitDead(before.host_pid);
    await d.waitFor((l) => l.event === "vfs.state" && l.data.live === false);
    const live = await d.waitFor((l) => l.event === "vfs.state" && l.data.live === true, 30_000);
    const reported = d.lines
      .slice(seen, d.lines.indexOf(live))
      .filter((l) => l.event === "fs.changed")
      .flatMap((l) => l.data.changes);
    for (const [rel, kind] of [
      ["new.txt", "created"],
      ["a.txt", "modified"],
      ["gone.txt", "deleted"],
    ]) {
      expect(reported.some(at(rel, kind)), `${kind} ${rel} before live`).toBe(true);
    }
    const after = await vfsState(d);
    expect(after).toMatchObject({ ready: true });
    expect(after.restarts).toBeGreaterThan(0);
    expect(after.host_pid).toBeGreaterThan(0);
    expect(after.host_pid).not.toBe(before.host_pid);
    writeFileSync(path.join(dir, "later.txt"), "watched again\n");
    await waitChange(d, at("later.txt", "created"));
    expect(await shutDown(d)).toEqual({ code: 0, signal: null });
    await waitDead(after.host_pid); // it ends with the daemon
  }, 120_000);
});
