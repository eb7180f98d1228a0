import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GitRepo } from "../../src/git/repo.js";
import { PathResolver } from "../../src/paths.js";
import { EventBus } from "../../src/platform/bus.js";
import { Supervisor } from "../../src/platform/supervisor.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, git } from "./fixture.js";

const started = (s: Supervisor) => s.state().started as number;

function repoAt(root: string, processes: Supervisor): GitRepo {
  return new GitRepo({ root, processes, paths: new PathResolver(root), maxFileBytes: 1024 * 1024, bus: new EventBus(), log: () => undefined });
}

/** A repository stopped on a conflict in f.txt (a merge of two branches that both changed its line). */
function conflicted() {
  const ws = tmpWorkspace({ git: true });
  commitFile(ws.dir, "f.txt", "base\n");
  git(ws.dir, "checkout", "-q", "-b", "theirs");
  commitFile(ws.dir, "f.txt", "theirs\n");
  git(ws.dir, "checkout", "-q", "main");
  commitFile(ws.dir, "f.txt", "ours\n");
  try {
    git(ws.dir, "merge", "-q", "theirs");
  } catch {
    // the conflict is the point
  }
  return ws;
}

describe("the location of a root's repository", () => {
  const processes = new Supervisor();
  afterAll(() => processes.stop());

  it("is found by one rev-parse however many ask at once", async () => {
    const tmp = tmpWorkspace({ git: true });
    try {
      const repo = repoAt(tmp.dir, processes);
      const before = started(processes);
      const dirs = await Promise.all(Array.from({ length: 8 }, () => repo.gitDir()));
      expect(new Set(dirs)).toEqual(new Set([git(tmp.dir, "rev-parse", "--absolute-git-dir").trim()]));
      expect(started(processes) - before).toBe(1);
      await repo.gitDir();
      expect(started(processes) - before).toBe(1);
    } finally {
      tmp.cleanup();
    }
  });

  it("says what git says: git dir, common dir and prefix of a subfolder", async () => {
    const tmp = tmpWorkspace({ git: true, files: { "sub/x.txt": "x\n" } });
    try {
      const sub = path.join(tmp.dir, "sub");
      const said = git(sub, "rev-parse", "--absolute-git-dir", "--path-format=absolute", "--git-common-dir", "--show-prefix").split("\n");
      expect(await repoAt(sub, processes).location()).toEqual({ gitDir: said[0], commonDir: said[1], prefix: said[2], insideWorkTree: true });
    } finally {
      tmp.cleanup();
    }
  });

  it("is looked for again once the git dir is gone, and a failure is not remembered", async () => {
    const tmp = tmpWorkspace({ git: true });
    try {
      const repo = repoAt(tmp.dir, processes);
      await repo.gitDir();
      rmSync(path.join(tmp.dir, ".git"), { recursive: true, force: true });
      await expect(repo.gitDir()).rejects.toMatchObject({ code: "NOT_A_REPOSITORY" });
      expect(await repo.tryLocation()).toBeNull();
      git(tmp.dir, "init", "-q");
      expect(await repo.gitDir()).toBe(path.join(tmp.dir, ".git"));
    } finally {
      tmp.cleanup();
    }
  });
});

describe("two roots in one process", () => {
  it("share no git version: one root's failure to run git does not show in the other's state", async () => {
    const a = tmpWorkspace({ git: true });
    const b = tmpWorkspace({ git: true });
    const stopped = new Supervisor();
    await stopped.stop();
    const live = new Supervisor();
    try {
      expect(await repoAt(a.dir, stopped).state()).toMatchObject({ available: false });
      expect(await repoAt(b.dir, live).state()).toMatchObject({ available: true, repository: true });
    } finally {
      await live.stop();
      a.cleanup();
      b.cleanup();
    }
  });

  it("share no git dir, index listing or stage merge: a change in one never shows in the other's caches", async () => {
    const processes = new Supervisor();
    const a = conflicted();
    const b = conflicted();
    try {
      const [ra, rb] = [repoAt(a.dir, processes), repoAt(b.dir, processes)];
      const listed = async (r: GitRepo) => (await r.conflictIndex.read({ repo: r }, await r.gitDir())).entries.map((e) => e.path);
      expect([await listed(ra), await listed(rb)]).toEqual([["f.txt"], ["f.txt"]]);

      // a's conflict resolved: a lists nothing, b still lists its own.
      git(a.dir, "add", "f.txt");
      expect([await listed(ra), await listed(rb)]).toEqual([[], ["f.txt"]]);

      // A merge made in a's cache is not in b's, though both hold the same stages.
      const [entry] = (await rb.conflictIndex.read({ repo: rb }, await rb.gitDir())).entries;
      const text = (s: string) => ({ lines: [s], eols: ["\n" as const] });
      ra.merges.merge(entry, { base: text("base"), ours: text("ours"), theirs: text("theirs") }, 7);
      expect(ra.merges.cached(entry, 7)).not.toBeNull();
      expect(rb.merges.cached(entry, 7)).toBeNull();

      // a's repository gone: a says so, b keeps its git dir and answers.
      const bDir = await rb.gitDir();
      rmSync(path.join(a.dir, ".git"), { recursive: true, force: true });
      await expect(ra.gitDir()).rejects.toMatchObject({ code: "NOT_A_REPOSITORY" });
      expect(await rb.gitDir()).toBe(bDir);
      expect(await listed(rb)).toEqual(["f.txt"]);
    } finally {
      await processes.stop();
      a.cleanup();
      b.cleanup();
    }
  });
});
