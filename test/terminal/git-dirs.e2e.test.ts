import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { git, tmpWorkspace, writeFile } from "../helpers/tmp.js";

/** git with an identity, for repositories the test makes outside the workspace's own config. */
const ID = ["-c", "user.email=t@example.com", "-c", "user.name=T", "-c", "commit.gpgsign=false"];
/** The same for a command inside the sandbox. */
const SHELL_ID = ID.join(" ");

const ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n", ".gitignore": "build/\ncache/\n", "evil-gitfile": "gitdir: ../evil\n" } });
const upstream = mkdtempSync(path.join(os.tmpdir(), "tool-layer-upstream-"));
afterAll(() => rmSync(upstream, { recursive: true, force: true }));

// A repository in an ignored folder, with a commit.
git(ws.dir, "init", "-q", "build/inner");
git(path.join(ws.dir, "build/inner"), ...ID, "commit", "-q", "--allow-empty", "-m", "inner");
// A repository whose .git is a file naming a git dir elsewhere in the workspace (both ignored).
mkdirSync(path.join(ws.dir, "cache"));
git(ws.dir, "init", "-q", "--separate-git-dir", path.join(ws.dir, "cache/sep.git"), "build/sep");
// A submodule: its .git is a file naming .git/modules/libs/sub.
git(upstream, "init", "-q", "-b", "main");
writeFile(upstream, "u.txt", "u\n");
git(upstream, "add", ".");
git(upstream, ...ID, "commit", "-q", "-m", "upstream");
git(ws.dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", upstream, "libs/sub");
git(ws.dir, "add", ".");
git(ws.dir, ...ID, "commit", "-q", "-m", "init");

let d: DaemonClient;
daemonForSuite(ws, (c) => (d = c));

const read = (rel: string) => readFileSync(path.join(ws.dir, rel), "utf8");
const head = (rel: string) => git(path.join(ws.dir, rel), "rev-parse", "HEAD");

/** Runs `command` and returns the exit codes it echoed as `name=$?` lines. */
async function codes(command: string): Promise<Record<string, string>> {
  const r = await d.ok("terminal_run", { command });
  return Object.fromEntries([...r.output.matchAll(/^(\w+)=(\d+)$/gm)].map((m) => [m[1], m[2]]));
}

describe("every git dir and gitfile is read-only to terminal_run, wherever it is", () => {
  it("a repository in an ignored folder takes neither a commit nor a config change", async () => {
    const before = { head: head("build/inner"), config: read("build/inner/.git/config") };
    const c = await codes(
      `git -C build/inner ${SHELL_ID} commit -q --allow-empty -m evil; echo commit=$?; git -C build/inner config core.fsmonitor 'touch pwned'; echo config=$?`,
    );
    expect(c.commit).not.toBe("0");
    expect(c.config).not.toBe("0");
    expect(head("build/inner")).toBe(before.head);
    expect(read("build/inner/.git/config")).toBe(before.config);
  });

  it("a repository made just before the call (after a walk that kept its folders) takes no commit", async () => {
    await d.ok("terminal_run", { command: "true" }); // a walk the next one builds on
    git(ws.dir, "init", "-q", "build/fresh/repo");
    const c = await codes(`git -C build/fresh/repo ${SHELL_ID} commit -q --allow-empty -m evil; echo commit=$?; mkdir build/fresh/repo/.git/x; echo mkdir=$?`);
    expect(c.commit).not.toBe("0");
    expect(c.mkdir).not.toBe("0");
    expect(() => git(path.join(ws.dir, "build/fresh/repo"), "rev-parse", "-q", "--verify", "HEAD")).toThrow();
  });

  it("a submodule's gitfile cannot be rewritten, moved away or replaced through its folders", async () => {
    const gitfile = read("libs/sub/.git");
    const c = await codes(
      "cp evil-gitfile libs/sub/.git; echo cp=$?; mv libs/sub/.git libs/sub/moved; echo mv=$?; mv libs/sub libs/sub-away; echo sub=$?; mv libs libs-away; echo libs=$?",
    );
    expect(c).toEqual({ cp: "1", mv: "1", sub: "1", libs: "1" });
    expect(read("libs/sub/.git")).toBe(gitfile);
    expect(git(ws.dir, "submodule", "status")).toContain("libs/sub");
  });

  it("a .git file and the git dir it names, both in ignored folders, are read-only", async () => {
    const gitfile = read("build/sep/.git");
    expect(gitfile).toContain("cache/sep.git");
    const c = await codes(
      "cp evil-gitfile build/sep/.git; echo cp=$?; mkdir cache/sep.git/evil; echo mkdir=$?; mv cache cache-away; echo cache=$?; mv build build-away; echo build=$?",
    );
    expect(c).toEqual({ cp: "1", mkdir: "1", cache: "1", build: "1" });
    expect(read("build/sep/.git")).toBe(gitfile);
  });

  it("a repository one call makes is read-only to the next, every time, ignored or not", async () => {
    for (const dir of ["build/fresh1", "build/fresh2", "build/fresh3", "fresh1", "fresh2", "fresh3"]) {
      const made = await d.ok("terminal_run", { command: `git init -q ${dir} && git -C ${dir} ${SHELL_ID} commit -q --allow-empty -m one && echo made` });
      expect(made.output, dir).toBe("made\n");
      const first = head(dir);
      const c = await codes(`git -C ${dir} ${SHELL_ID} commit -q --allow-empty -m two; echo commit=$?`);
      expect(c.commit, dir).not.toBe("0");
      expect(head(dir), dir).toBe(first);
    }
  });
});
