import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileHash, initHash } from "../../src/core/hash.js";
import { DaemonClient, startDaemon } from "../helpers/daemon.js";
import { git, tmpWorkspace, writeFile } from "../helpers/tmp.js";
import { at, changes, committedDaemons, waitChange } from "./daemon-changes.js";

describe.each(["parcel", "chokidar"])("VFS with the %s engine", (engine) => {
  const { cleanups, setup } = committedDaemons(engine, { "a.txt": "one\n", ".gitignore": "ignored/\n*.log\n" });

  it("names the session that read a file when it changes outside the tools", async () => {
    const { dir, d } = await setup();
    const read = await d.ok("file_read", { path: "a.txt" }, { session: "reader" });
    writeFileSync(path.join(dir, "a.txt"), "two\n");
    const c = await waitChange(d, at("a.txt"));
    expect(c).toMatchObject({ kind: "modified", origin: "external", by: null, stale_sessions: ["reader"] });
    expect(c.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(c.hash).not.toBe(read.hash);
  });

  it("attributes a tool write to its session and tells only the other readers", async () => {
    const { d } = await setup();
    const read = await d.ok("file_read", { path: "a.txt" }, { session: "writer" });
    await d.ok("file_read", { path: "a.txt" }, { session: "other" });
    const written = await d.ok("file_write", { path: "a.txt", hash: read.hash, content: "changed\n" }, { session: "writer" });
    const c = await waitChange(d, at("a.txt"));
    expect(c).toMatchObject({ kind: "modified", hash: written.hash, origin: "tool", by: "writer", stale_sessions: ["other"] });

    await d.ok("file_delete", { path: "a.txt", hash: written.hash }, { session: "other" });
    const del = await waitChange(d, at("a.txt", "deleted"));
    expect(del).toMatchObject({ hash: null, origin: "tool", by: "other", stale_sessions: ["writer"] });

    const created = await d.ok("file_write", { path: "made/new.txt", content: "new\n" }, { session: "writer" });
    const c2 = await waitChange(d, at("made/new.txt"));
    expect(c2).toMatchObject({ kind: "created", hash: created.hash, origin: "tool", by: "writer", stale_sessions: [] });
  });

  it("reports creation, deletion and rename", async () => {
    const { dir, d } = await setup();
    writeFile(dir, "new/c.txt", "c\n");
    expect(await waitChange(d, at("new/c.txt"))).toMatchObject({ kind: "created", origin: "external" });
    renameSync(path.join(dir, "new/c.txt"), path.join(dir, "new/d.txt"));
    await waitChange(d, at("new/c.txt", "deleted"));
    expect(await waitChange(d, at("new/d.txt"))).toMatchObject({ kind: "created" });
    rmSync(path.join(dir, "new/d.txt"));
    expect(await waitChange(d, at("new/d.txt", "deleted"))).toMatchObject({ hash: null, origin: "external" });
  });

  it("reports a file deleted right after it appeared in a new nested folder, and find_file forgets it", async () => {
    const { dir, d } = await setup();
    // parcel reports `mkdir -p` late or not at all, and drops a create+delete pair within its batch: the VFS must catch up.
    for (let i = 0; i < 5; i++) {
      const rel = `n${i}/sub/x${i}.txt`;
      writeFile(dir, rel, "x\n");
      await waitChange(d, at(rel, "created"));
      rmSync(path.join(dir, rel));
      await waitChange(d, at(rel, "deleted"));
      expect((await d.ok("find_file", { query: `x${i}.txt` })).text).not.toContain(rel);
    }
  });

  it("delivers a flood of 3,000 new files in a few dozen lines, none lost", async () => {
    const { dir, d } = await setup();
    const before = d.events.length;
    const want = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const rel = `flood/d${i % 30}/f${i}.txt`;
      writeFile(dir, rel, `${i}\n`);
      want.add(rel);
    }
    await d.waitFor(() => changes(d).filter((c) => want.has(c.path) && c.kind === "created").length === want.size, 30_000);
    const lines = d.events.slice(before).filter((e) => e.event === "fs.changed");
    expect(lines.length).toBeLessThanOrEqual(36);
    expect(new Set(changes(d).map((c) => c.path))).toEqual(new Set([...want]));
  });

  it("stays silent about ignored paths, including rules added while running", async () => {
    const { dir, d } = await setup();
    writeFile(dir, "ignored/x.txt", "x\n");
    writeFile(dir, "debug.log", "x\n");
    writeFile(dir, "sub/also.log", "x\n");
    writeFile(dir, "src/.a.ts.tl-0123456789ab.tmp", "a file tool's temp file\n");
    writeFile(dir, "seen.txt", "x\n");
    await waitChange(d, at("seen.txt"));
    writeFile(dir, ".gitignore", "ignored/\n*.log\nlater/\n");
    await waitChange(d, at(".gitignore"));
    writeFile(dir, "later/y.txt", "y\n");
    writeFile(dir, "seen2.txt", "x\n");
    await waitChange(d, at("seen2.txt"));
    expect(
      changes(d)
        .map((c) => c.path)
        .sort(),
    ).toEqual([".gitignore", "seen.txt", "seen2.txt"]);
  });

  it("drops a write that leaves the content as it was", async () => {
    const { dir, d } = await setup();
    writeFile(dir, "a.txt", "two\n");
    await waitChange(d, at("a.txt"));
    writeFile(dir, "a.txt", "two\n");
    writeFile(dir, "marker.txt", "m\n");
    await waitChange(d, at("marker.txt"));
    expect(changes(d).filter((c) => c.path === "a.txt")).toHaveLength(1);
  });

  it("watches a folder again after it is deleted and recreated, and a folder moved in", async () => {
    const { dir, d } = await setup({ "f/a.txt": "a\n" });
    rmSync(path.join(dir, "f"), { recursive: true });
    await waitChange(d, at("f/a.txt", "deleted"));
    mkdirSync(path.join(dir, "f"));
    writeFile(dir, "f/b.txt", "b\n");
    await waitChange(d, at("f/b.txt", "created"));
    writeFile(dir, "f/b.txt", "b2\n");
    await waitChange(d, (c) => c.path === "f/b.txt" && c.kind === "modified");

    const outside = tmpWorkspace({ files: { "deep/er/x.txt": "x\n" } });
    cleanups.push(outside.cleanup);
    renameSync(outside.dir, path.join(dir, "moved"));
    await waitChange(d, at("moved/deep/er/x.txt", "created"));
    writeFile(dir, "moved/deep/er/y.txt", "y\n");
    await waitChange(d, at("moved/deep/er/y.txt", "created"));
  });

  it("reports a commit and a branch switch as git.changed", async () => {
    const { dir, d } = await setup();
    writeFile(dir, "a.txt", "two\n");
    git(dir, "commit", "-qam", "two");
    const head = git(dir, "rev-parse", "HEAD").trim();
    const commit = await d.waitFor((l) => l.event === "git.changed" && l.data.head === head);
    expect(commit.data).toMatchObject({ branch: "main", refs: true, operation: null });

    git(dir, "checkout", "-qb", "feature");
    const sw = await d.waitFor((l) => l.event === "git.changed" && l.data.branch === "feature");
    expect(sw.data).toMatchObject({ head, operation: null });
  });

  it("reports exactly the files a checkout changes", async () => {
    const { dir, d } = await setup({ "a.txt": "1\n", "b.txt": "1\n", "c/d.txt": "1\n", "same.txt": "s\n" });
    git(dir, "checkout", "-qb", "other");
    writeFile(dir, "a.txt", "2\n");
    writeFile(dir, "c/d.txt", "2\n");
    git(dir, "commit", "-qam", "other");
    git(dir, "checkout", "-q", "main");
    await d.waitFor((l) => l.event === "git.changed" && l.data.branch === "main");
    writeFile(dir, "marker.txt", "m\n");
    await waitChange(d, at("marker.txt"));
    const paths = changes(d).map((c) => c.path);
    expect(new Set(paths)).toEqual(new Set(["a.txt", "c/d.txt", "marker.txt"]));
  });

  it("during a checkout's flood reports an unrelated edit and git.changed, and every path the checkout changed with its hash", async () => {
    const files: Record<string, string> = { "README.md": "r\n" };
    const flood = Array.from({ length: 1000 }, (_, i) => `f/d${i % 20}/x${i}.txt`);
    for (const p of flood) files[p] = "1\n";
    const { dir, d } = await setup(files);
    // branch `other` made in a clone and pushed back, so the workspace's files are untouched until the checkout
    const clone = tmpWorkspace();
    cleanups.push(clone.cleanup);
    git(clone.dir, "clone", "-q", dir, "c");
    const c = path.join(clone.dir, "c");
    for (const [i, p] of flood.entries()) writeFile(c, p, `other ${i}\n`);
    git(c, "-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-qam", "other");
    git(c, "push", "-q", "origin", "HEAD:other");
    await initHash();
    const before = d.events.length;
    git(dir, "checkout", "-q", "other");
    writeFileSync(path.join(dir, "README.md"), "edited during the flood\n");
    await waitChange(d, at("README.md", "modified"), 60_000);
    await d.waitFor((l) => l.event === "git.changed" && l.data.branch === "other", 60_000);
    const want = new Map(flood.map((p, i) => [p, fileHash(Buffer.from(`other ${i}\n`))]));
    const seen = () =>
      d.events
        .slice(before)
        .filter((e) => e.event === "fs.changed")
        .flatMap((e) => e.data.changes);
    await d.waitFor(
      () =>
        new Set(
          seen()
            .filter((c) => want.has(c.path))
            .map((c) => c.path),
        ).size === want.size,
      60_000,
    );
    for (const ch of seen().filter((x) => want.has(x.path))) expect(ch).toMatchObject({ kind: "modified", hash: want.get(ch.path), origin: "external" });
  }, 120_000);

  it("reports a merge in progress as the operation", async () => {
    const { dir, d } = await setup();
    git(dir, "checkout", "-qb", "side");
    writeFile(dir, "a.txt", "side\n");
    git(dir, "commit", "-qam", "side");
    git(dir, "checkout", "-q", "main");
    writeFile(dir, "a.txt", "main\n");
    git(dir, "commit", "-qam", "main");
    try {
      git(dir, "merge", "side");
    } catch {
      // a conflict is what we want: the merge stays in progress
    }
    const merging = await d.waitFor((l) => l.event === "git.changed" && l.data.operation === "merge");
    expect(merging.data.branch).toBe("main");
  });

  it("outside a git repository, skips the default ignores and reports the rest", async () => {
    const ws = tmpWorkspace({ files: { "src/a.txt": "a\n", "node_modules/m/index.js": "m\n" } });
    cleanups.push(ws.cleanup);
    const d = await startDaemon(ws.dir, ["--watcher", engine]);
    cleanups.push(() => d.close());
    writeFile(ws.dir, "node_modules/m/index.js", "changed\n");
    writeFile(ws.dir, "dist/out.js", "x\n");
    writeFile(ws.dir, "src/a.txt", "b\n");
    await waitChange(d, at("src/a.txt", "modified"));
    expect(changes(d).map((c) => c.path)).toEqual(["src/a.txt"]);
    expect((await d.ok("info", { tool_id: "file_read" })).state).toMatchObject({ git: false, watched_files: 1 });
  });

  it("misses no change made right after ready", async () => {
    const ws = tmpWorkspace({ git: true, files: { "a.txt": "one\n" } });
    cleanups.push(ws.cleanup);
    const d = new DaemonClient(ws.dir, ["--watcher", engine]);
    cleanups.push(() => d.close());
    await d.ready();
    writeFileSync(path.join(ws.dir, "a.txt"), "two\n");
    await waitChange(d, at("a.txt", "modified"));
  });

  it("says in info what it watches", async () => {
    const { d } = await setup({ "a.txt": "1\n", "b/c.txt": "2\n" });
    const info = await d.ok("info", { tool_id: "file_read" });
    expect(info.state).toMatchObject({ engine, ready: true, git: true, watched_files: 2, restarts: 0, inotify_limit_hit: false, errors: [] });
  });
});
