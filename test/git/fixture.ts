import { createHash } from "node:crypto";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, lstatSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { git, tmpWorkspace, writeFile } from "../helpers/tmp.js";

export { git, writeFile };

/** A worktree file's text. */
export const read = (dir: string, rel: string) => readFileSync(path.join(dir, rel), "utf8");
/** Lines joined, each with its newline. */
export const lines = (...ls: string[]) => ls.map((l) => `${l}\n`).join("");

/** A bare repository in a temp folder, to push to and pull from. */
export function bareRemote(): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-remote-")));
  git(dir, "init", "-q", "--bare", "-b", "main");
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A work repository with one commit, pushed to a fresh bare remote as origin/main (upstream set). */
export function repoWithRemote(files: Record<string, string> = { "a.txt": "one\ntwo\nthree\n", "b.txt": "bee\n" }) {
  const ws = tmpWorkspace({ git: true, files });
  const remote = bareRemote();
  git(ws.dir, "add", "-A");
  git(ws.dir, "commit", "-q", "-m", "initial");
  git(ws.dir, "remote", "add", "origin", remote.dir);
  git(ws.dir, "push", "-q", "-u", "origin", "main");
  return { dir: ws.dir, remote: remote.dir, cleanup: () => (ws.cleanup(), remote.cleanup()) };
}

/** A second clone of the remote, standing for someone else pushing. */
export function otherClone(remote: string) {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-other-")));
  execFileSync("git", ["clone", "-q", remote, dir]);
  git(dir, "config", "user.email", "other@example.com");
  git(dir, "config", "user.name", "Other");
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function commitFile(dir: string, rel: string, content: string | Buffer, message = `change ${rel}`): string {
  writeFile(dir, rel, content);
  git(dir, "add", "--", rel);
  git(dir, "commit", "-q", "-m", message);
  return git(dir, "rev-parse", "HEAD").trim();
}

function tryGit(dir: string, ...args: string[]): string {
  try {
    return git(dir, ...args);
  } catch (e) {
    return `ERR ${(e as { status?: number }).status}`;
  }
}

function worktreeBytes(dir: string, rel = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (r === ".git") continue;
    const abs = path.join(dir, r);
    if (e.isDirectory()) Object.assign(out, worktreeBytes(dir, r));
    else if (e.isSymbolicLink()) out[r] = `link:${readlinkSync(abs)}`;
    else out[r] = `${lstatSync(abs).mode.toString(8)}:${createHash("sha1").update(readFileSync(abs)).digest("hex")}`;
  }
  return out;
}

/** Everything a preview must leave as it was: HEAD, every ref, the index, the worktree's bytes, config, in-progress state. */
export function snapshot(dir: string): Record<string, unknown> {
  const gitDir = git(dir, "rev-parse", "--absolute-git-dir").trim();
  return {
    head: tryGit(dir, "rev-parse", "HEAD"),
    symbolic: tryGit(dir, "symbolic-ref", "-q", "HEAD"),
    refs: git(dir, "for-each-ref", "--format=%(refname) %(objectname)"),
    index: git(dir, "ls-files", "-s"),
    cached: tryGit(dir, "diff", "--cached"),
    status: git(dir, "status", "--porcelain", "--untracked-files=all"),
    files: worktreeBytes(dir),
    config: git(dir, "config", "--local", "--list"),
    pseudoRefs: ["FETCH_HEAD", "ORIG_HEAD"].map((f) => {
      try {
        return readFileSync(path.join(gitDir, f), "utf8");
      } catch {
        return null;
      }
    }),
    inProgress: ["MERGE_HEAD", "rebase-merge", "rebase-apply"].filter((f) => {
      try {
        lstatSync(path.join(gitDir, f));
        return true;
      } catch {
        return false;
      }
    }),
  };
}

/** A bare remote's refs. */
export function remoteRefs(remote: string): string {
  return git(remote, "for-each-ref", "--format=%(refname) %(objectname)");
}

/** Runs `preview` and asserts the repositories (and remotes) are exactly as before. */
export async function expectUnchanged<T>(repos: string[], remotes: string[], preview: () => Promise<T>): Promise<T> {
  const before = { repos: repos.map(snapshot), remotes: remotes.map(remoteRefs) };
  const result = await preview();
  expect({ repos: repos.map(snapshot), remotes: remotes.map(remoteRefs) }).toEqual(before);
  return result;
}

export function hook(dir: string, name: string, script: string): void {
  writeFile(dir, `.git/hooks/${name}`, `#!/bin/sh\n${script}\n`);
  execFileSync("chmod", ["+x", path.join(dir, ".git/hooks", name)]);
}

/**
 * What an abandon must bring back exactly (SPEC 9): HEAD, the branch, every ref but the daemon's backups (an abandon
 * adds one), the index with its stages, the worktree's bytes and modes, and whether an operation is in progress.
 */
export function operationState(dir: string): Record<string, unknown> {
  const { head, symbolic, refs, index, files, inProgress, status } = snapshot(dir);
  const kept = (refs as string)
    .split("\n")
    .filter((l) => !l.startsWith("refs/tool-layer/"))
    .join("\n");
  return { head, symbolic, refs: kept, index, files, inProgress, status };
}

/** Two branches off `base`: `theirs` (branch "topic") and `ours` (main), each one commit; main is checked out. */
export function conflictingBranches(
  dir: string,
  base: Record<string, string>,
  ours: Record<string, string>,
  theirs: Record<string, string>,
  branch = "topic",
): void {
  const commitAll = (files: Record<string, string>, message: string) => {
    for (const [rel, content] of Object.entries(files)) writeFile(dir, rel, content);
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "--allow-empty", "-m", message);
  };
  commitAll(base, "base");
  git(dir, "checkout", "-q", "-b", branch);
  commitAll(theirs, "theirs");
  git(dir, "checkout", "-q", "main");
  commitAll(ours, "ours");
}

/**
 * Between the tests of a suite that shares one repository: main checked out at `base`, no operation in progress, no
 * other branch, no stash, no untracked or ignored file, and none of the daemon's records (.git/tool-layer).
 */
export function resetRepo(dir: string, base: string): void {
  for (const op of ["merge", "rebase", "cherry-pick"]) spawnSync("git", [op, "--abort"], { cwd: dir, stdio: "ignore" });
  git(dir, "checkout", "-q", "-f", "main");
  git(dir, "reset", "-q", "--hard", base);
  git(dir, "clean", "-qfdx");
  for (const b of git(dir, "for-each-ref", "--format=%(refname:short)", "refs/heads")
    .split("\n")
    .filter((b) => b && b !== "main"))
    git(dir, "branch", "-q", "-D", b);
  git(dir, "stash", "clear");
  rmSync(path.join(dir, ".git/tool-layer"), { recursive: true, force: true });
}
