import { existsSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { until } from "../helpers/process.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";

function committed(files: Record<string, string>) {
  const ws = tmpWorkspace({ git: true, files });
  git(ws.dir, "add", "-A");
  git(ws.dir, "commit", "-qm", "base");
  return ws;
}

/** git_status kept live through the real daemon (src/git/live-status.ts). */
describe("git_status from memory", () => {
  const ws = committed({ "a.txt": "a\n", "b.txt": "b\n" });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));

  it("answers a repeat with nothing changed from memory, and runs git again once something changed", async () => {
    const first = await d.ok("git_status");
    expect(first.cached).toBeUndefined();
    const again = await d.ok("git_status");
    expect(again.cached).toBe(true);
    expect(again.text).toBe(first.text);
  });

  it("sees a file_write at once, before its fs.changed", async () => {
    await d.ok("git_status");
    const read = await d.ok("file_read", { path: "a.txt" });
    await d.ok("file_write", { path: "a.txt", hash: read.hash, content: "changed\n" });
    const s = await d.ok("git_status");
    expect(s.cached).toBeUndefined();
    expect(s.unstaged).toEqual([{ path: "a.txt", xy: ".M" }]);
  });

  it("sees a git add made outside the daemon at once, before its git.changed (the index differs)", async () => {
    await d.ok("git_status");
    git(ws.dir, "add", "a.txt");
    const s = await d.ok("git_status");
    expect(s.staged).toEqual([{ path: "a.txt", xy: "M." }]);
  });

  it("sees a commit made outside the daemon at once (the branch moved)", async () => {
    await d.ok("git_status");
    git(ws.dir, "commit", "-qm", "outside");
    const s = await d.ok("git_status");
    expect(s.head).toBe(git(ws.dir, "rev-parse", "HEAD").trim());
    expect(s.staged).toEqual([]);
  });

  it("sees a new info/exclude rule at once", async () => {
    writeFileSync(path.join(ws.dir, "scratch.log"), "x\n");
    const from = d.lines.length;
    await d.waitFor((l) => l.event === "fs.changed" && d.lines.indexOf(l) >= from && l.data.changes.some((c: { path: string }) => c.path === "scratch.log"));
    expect((await d.ok("git_status")).untracked).toEqual(["scratch.log"]);
    writeFileSync(path.join(ws.dir, ".git/info/exclude"), "*.log\n");
    expect((await d.ok("git_status")).untracked).toEqual([]);
  });
});

/**
 * git in `dir`, again once index.lock is gone if it was refused for it: the daemon refreshes the index's stat data
 * itself after files were touched (under the lock), and git fails at once rather than wait for a lock.
 */
async function gitWhenUnlocked(dir: string, ...args: string[]): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return git(dir, ...args);
    } catch (e) {
      if (attempt === 5 || !String(e).includes("index.lock")) throw e;
      await until(() => !existsSync(path.join(dir, ".git", "index.lock")), "index.lock to go");
    }
  }
}

describe("git_status and an index rewritten outside the daemon", () => {
  const ws = committed({ "a.txt": "a\n", "b.txt": "b\n" });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));
  const indexWritten = async (from: number) =>
    d.waitFor((l) => l.event === "git.changed" && d.lines.indexOf(l) >= from && l.data.index === true && l.data.refs === false);

  it("keeps its answer when only the index's stat data was refreshed (a touch, then update-index --refresh)", async () => {
    const touch = (hours: number) => {
      const later = new Date(Date.now() + hours * 3_600_000);
      utimesSync(path.join(ws.dir, "a.txt"), later, later);
    };
    // The first touch is reported (the daemon had not hashed a.txt yet); from then on it knows the content is the same.
    let from = d.lines.length;
    touch(1);
    await d.waitFor((l) => l.event === "fs.changed" && d.lines.indexOf(l) >= from && l.data.changes.some((c: { path: string }) => c.path === "a.txt"));
    const first = await d.ok("git_status");
    touch(2);
    from = d.lines.length;
    await gitWhenUnlocked(ws.dir, "update-index", "-q", "--refresh");
    await indexWritten(from);
    const again = await d.ok("git_status");
    expect(again.cached).toBe(true);
    expect(again.text).toBe(first.text);
  });

  it("runs git again when a flag of an entry changed (assume-unchanged hides a modification)", async () => {
    let from = d.lines.length;
    writeFileSync(path.join(ws.dir, "b.txt"), "b changed\n");
    await d.waitFor((l) => l.event === "fs.changed" && d.lines.indexOf(l) >= from && l.data.changes.some((c: { path: string }) => c.path === "b.txt"));
    expect((await d.ok("git_status")).unstaged).toEqual([{ path: "b.txt", xy: ".M" }]);
    from = d.lines.length;
    git(ws.dir, "update-index", "--assume-unchanged", "b.txt");
    await indexWritten(from);
    const s = await d.ok("git_status");
    expect(s.cached).toBeUndefined();
    expect(s.unstaged).toEqual([]);
  });
});

describe("git_status and files touched but unchanged", () => {
  const files = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}.txt`, `content ${i}\n`]));
  const ws = committed(files);
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));

  it("refreshes the index's stat data (git update-index --refresh), so git no longer re-reads them", async () => {
    const later = new Date(Date.now() + 3_600_000);
    for (const f of Object.keys(files)) utimesSync(path.join(ws.dir, f), later, later);
    // git's plumbing compares stat data only: every touched file looks changed to it until the index is refreshed
    expect(git(ws.dir, "diff-files", "--name-only").trim().split("\n").length).toBe(40);
    const from = d.lines.length;
    const s = await d.ok("git_status");
    expect(s.clean).toBe(true);
    await d.waitFor((l) => l.event === "git.changed" && d.lines.indexOf(l) >= from && l.data.index === true, 20_000);
    expect(git(ws.dir, "diff-files", "--name-only")).toBe("");
    expect((await d.ok("git_status")).clean).toBe(true);
  });
});
