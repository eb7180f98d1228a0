import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync, utimesSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { GitRepo, type RepoCtx } from "../../src/git/repo.js";
import { git as runGit } from "../../src/git/run.js";
import { withTempIndex } from "../../src/git/temp-index.js";
import { PathResolver } from "../../src/paths.js";
import { EventBus } from "../../src/platform/bus.js";
import { Supervisor } from "../../src/platform/supervisor.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, git, writeFile } from "./fixture.js";

/** The real index as it is on disk: its bytes and its modification time. */
function indexState(dir: string): { sha: string; mtimeMs: number } | null {
  const file = path.join(dir, ".git", "index");
  if (!existsSync(file)) return null;
  return { sha: createHash("sha256").update(readFileSync(file)).digest("hex"), mtimeMs: statSync(file).mtimeMs };
}

const names = (out: string) => out.split("\0").filter(Boolean).sort();

describe("withTempIndex", () => {
  const processes = new Supervisor();
  const tmp = tmpWorkspace({ git: true });
  const repo = new GitRepo({
    root: tmp.dir,
    processes,
    paths: new PathResolver(tmp.dir),
    maxFileBytes: 1024 * 1024,
    bus: new EventBus(),
    log: () => undefined,
  });
  const ctx: RepoCtx = { repo };
  commitFile(tmp.dir, "a.txt", "one\n");
  commitFile(tmp.dir, "b.txt", "two\n");
  git(tmp.dir, "rm", "-q", "--cached", "b.txt"); // staged: the real index differs from HEAD
  afterAll(async () => {
    await processes.stop();
    tmp.cleanup();
  });

  let real: ReturnType<typeof indexState>;
  beforeEach(() => {
    // a.txt's stat changed, its content did not: a `git diff` on the real index would refresh (rewrite) it.
    const t = new Date(Date.now() + 5_000);
    utimesSync(path.join(tmp.dir, "a.txt"), t, t);
    writeFile(tmp.dir, "new.txt", "new\n");
    real = indexState(tmp.dir);
  });

  it("copy: the real index's entries, in a file of its own that is gone after; the real index is never touched", async () => {
    let file = "";
    const staged = await withTempIndex(ctx, "copy", async (onCopy, { copied }) => {
      expect(copied).toBe(true);
      file = onCopy.env!.GIT_INDEX_FILE!;
      expect(names((await runGit(onCopy, ["ls-files", "-z"])).stdout)).toEqual(names(git(tmp.dir, "ls-files", "-z")));
      await runGit(onCopy, ["diff", "--quiet"], { ok: [0, 1] });
      await runGit(onCopy, ["update-index", "--add", "new.txt"]);
      return names((await runGit(onCopy, ["ls-files", "-z"])).stdout);
    });
    expect(staged).toEqual(["a.txt", "new.txt"]);
    expect(file.startsWith(path.join(tmp.dir, ".git"))).toBe(false);
    expect(existsSync(path.dirname(file))).toBe(false);
    expect(indexState(tmp.dir)).toEqual(real);
    expect(names(git(tmp.dir, "ls-files", "-z"))).toEqual(["a.txt"]);
  });

  it("a tree: exactly its entries (as git ls-tree lists them); empty: none", async () => {
    const head = git(tmp.dir, "rev-parse", "HEAD").trim();
    const fromTree = await withTempIndex(ctx, { tree: head }, async (c) => names((await runGit(c, ["ls-files", "-z"])).stdout));
    expect(fromTree).toEqual(names(git(tmp.dir, "ls-tree", "-r", "-z", "--name-only", head)));
    expect(await withTempIndex(ctx, { tree: null }, async (c) => (await runGit(c, ["ls-files"])).stdout)).toBe("");
    expect(await withTempIndex(ctx, "empty", async (c) => (await runGit(c, ["ls-files"])).stdout)).toBe("");
    expect(indexState(tmp.dir)).toEqual(real);
  });

  it("is removed when the work throws, and the error comes through", async () => {
    let file = "";
    const failed = withTempIndex(ctx, "copy", async (onCopy) => {
      file = onCopy.env!.GIT_INDEX_FILE!;
      await runGit(onCopy, ["update-index", "--add", "new.txt"]);
      await runGit(onCopy, ["rev-parse", "--verify", "no-such-ref"]);
    });
    await expect(failed).rejects.toMatchObject({ code: "GIT_FAILED" });
    expect(file).not.toBe("");
    expect(existsSync(path.dirname(file))).toBe(false);
    expect(indexState(tmp.dir)).toEqual(real);
  });

  it("is removed when the call is aborted in the middle of the work", async () => {
    const abort = new AbortController();
    let file = "";
    const aborting: RepoCtx = { ...ctx, signal: abort.signal };
    const aborted = withTempIndex(aborting, "copy", async (onCopy) => {
      file = onCopy.env!.GIT_INDEX_FILE!;
      await runGit(onCopy, ["update-index", "--add", "new.txt"]);
      abort.abort();
      await runGit(onCopy, ["diff", "--quiet"], { ok: [0, 1] });
    });
    await expect(aborted).rejects.toThrow();
    expect(existsSync(path.dirname(file))).toBe(false);
    expect(indexState(tmp.dir)).toEqual(real);
  });

  it("a command's own GIT_INDEX_FILE wins over the context's", async () => {
    await withTempIndex(ctx, "copy", async (outer) => {
      await withTempIndex(outer, "empty", async (inner) => {
        expect(inner.env!.GIT_INDEX_FILE).not.toBe(outer.env!.GIT_INDEX_FILE);
        expect((await runGit(inner, ["ls-files"])).stdout).toBe("");
        expect((await runGit(inner, ["ls-files"], { env: { GIT_INDEX_FILE: outer.env!.GIT_INDEX_FILE } })).stdout).toBe("a.txt\n");
      });
    });
  });
});
