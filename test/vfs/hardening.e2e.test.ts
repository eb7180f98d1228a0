import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { DaemonClient } from "../helpers/daemon.js";
import { git, tmpWorkspace, writeFile } from "../helpers/tmp.js";
import { at, changes, committedDaemons, nextChange, waitChange } from "./daemon-changes.js";

/**
 * The daemon's resident memory may stay under this with hostile files around: it idles near 80 MB, and the bug it
 * guards against (a read through a link to /proc/self/pagemap) took gigabytes within seconds.
 */
const RSS_BOUND_MB = 400;
/** Files a `git checkout -- .` rewrites in the checkout test: enough for its events to span several windows. */
const CHECKOUT_FILES = 3_000;

function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;
  } catch {
    return 0; // gone
  }
}

/**
 * Watches the daemon's RSS while hostile files are around, and kills it past RSS_BOUND_MB: without the fix it eats
 * gigabytes and answers nothing (not even stdin's end), and a failing test must not take the machine down with it.
 */
function guardRss(d: DaemonClient): { peak: () => number; stop: () => void } {
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(d.child.pid!));
    if (peak > RSS_BOUND_MB) d.child.kill("SIGKILL");
  }, 50);
  return { peak: () => Math.max(peak, rssMb(d.child.pid!)), stop: () => clearInterval(timer) };
}

