import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, git, writeFile } from "./fixture.js";

/** Seconds back in time of the next touchBack: each call lands in another second than every earlier one. */
let age = 1000;

/**
 * Moves a file's mtime to a second no earlier call used, without changing its content, so the next git that looks at
 * it must re-read it (git compares mtimes to the second here: two touches in one second would look alike).
 */
function touchBack(dir: string, rel: string): void {
  const t = new Date(Date.now() - (age += 5) * 1000);
  utimesSync(path.join(dir, rel), t, t);
}

describe("read-only git and dry runs run nothing a nested repository's configuration names, and leave .git/index alone", () => {
  let ws: ReturnType<typeof tmpWorkspace>;
  let upstream: ReturnType<typeof tmpWorkspace>;
  let markers: string;
  let d: DaemonClient;
  const marker = (name: string) => path.join(markers, name);
  const ran = () => ["fsmonitor-sub", "fsmonitor-emb", "filter-sub", "filter-emb"].filter((m) => existsSync(marker(m)));

  beforeAll(async () => {
    markers = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-markers-")));
    upstream = tmpWorkspace({ git: true, files: { "f.txt": "upstream\n" } });
    git(upstream.dir, "add", "-A");
    git(upstream.dir, "commit", "-q", "-m", "upstream");
    ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
    git(ws.dir, "add", "-A");
    git(ws.dir, "commit", "-q", "-m", "root");
    // A submodule (sub/.git is a gitdir file into .git/modules/sub) and an embedded repository added as a gitlink.
    git(ws.dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", upstream.dir, "sub");
    git(ws.dir, "init", "-q", "emb");
    commitFile(path.join(ws.dir, "emb"), "e.txt", "emb\n", "emb");
    git(ws.dir, "-c", "advice.addEmbeddedRepo=false", "add", "emb");
    git(ws.dir, "commit", "-q", "-m", "sub and emb");
    // Each nested repository's config names commands: an fsmonitor, and a clean filter on every file. The file
    // tools refuse to write these (another part's check); here they are written directly, as a clone could bring them.
    const subGit = git(path.join(ws.dir, "sub"), "rev-parse", "--absolute-git-dir").trim();
    for (const [name, gitDir] of [
      ["sub", subGit],
      ["emb", path.join(ws.dir, "emb/.git")],
    ]) {
      git(ws.dir, "config", "-f", path.join(gitDir, "config"), "core.fsmonitor", `sh -c 'echo x >> "${marker(`fsmonitor-${name}`)}"'`);
      git(ws.dir, "config", "-f", path.join(gitDir, "config"), "filter.evil.clean", `sh -c 'echo x >> "${marker(`filter-${name}`)}"; cat'`);
      writeFile(gitDir, "info/attributes", "* filter=evil\n");
    }
    // .gitmodules asks git to look into the submodules' worktrees, which would override a config default.
    git(ws.dir, "config", "-f", ".gitmodules", "submodule.sub.ignore", "none");
    git(ws.dir, "config", "-f", ".gitmodules", "submodule.emb.path", "emb");
    git(ws.dir, "config", "-f", ".gitmodules", "submodule.emb.ignore", "none");
    git(ws.dir, "add", ".gitmodules");
    git(ws.dir, "commit", "-q", "-m", "gitmodules");
    git(ws.dir, "branch", "other");
    d = await startDaemon(ws.dir);
  });
  afterAll(async () => {
    await d.close();
    ws.cleanup();
    upstream.cleanup();
    rmSync(markers, { recursive: true, force: true });
  });
  beforeEach(() => {
    for (const m of ["fsmonitor-sub", "fsmonitor-emb", "filter-sub", "filter-emb"]) rmSync(marker(m), { force: true });
    // Files inside both nested repositories look changed by stat, so a git that looked inside would run their filter.
    touchBack(ws.dir, "sub/f.txt");
    touchBack(ws.dir, "emb/e.txt");
    touchBack(ws.dir, "a.txt");
  });

  it("the setup is live: plain git status in the root runs the nested repositories' filters", () => {
    git(ws.dir, "-c", "core.fsmonitor=false", "status", "--porcelain");
    expect(ran().sort()).toEqual(["filter-emb", "filter-sub"]);
  });

  it("git_status, git_diff and the dry runs of git_stash, git_checkout, git_add, git_commit and git_reset run none of them", async () => {
    writeFile(ws.dir, "a.txt", "changed\n");
    const calls: [string, Record<string, unknown>, boolean][] = [
      ["git_status", {}, true],
      ["git_diff", {}, true],
      ["git_diff", { ref: "HEAD" }, true],
      ["git_stash", { action: "push" }, false],
      ["git_checkout", { ref: "other" }, false],
      ["git_add", {}, false],
      ["git_add", { paths: ["sub"] }, false],
      ["git_commit", { message: "m", paths: ["."] }, false],
      ["git_reset", { ref: "HEAD", mode: "hard" }, false],
    ];
    for (const [tool, params, readOnly] of calls) {
      touchBack(ws.dir, "sub/f.txt");
      touchBack(ws.dir, "emb/e.txt");
      const r = await d.call(tool, params, { approved: readOnly });
      expect(r.success, `${tool}: ${JSON.stringify(r.result)}`).toBe(true);
      expect(ran(), `${tool} ${JSON.stringify(params)}`).toEqual([]);
    }
    // An approved git_add stages exactly what it previewed, without looking inside either repository.
    const added = await d.ok("git_add", {});
    expect(added.staged).toEqual([{ action: "add", path: "a.txt" }]);
    expect(ran()).toEqual([]);
    git(ws.dir, "reset", "-q", "--hard");
  });

  it("a submodule whose HEAD moved is still reported and staged", async () => {
    commitFile(path.join(ws.dir, "sub"), "f.txt", "moved\n", "moved");
    const head = git(path.join(ws.dir, "sub"), "rev-parse", "HEAD").trim();
    // Plain git inside the submodule runs its own config's commands, of course: clear what that left.
    for (const m of ["fsmonitor-sub", "filter-sub"]) rmSync(marker(m), { force: true });
    const status = await d.ok("git_status");
    expect(status.unstaged.map((e: any) => e.path)).toEqual(["sub"]);
    expect((await d.ok("git_add", {})).staged).toEqual([{ action: "add", path: "sub" }]);
    expect(git(ws.dir, "ls-files", "-s", "sub").split(" ")[1]).toBe(head);
    expect(ran()).toEqual([]);
    git(ws.dir, "reset", "-q");
    git(path.join(ws.dir, "sub"), "reset", "-q", "--hard", "HEAD~1");
  });

  it("read-only git_status, git_diff and the git_reset and git_checkout previews leave .git/index byte-identical", async () => {
    const index = path.join(ws.dir, ".git/index");
    const before = readFileSync(index);
    for (const [tool, params, approved] of [
      ["git_status", {}, true],
      ["git_diff", {}, true],
      ["git_diff", { staged: true }, true],
      ["git_reset", { ref: "HEAD", mode: "hard" }, false],
      ["git_checkout", { ref: "other" }, false],
      ["git_stash", { action: "push" }, false],
    ] as const) {
      touchBack(ws.dir, "a.txt");
      const r = await d.call(tool, params, { approved });
      expect(r.success || r.result.code === "NO_CHANGE", `${tool}: ${JSON.stringify(r.result)}`).toBe(true);
      expect(readFileSync(index).equals(before), tool).toBe(true);
    }
    // The check is live: a plain git status rewrites it.
    git(ws.dir, "status", "--porcelain", "--ignore-submodules=all");
    expect(readFileSync(index).equals(before)).toBe(false);
  });
});
