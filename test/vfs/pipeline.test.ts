import { execFileSync } from "node:child_process";
import { existsSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { fileHash, initHash } from "../../src/core/hash.js";
import { ATTRIBUTION_GRACE_MS, STALE_SESSIONS_MAX } from "../../src/vfs/attribution.js";
import type { RawEvent } from "../../src/vfs/engine.js";
import { FLOOD_EVENTS, FLOOD_WINDOW_MS, WINDOW_MS } from "../../src/vfs/event-window.js";
import type { FsChange } from "../../src/vfs/events.js";
import { FileIndex } from "../../src/vfs/file-index.js";
import { ContentHistory } from "../../src/vfs/history.js";
import { IgnoreRules } from "../../src/vfs/ignore-rules.js";
import { GIT_LOCK_HOLD_MAX_MS, MAX_CHANGES_PER_LINE, Pipeline } from "../../src/vfs/pipeline.js";
import { SessionViews } from "../../src/vfs/views.js";
import { Supervisor } from "../../src/platform/supervisor.js";
import { gitReader } from "../../src/vfs/listing.js";
import { git, tmpWorkspace, writeFile } from "../helpers/tmp.js";

// The pipeline in-process, as VS Code tests its coalescer: made-up raw events (no watcher), fake timers and clock, and a
// real temporary folder for the disk it resolves them against. Only setTimeout and Date are faked: the disk reads and
// the resolver's yields (setImmediate) run for real, and idle() says when a window is done.
describe("Pipeline", () => {
  let root: string;
  let cleanup: () => void;
  let index: FileIndex;
  let views: SessionViews;
  let history: ContentHistory;
  let lines: FsChange[][];
  let pipeline: Pipeline;
  /** onFloodOver's `lost`, per flood. */
  let floodsOver: boolean[];
  const logs: string[] = [];

  beforeAll(() => initHash());
  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vi.setSystemTime(1_000_000);
    ({ dir: root, cleanup } = tmpWorkspace());
    index = new FileIndex();
    views = new SessionViews();
    history = new ContentHistory();
    lines = [];
    floodsOver = [];
    const rules = new IgnoreRules(["*.log"]);
    pipeline = new Pipeline(
      {
        root,
        hashMaxBytes: 1024 * 1024,
        views,
        history,
        emit: (event, data) => event === "fs.changed" && lines.push((data as { changes: FsChange[] }).changes),
        log: (m) => logs.push(m),
      },
      {
        index,
        gitDir: null,
        git: () => Promise.reject(new Error("no git here")),
        hooks: {
          rules: () => rules,
          onFolderMovedIn: () => undefined,
          onFolderWalked: () => undefined,
          onFloodOver: (_dirs, _since, lost) => floodsOver.push(lost),
          onIgnoreChanged: async () => undefined,
        },
      },
    );
    await pipeline.open();
  });
  afterEach(async () => {
    await pipeline.stop();
    vi.useRealTimers();
    cleanup();
  });

  const abs = (rel: string) => path.join(root, rel);
  const ev = (rel: string, kind: RawEvent["kind"]): RawEvent => ({ path: abs(rel), kind });
  const hashOf = (text: string) => fileHash(Buffer.from(text));
  /** Known to the index with its hash, as after an earlier window. */
  function known(rel: string, text: string): void {
    writeFile(root, rel, text);
    index.set(rel, { hash: hashOf(text) });
  }
  /** Pushes events, lets their window (and any it leads to: a deletion is looked at twice) run, returns the changes. */
  async function window(events: RawEvent[]): Promise<FsChange[]> {
    const before = lines.length;
    pipeline.push(events);
    await settle();
    return lines.slice(before).flat();
  }
  /** Lets real IO run (the resolver reads the disk) until `done` says so; fake time does not move meanwhile. */
  async function until(done: () => boolean): Promise<void> {
    while (!done()) await new Promise((resolve) => setImmediate(resolve));
  }
  /** Runs windows (flood windows too) until nothing is pending. */
  async function settle(): Promise<void> {
    let idle = false;
    void pipeline.idle().then(() => (idle = true));
    while (!idle) {
      await vi.advanceTimersByTimeAsync(WINDOW_MS);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  const summary = (changes: FsChange[]) => changes.map((c) => `${c.kind}:${c.path}`).sort();

  it("reports what the disk says, coalesced per path", async () => {
    writeFile(root, "new.txt", "n\n");
    known("gone.txt", "g\n");
    rmSync(abs("gone.txt"));
    known("same.txt", "s\n");
    known("edited.txt", "e\n");
    writeFile(root, "edited.txt", "e2\n");
    const changes = await window([
      ev("new.txt", "create"),
      ev("new.txt", "update"),
      ev("gone.txt", "delete"),
      ev("same.txt", "update"),
      ev("edited.txt", "update"),
      ev("tmp.txt", "create"),
      ev("tmp.txt", "delete"),
      ev("debug.log", "create"),
    ]);
    expect(summary(changes)).toEqual(["created:new.txt", "deleted:gone.txt", "modified:edited.txt"]);
    expect(changes.find((c) => c.path === "new.txt")).toEqual({
      path: "new.txt",
      kind: "created",
      hash: hashOf("n\n"),
      origin: "external",
      by: null,
      tool: null,
      stale_sessions: [],
    });
    expect(changes.find((c) => c.path === "gone.txt")?.hash).toBeNull();
    expect(index.has("new.txt") && !index.has("gone.txt")).toBe(true);
    expect(history.size.entries).toBe(0); // nobody's versions: no content kept
  });

  it("a delete and a create of one file in one window is a modification", async () => {
    known("a.txt", "old\n");
    writeFile(root, "a.txt", "new\n");
    expect(summary(await window([ev("a.txt", "delete"), ev("a.txt", "create")]))).toEqual(["modified:a.txt"]);
  });

  it("a file replaced by unlink and create whose two events fall in two windows is modified, never deleted then created", async () => {
    // git checkout writes a file by unlink + create: with 10,000 files some pairs straddle a window boundary.
    known("a.txt", "old\n");
    known("b.txt", "same\n");
    writeFile(root, "a.txt", "new\n");
    const first = await window([ev("a.txt", "delete"), ev("b.txt", "delete")]);
    const second = await window([ev("a.txt", "create"), ev("a.txt", "update"), ev("b.txt", "create")]);
    expect(summary(first)).toEqual(["modified:a.txt"]); // b.txt came back byte-identical: no change at all
    expect(first[0].hash).toBe(hashOf("new\n"));
    expect(second).toEqual([]);
  });

  it("looks at a file found gone again DELETE_CONFIRM_MS later: back by then is modified, still gone is deleted", async () => {
    // A loaded machine can pause git between a file's unlink and its create, right when the window reads the disk.
    known("a.txt", "old\n");
    known("b.txt", "b\n");
    rmSync(abs("a.txt"));
    rmSync(abs("b.txt"));
    const before = lines.length;
    pipeline.push([ev("a.txt", "delete"), ev("b.txt", "delete")]);
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    await until(() => vi.getTimerCount() > 0); // the first window is done and has scheduled the second look
    expect(lines.length).toBe(before);
    writeFile(root, "a.txt", "new\n");
    await settle();
    expect(summary(lines.slice(before).flat())).toEqual(["deleted:b.txt", "modified:a.txt"]);
  });

  it("holds a file found gone back while a flood lasts, and reports it modified when it is back", async () => {
    known("a.txt", "old\n");
    rmSync(abs("a.txt"));
    const flood = (n: number) => {
      const events: RawEvent[] = [];
      for (let i = 0; i < FLOOD_EVENTS; i++) {
        writeFile(root, `f${n}/x${i}.txt`, `${i}\n`);
        events.push(ev(`f${n}/x${i}.txt`, "create"));
      }
      return events;
    };
    pipeline.push([ev("a.txt", "delete"), ...flood(1)]);
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    await until(() => vi.getTimerCount() > 0);
    pipeline.push(flood(2)); // still flooding in the next window: a.txt is still gone, and still held back
    await vi.advanceTimersByTimeAsync(FLOOD_WINDOW_MS);
    await until(() => lines.flat().filter((c) => c.path.startsWith("f2/")).length === FLOOD_EVENTS);
    writeFile(root, "a.txt", "new\n");
    await settle();
    const reported = lines.flat().filter((c) => c.path === "a.txt");
    expect(reported.map((c) => c.kind)).toEqual(["modified"]);
  });

  it("expands a new folder to its files and a deleted one to the files it had", async () => {
    writeFile(root, "dir/x.txt", "x\n");
    writeFile(root, "dir/sub/y.txt", "y\n");
    expect(summary(await window([ev("dir", "create")]))).toEqual(["created:dir/sub/y.txt", "created:dir/x.txt"]);
    rmSync(abs("dir"), { recursive: true });
    expect(summary(await window([ev("dir", "delete")]))).toEqual(["deleted:dir/sub/y.txt", "deleted:dir/x.txt"]);
  });

  it("attributes a change to the tool write that brings its hash, and keeps its content for the writer's next diff", async () => {
    known("a.txt", "old\n");
    views.record("reader", "a.txt", hashOf("old\n"));
    views.record("writer", "a.txt", hashOf("old\n"));
    pipeline.expect({ session: "writer", tool: "file_write", rel: "a.txt", hash: hashOf("new\n") });
    writeFile(root, "a.txt", "new\n");
    const [c] = await window([ev("a.txt", "update")]);
    expect(c).toMatchObject({ kind: "modified", origin: "tool", by: "writer", tool: "file_write", stale_sessions: ["reader"] });
    expect(history.get(hashOf("new\n"))?.toString()).toBe("new\n");
  });

  it("attributes changes seen while an operation's window is open, and within the grace after it closed", async () => {
    const op = pipeline.openWindow({ session: "s1", tool: "git_checkout" });
    writeFile(root, "during.txt", "1\n");
    const during = await window([ev("during.txt", "create")]);
    op.close();
    writeFile(root, "grace.txt", "2\n");
    pipeline.push([ev("grace.txt", "create")]);
    await vi.advanceTimersByTimeAsync(ATTRIBUTION_GRACE_MS + 1); // processed after the grace: seen within it is what counts
    await until(() => lines.flat().some((c) => c.path === "grace.txt"));
    writeFile(root, "after.txt", "3\n");
    const later = await window([ev("after.txt", "create")]);
    const grace = lines.flat().find((c) => c.path === "grace.txt");
    expect(during[0]).toMatchObject({ origin: "tool", by: "s1", tool: "git_checkout" });
    expect(grace).toMatchObject({ origin: "tool", by: "s1" });
    expect(later[0]).toMatchObject({ origin: "external", by: null });
    expect(history.get(hashOf("1\n"))).toBeDefined(); // an operation's versions, for its session's next read
  });

  it("attributes a deletion seen in an operation's window to it, though it is confirmed after the grace", async () => {
    // A command that removes a file and exits: the deletion is held DELETE_CONFIRM_MS, past the window's grace.
    known("old.txt", "o\n");
    const op = pipeline.openWindow({ session: "s1", tool: "terminal_run" });
    rmSync(abs("old.txt"));
    op.close();
    await vi.advanceTimersByTimeAsync(ATTRIBUTION_GRACE_MS - 10); // the watcher trails the disk: its event comes late in the grace
    pipeline.push([ev("old.txt", "delete")]);
    await settle();
    expect(lines.flat()).toEqual([expect.objectContaining({ path: "old.txt", kind: "deleted", origin: "tool", by: "s1", tool: "terminal_run" })]);
  });

  it("splits a large window into lines of at most MAX_CHANGES_PER_LINE", async () => {
    const n = MAX_CHANGES_PER_LINE * 2 + 5;
    const events: RawEvent[] = [];
    for (let i = 0; i < n; i++) {
      writeFile(root, `many/f${i}.txt`, `${i}\n`);
      events.push(ev(`many/f${i}.txt`, "create"));
    }
    const before = lines.length;
    pipeline.push(events);
    await settle(); // a flood: the windows after it run too
    expect(lines.slice(before).map((l) => l.length)).toEqual([MAX_CHANGES_PER_LINE, MAX_CHANGES_PER_LINE, 5]);
  });

  it("waits the longer flood window after a flood, and reads the flood's folders again once it is over", async () => {
    const events: RawEvent[] = [];
    for (let i = 0; i < FLOOD_EVENTS; i++) {
      writeFile(root, `flood/f${i}.txt`, `${i}\n`);
      events.push(ev(`flood/f${i}.txt`, "create"));
    }
    pipeline.push(events);
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    await until(() => lines.flat().length === FLOOD_EVENTS); // the flood window is scheduled once this one is done
    // The kernel dropped this one's event: the rescan after the flood finds it.
    writeFile(root, "flood/lost.txt", "lost\n");
    writeFile(root, "late.txt", "late\n");
    pipeline.push([ev("late.txt", "create")]);
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(lines.flat().some((c) => c.path === "late.txt")).toBe(false); // a normal window would have run by now
    await vi.advanceTimersByTimeAsync(FLOOD_WINDOW_MS - WINDOW_MS);
    await until(() => lines.flat().some((c) => c.path === "late.txt"));
    // That window was no flood, so the flood is over: its folders are read again, and the rescan's window reports.
    await settle();
    expect(lines.flat().find((c) => c.path === "flood/lost.txt")).toMatchObject({ kind: "created" });
    expect(floodsOver).toEqual([true]); // the rescan found what no event said: the engine is worth a fresh crawl
  });

  it("after a flood the engine reported in full, says nothing was lost (no fresh crawl of the tree)", async () => {
    const events: RawEvent[] = [];
    for (let i = 0; i < FLOOD_EVENTS; i++) {
      writeFile(root, `flood/f${i}.txt`, `${i}\n`);
      events.push(ev(`flood/f${i}.txt`, "create"));
    }
    await window(events);
    expect(lines.flat()).toHaveLength(FLOOD_EVENTS);
    expect(floodsOver).toEqual([false]);
  });

  it("lists the sessions that saw another version, at most STALE_SESSIONS_MAX of them", async () => {
    known("a.txt", "v1\n");
    for (let i = 0; i < STALE_SESSIONS_MAX + 3; i++) views.record(`s${String(i).padStart(2, "0")}`, "a.txt", hashOf("v1\n"));
    views.record("current", "a.txt", hashOf("v2\n"));
    writeFile(root, "a.txt", "v2\n");
    const [c] = await window([ev("a.txt", "update")]);
    expect(c.stale_sessions).toHaveLength(STALE_SESSIONS_MAX);
    expect(c.stale_sessions).not.toContain("current");
    expect(c.stale_sessions_omitted).toBe(3);
    views.forgetSession("s00");
    writeFile(root, "a.txt", "v3\n");
    const [d] = await window([ev("a.txt", "update")]);
    expect(d.stale_sessions).not.toContain("s00");
  });

  it("never reads through a link that leaves the root, nor a FIFO; a link inside is its target", async () => {
    symlinkSync("/proc/self/pagemap", abs("pagemap"));
    symlinkSync("/dev/zero", abs("zero"));
    execFileSync("mkfifo", [abs("fifo")]);
    writeFile(root, "src/real.ts", "r\n");
    symlinkSync("src/real.ts", abs("link.ts"));
    views.record("linkreader", "src/real.ts", hashOf("old\n"));
    const changes = await window([ev("pagemap", "create"), ev("zero", "create"), ev("fifo", "create"), ev("link.ts", "create")]);
    expect(changes).toEqual([expect.objectContaining({ path: "link.ts", kind: "created", hash: hashOf("r\n"), stale_sessions: ["linkreader"] })]);
    expect(index.has("pagemap") || index.has("zero") || index.has("fifo")).toBe(false);
  });

  it("reports a watched file that became a link out of the root as deleted", async () => {
    known("a.txt", "a\n");
    rmSync(abs("a.txt"));
    symlinkSync("/proc/self/pagemap", abs("a.txt"));
    expect(summary(await window([ev("a.txt", "delete"), ev("a.txt", "create")]))).toEqual(["deleted:a.txt"]);
    expect(index.has("a.txt")).toBe(false);
  });
});

describe("Pipeline with git", () => {
  const supervisor = new Supervisor();
  const cleanups: (() => unknown)[] = [];
  beforeAll(() => initHash());
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(() => supervisor.stop());

  /** A pipeline on the repository at `dir` with git's lane, emitting to `emit`; `onFloodOver` sees each flood's end. */
  const gitPipeline = (
    dir: string,
    emit: (event: string, data: unknown) => void,
    onFloodOver: (dirs: Set<string>) => void = () => undefined,
    index = new FileIndex(),
  ) =>
    new Pipeline(
      { root: dir, hashMaxBytes: 1024 * 1024, views: new SessionViews(), history: new ContentHistory(), emit, log: () => undefined },
      {
        index,
        gitDir: path.join(dir, ".git"),
        git: gitReader(supervisor, dir),
        hooks: {
          rules: () => new IgnoreRules(),
          onFolderMovedIn: () => undefined,
          onFolderWalked: () => undefined,
          onFloodOver,
          onIgnoreChanged: async () => undefined,
        },
      },
    );

  it.each([
    ["a fresh lock: one flood, its folders read once after the lock goes", 0, [1]],
    ["a lock left an hour before (a git that crashed): it holds nothing, the thin window ends the flood", 3_600_000, [1, 1]],
  ])("keeps a flood on while git holds the index lock: %s", async (_what, lockAgeMs, expectedFloods) => {
    const ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
    cleanups.push(ws.cleanup);
    const changed: string[] = [];
    let changedNow: () => void = () => undefined;
    const floodsOver: number[] = [];
    const pipeline = gitPipeline(
      ws.dir,
      (event, data) => {
        if (event === "fs.changed") changed.push(...(data as { changes: FsChange[] }).changes.map((c) => c.path));
        changedNow();
      },
      (dirs) => floodsOver.push(dirs.size),
    );
    cleanups.push(() => pipeline.stop());
    await pipeline.open();
    const reported = (rel: string) => new Promise<void>((resolve) => (changedNow = () => changed.includes(rel) && resolve()));
    const lock = path.join(ws.dir, ".git", "index.lock");
    writeFileSync(lock, ""); // a checkout in progress
    const lockTime = new Date(Date.now() - lockAgeMs);
    utimesSync(lock, lockTime, lockTime);
    const events: RawEvent[] = [];
    for (let i = 0; i < FLOOD_EVENTS; i++) {
      writeFile(ws.dir, `flood/f${i}.txt`, `${i}\n`);
      events.push({ path: path.join(ws.dir, `flood/f${i}.txt`), kind: "create" });
    }
    let seen = reported(`flood/f${FLOOD_EVENTS - 1}.txt`);
    pipeline.push(events);
    await seen;
    // git slows down: a window too thin for a flood, while the lock says git is still at it
    writeFile(ws.dir, "flood/slow.txt", "slow\n");
    seen = reported("flood/slow.txt");
    pipeline.push([{ path: path.join(ws.dir, "flood/slow.txt"), kind: "create" }]);
    await seen;
    // and writes the rest: still the same flood
    const rest: RawEvent[] = [];
    for (let i = 0; i < FLOOD_EVENTS; i++) {
      writeFile(ws.dir, `flood/g${i}.txt`, `${i}\n`);
      rest.push({ path: path.join(ws.dir, `flood/g${i}.txt`), kind: "create" });
    }
    seen = reported(`flood/g${FLOOD_EVENTS - 1}.txt`);
    pipeline.push(rest);
    await seen;
    rmSync(lock); // git is done: the next window finds the flood over, and its folders are read again once
    await pipeline.idle();
    expect(floodsOver).toEqual(expectedFloods);
  });

  it("holds a file found empty while git holds the index lock (between its create and its write), and reports what git wrote", async () => {
    const ws = tmpWorkspace({ git: true, files: { "a.txt": "main\n", "b.txt": "main\n" } });
    cleanups.push(ws.cleanup);
    const changes: FsChange[] = [];
    let changedNow: () => void = () => undefined;
    const pipeline = gitPipeline(ws.dir, (event, data) => {
      if (event === "fs.changed") changes.push(...(data as { changes: FsChange[] }).changes);
      changedNow();
    });
    cleanups.push(() => pipeline.stop());
    await pipeline.open();
    const reported = (rel: string) => new Promise<void>((resolve) => (changedNow = () => changes.some((c) => c.path === rel) && resolve()));
    const lock = path.join(ws.dir, ".git", "index.lock");
    writeFileSync(lock, ""); // a checkout in progress: a.txt created, not yet written; b.txt done
    writeFileSync(path.join(ws.dir, "a.txt"), "");
    writeFile(ws.dir, "b.txt", "other\n");
    let seen = reported("b.txt");
    pipeline.push(["a.txt", "b.txt"].map((rel) => ({ path: path.join(ws.dir, rel), kind: "update" as const })));
    await seen;
    expect(changes.map((c) => c.path)).toEqual(["b.txt"]);
    // git writes a.txt and lets the lock go; the write's own event is lost: the held path is looked at again anyway
    seen = reported("a.txt");
    writeFile(ws.dir, "a.txt", "other\n");
    rmSync(lock);
    await seen;
    expect(changes).toEqual([
      expect.objectContaining({ path: "b.txt", hash: fileHash(Buffer.from("other\n")) }),
      expect.objectContaining({ path: "a.txt", hash: fileHash(Buffer.from("other\n")) }),
    ]);
  });

  it(
    "reports a file found empty under an index lock that never goes (a git that died holding it), after the hold's bound",
    async () => {
      const ws = tmpWorkspace({ git: true, files: { "a.txt": "main\n" } });
      cleanups.push(ws.cleanup);
      const changes: FsChange[] = [];
      let changedNow: () => void = () => undefined;
      const pipeline = gitPipeline(ws.dir, (event, data) => {
        if (event === "fs.changed") changes.push(...(data as { changes: FsChange[] }).changes);
        changedNow();
      });
      cleanups.push(() => pipeline.stop());
      await pipeline.open();
      const seen = new Promise<void>((resolve) => (changedNow = () => changes.some((c) => c.path === "a.txt") && resolve()));
      writeFileSync(path.join(ws.dir, ".git", "index.lock"), "");
      writeFileSync(path.join(ws.dir, "a.txt"), "");
      pipeline.push([{ path: path.join(ws.dir, "a.txt"), kind: "update" }]);
      await seen; // no further event, the lock still there: the held path is looked at again until the bound lets it go
      expect(existsSync(path.join(ws.dir, ".git", "index.lock"))).toBe(true);
      expect(changes).toEqual([expect.objectContaining({ path: "a.txt", hash: fileHash(Buffer.alloc(0)) })]);
    },
    GIT_LOCK_HOLD_MAX_MS * 3,
  );

  it("reports a file emptied while no git command holds the index lock, at once", async () => {
    const ws = tmpWorkspace({ git: true, files: { "a.txt": "main\n" } });
    cleanups.push(ws.cleanup);
    const changes: FsChange[] = [];
    const pipeline = gitPipeline(ws.dir, (event, data) => {
      if (event === "fs.changed") changes.push(...(data as { changes: FsChange[] }).changes);
    });
    cleanups.push(() => pipeline.stop());
    await pipeline.open();
    writeFileSync(path.join(ws.dir, "a.txt"), "");
    pipeline.push([{ path: path.join(ws.dir, "a.txt"), kind: "update" }]);
    await pipeline.idle();
    expect(changes).toEqual([expect.objectContaining({ path: "a.txt", hash: fileHash(Buffer.alloc(0)) })]);
  });

  it("after a checkout's flood reports every path git moved, those whose events the kernel dropped too", async () => {
    const moved = [...Array.from({ length: FLOOD_EVENTS + 10 }, (_, i) => `d${i}/f.txt`), "d0/dropped.txt", "quiet/dropped.txt"];
    const ws = tmpWorkspace({ git: true, files: Object.fromEntries(moved.map((rel) => [rel, "main\n"])) });
    cleanups.push(ws.cleanup);
    git(ws.dir, "add", "-A");
    git(ws.dir, "commit", "-qm", "main");
    const main = git(ws.dir, "rev-parse", "--abbrev-ref", "HEAD").trim();
    git(ws.dir, "checkout", "-qb", "other");
    for (const rel of moved) writeFile(ws.dir, rel, "other\n");
    git(ws.dir, "commit", "-qam", "other");
    git(ws.dir, "checkout", "-q", main);
    const index = new FileIndex();
    for (const rel of moved) {
      const st = statSync(path.join(ws.dir, rel));
      index.set(rel, { size: st.size, mtimeMs: st.mtimeMs, hash: fileHash(Buffer.from("main\n")) });
    }
    const changed = new Set<string>();
    const pipeline = gitPipeline(
      ws.dir,
      (event, data) => {
        if (event === "fs.changed") for (const c of (data as { changes: FsChange[] }).changes) changed.add(c.path);
      },
      undefined,
      index,
    );
    cleanups.push(() => pipeline.stop());
    await pipeline.open();
    git(ws.dir, "checkout", "-q", "other");
    // the flood's events, less the two the kernel dropped: one in a folder of the flood, one in a folder it never touched
    const events = moved.filter((rel) => !rel.endsWith("dropped.txt")).map((rel) => ({ path: path.join(ws.dir, rel), kind: "update" as const }));
    pipeline.push([...events, { path: path.join(ws.dir, ".git", "HEAD"), kind: "update" }]);
    await pipeline.idle();
    expect([...changed].sort()).toEqual([...moved].sort());
  });

  it("reports git.changed when HEAD moves, not after the files the same checkout wrote are resolved", async () => {
    const ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
    cleanups.push(ws.cleanup);
    git(ws.dir, "add", "-A");
    git(ws.dir, "commit", "-qm", "init");
    const emitted: string[] = [];
    const pipeline = gitPipeline(ws.dir, (event) => emitted.push(event));
    cleanups.push(() => pipeline.stop());
    await pipeline.open();
    const events: RawEvent[] = [];
    for (let i = 0; i < 2_000; i++) {
      writeFile(ws.dir, `flood/d${i % 20}/f${i}.txt`, `${i}\n`);
      events.push({ path: path.join(ws.dir, `flood/d${i % 20}/f${i}.txt`), kind: "create" });
    }
    git(ws.dir, "checkout", "-qb", "feature");
    pipeline.push([...events, { path: path.join(ws.dir, ".git", "HEAD"), kind: "update" }]);
    await pipeline.idle();
    expect(emitted[0]).toBe("git.changed");
    expect(emitted.filter((e) => e === "fs.changed").length).toBeGreaterThanOrEqual(2);
  });
});