describe.each(["parcel", "chokidar"])("VFS hardening with the %s engine", (engine) => {
  const { cleanups, setup } = committedDaemons(engine, { "a.txt": "one\n" });

  it("ignores a link to /proc/self/pagemap, a link to /dev/zero and a FIFO, and keeps answering", async () => {
    const { dir, d } = await setup();
    const rss = guardRss(d);
    cleanups.push(rss.stop);
    symlinkSync("/proc/self/pagemap", path.join(dir, "pagemap"));
    symlinkSync("/dev/zero", path.join(dir, "zero"));
    execFileSync("mkfifo", [path.join(dir, "fifo")]);
    writeFile(dir, "sub/deeper/x.txt", "x\n"); // a new folder is walked: the walk meets the links too
    symlinkSync("/proc/self/pagemap", path.join(dir, "sub/deeper/pagemap"));
    writeFile(dir, "marker.txt", "m\n"); // its change comes in the same window as the others, or after
    await waitChange(d, at("marker.txt"));
    await waitChange(d, at("sub/deeper/x.txt"));
    expect((await d.call("list")).success).toBe(true);
    expect(rss.peak()).toBeLessThan(RSS_BOUND_MB);
    const reported = changes(d).map((c) => c.path);
    expect(reported.filter((p) => /pagemap|zero|fifo/.test(p))).toEqual([]);
    const found = await d.ok("find_file", { query: "pagemap" });
    expect(found.text).not.toContain("pagemap");
  });

  it("does not index a link out of the root in a repository, at start or cloned in while running", async () => {
    const commitLink = (dir: string) => symlinkSync("/proc/self/pagemap", path.join(dir, "tracked-pagemap"));
    const { dir, d } = await setup({ "a.txt": "one\n" }, commitLink);
    const rss = guardRss(d);
    cleanups.push(rss.stop);
    expect((await d.ok("find_file", { query: "pagemap" })).text).not.toContain("tracked-pagemap");
    expect((await d.ok("info", { tool_id: "file_read" })).state).toMatchObject({ watched_files: 1 });

    const source = tmpWorkspace({ git: true, files: { "readme.txt": "r\n" } });
    cleanups.push(source.cleanup);
    symlinkSync("/proc/self/pagemap", path.join(source.dir, "pm"));
    git(source.dir, "add", "-A");
    git(source.dir, "commit", "-qm", "with a hostile link");
    git(dir, "clone", "-q", source.dir, "cloned");
    await waitChange(d, at("cloned/readme.txt", "created"));
    expect((await d.call("list")).success).toBe(true);
    expect(rss.peak()).toBeLessThan(RSS_BOUND_MB);
    expect(changes(d).some((c) => c.path === "cloned/pm")).toBe(false);
  });

  it("reports a write through a link inside the root as the tool's, under the target's path", async () => {
    const { dir, d } = await setup({ "src/a.ts": "export const a = 1;\n" });
    symlinkSync("src/a.ts", path.join(dir, "link.ts"));
    const read = await d.ok("file_read", { path: "link.ts" }, { session: "w" });
    await d.ok("file_read", { path: "src/a.ts" }, { session: "other" });
    const written = await d.ok("file_write", { path: "link.ts", hash: read.hash, content: "export const a = 2;\n" }, { session: "w" });
    const c = await waitChange(d, at("src/a.ts", "modified"));
    expect(c).toMatchObject({ hash: written.hash, origin: "tool", by: "w", tool: "file_write", stale_sessions: ["other"] });
  });

  it("names the session that read a link when its target changes outside the tools", async () => {
    const { dir, d } = await setup({ "src/a.ts": "export const a = 1;\n", "lib/other.ts": "\n" });
    symlinkSync("../src/a.ts", path.join(dir, "lib/link.ts"));
    await d.ok("file_read", { path: "lib/link.ts" }, { session: "linkreader" });
    writeFileSync(path.join(dir, "src/a.ts"), "export const a = 3;\n");
    const c = await waitChange(d, at("src/a.ts", "modified"));
    expect(c).toMatchObject({ origin: "external", by: null, stale_sessions: ["linkreader"] });
  });

  it("forgets a session at session_end: it is gone from the next change's stale_sessions", async () => {
    const { dir, d } = await setup();
    await d.ok("file_read", { path: "a.txt" }, { session: "leaving" });
    await d.ok("file_read", { path: "a.txt" }, { session: "staying" });
    let next = nextChange(d, at("a.txt", "modified"));
    writeFileSync(path.join(dir, "a.txt"), "two\n");
    expect(await next).toMatchObject({ stale_sessions: ["leaving", "staying"] });
    expect(await d.ok("session_end", {}, { session: "leaving" })).toMatchObject({ forgotten_files: 1 });
    next = nextChange(d, at("a.txt", "modified"));
    writeFileSync(path.join(dir, "a.txt"), "three\n");
    expect((await next).stale_sessions).toEqual(["staying"]);
  });

  it("bounds stale_sessions and counts the sessions left out", async () => {
    const { dir, d } = await setup();
    const sessions = Array.from({ length: 40 }, (_, i) => `reader-${String(i).padStart(2, "0")}`);
    await Promise.all(sessions.map((s) => d.ok("file_read", { path: "a.txt" }, { session: s })));
    writeFileSync(path.join(dir, "a.txt"), "two\n");
    const c = await waitChange(d, at("a.txt", "modified"));
    expect(c.stale_sessions).toEqual(sessions.slice(0, 32));
    expect(c.stale_sessions_omitted).toBe(8);
  });

  it("holds a deletion while git holds the index lock: a file git is between unlinking and creating is never reported deleted", async () => {
    const { dir, d } = await setup();
    const lock = path.join(dir, ".git", "index.lock");
    writeFileSync(lock, ""); // as git does while it rewrites the worktree
    cleanups.push(() => rmSync(lock, { force: true }));
    const before = changes(d).length;
    rmSync(path.join(dir, "a.txt"));
    // Events of other files come and go until the deletion has been held well past DELETE_CONFIRM_MS (each turn
    // waits on a real event, not a timer): a loaded machine can pause git that long between unlink and create.
    const heldFrom = Date.now();
    for (let i = 0; Date.now() - heldFrom < 1_000; i++) {
      writeFile(dir, `marker-${i}.txt`, "m\n");
      await waitChange(d, at(`marker-${i}.txt`));
    }
    writeFileSync(path.join(dir, "a.txt"), "one\n"); // git's create, with the content it had
    rmSync(lock);
    writeFile(dir, "last.txt", "m\n");
    await waitChange(d, at("last.txt"));
    // Modified at most (the index may not have hashed the old bytes to see they are the same), never deleted then created.
    expect(
      changes(d)
        .slice(before)
        .filter((c) => c.path === "a.txt" && c.kind !== "modified")
        .map((c) => c.kind),
    ).toEqual([]);
  });

  it("reports every file a `git checkout -- .` rewrites as modified, never deleted then created", async () => {
    const files: Record<string, string> = {};
    const rel = (i: number) => `d${i % 30}/f${i}.txt`;
    for (let i = 0; i < CHECKOUT_FILES; i++) files[rel(i)] = `${i}\n`;
    const { dir, d } = await setup(files);
    for (let i = 0; i < CHECKOUT_FILES; i++) writeFileSync(path.join(dir, rel(i)), `changed ${i}\n`);
    const want = new Set(Object.keys(files));
    await d.waitFor(() => changes(d).filter((c) => want.has(c.path)).length >= want.size, 60_000);
    const before = changes(d).length;
    git(dir, "checkout", "--", ".");
    // Every file came back to its committed content: each must be reported once more, as modified (waited for in any
    // kind, so that a wrong kind fails the assertion below rather than the wait).
    await d.waitFor(
      () =>
        new Set(
          changes(d)
            .slice(before)
            .map((c) => c.path),
        ).size >= want.size,
      60_000,
    );
    writeFile(dir, "marker.txt", "m\n"); // anything still in flight about those files comes before this
    await waitChange(d, at("marker.txt"));
    const after = changes(d)
      .slice(before)
      .filter((c) => want.has(c.path));
    expect(after.filter((c) => c.kind !== "modified").map((c) => `${c.kind}:${c.path}`)).toEqual([]);
  }, 120_000);
});
