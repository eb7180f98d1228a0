/**
 * The oracle of the line-staging tests: what real `git add` stores for a selection made by hand. The repository is
 * copied whole (config, attributes, index and all), the file is written as the selection would leave it, and git add
 * stages it there; the test compares that index entry (mode and blob) with the one the tool wrote.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { git, writeFile } from "./fixture.js";

/** The stage-0 entry of `rel` as `ls-files -s` prints it ("" when there is none). */
export function indexEntry(dir: string, rel: string): string {
  return git(dir, "ls-files", "-s", "--", rel).trim();
}

/** Runs `work` in a copy of the repository `dir` (config, attributes, index and all), removed afterwards. */
function inCopy<T>(dir: string, work: (copy: string) => T): T {
  const copy = mkdtempSync(path.join(tmpdir(), "tool-layer-oracle-"));
  try {
    execFileSync("cp", ["-a", `${dir}/.`, copy]);
    return work(copy);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** The bytes `git checkout HEAD -- rel` writes in a copy of `dir`: HEAD's version in the worktree's form. */
export function checkedOut(dir: string, rel: string): Buffer {
  return inCopy(dir, (copy) => {
    rmSync(path.join(copy, rel), { force: true });
    git(copy, "checkout", "-q", "HEAD", "--", rel);
    return readFileSync(path.join(copy, rel));
  });
}

/** The entry `git add` makes in a copy of `dir` whose `rel` holds `content` (null: the file deleted by hand). */
export function gitAddOf(dir: string, rel: string, content: string | Buffer | null): string {
  return inCopy(dir, (copy) => {
    if (content === null) {
      // Staging a deletion by hand; `git add` of a path git no longer knows would refuse it.
      rmSync(path.join(copy, rel), { force: true });
      git(copy, "rm", "-q", "--cached", "--ignore-unmatch", "--", rel);
    } else {
      writeFile(copy, rel, content);
      git(copy, "add", "-A", "--", rel);
    }
    return indexEntry(copy, rel);
  });
}

/** The blob the index holds for `rel`, as bytes. */
export function indexBlob(dir: string, rel: string): Buffer {
  return execFileSync("git", ["show", `:${rel}`], { cwd: dir });
}
