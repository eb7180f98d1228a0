import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, expectUnchanged, git, writeFile } from "./fixture.js";
import { checkedOut, gitAddOf, indexBlob, indexEntry } from "./line-oracle.js";

/**
 * git_stage_lines and git_unstage_lines on real repositories through the daemon. Every staging test compares the
 * index entry the tool wrote with the one real `git add` makes of the same selection done by hand (line-oracle.ts).
 */
describe("line staging", () => {
  const ws = tmpWorkspace({ git: true, files: { "README.md": "readme\n" } });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));
  const dir = ws.dir;

  beforeEach(() => {
    rmSync(path.join(dir, ".gitattributes"), { force: true });
    for (const key of ["core.autocrlf", "core.safecrlf", "apply.whitespace", "core.whitespace"]) {
      try {
        git(dir, "config", "--unset-all", key);
      } catch {
        // it was not set
      }
    }
    git(dir, "reset", "-q", "--hard");
    git(dir, "clean", "-qfdx");
  });

  const status = (p: string) => d.ok("git_line_status", { path: p });
  const stage = (params: Record<string, unknown>, approved = true) => d.ok("git_stage_lines", params, { approved });

  /** Commits `head`, writes `work`, and returns the worktree hash the selections name. */
  async function edit(rel: string, head: string | Buffer, work: string | Buffer): Promise<string> {
    commitFile(dir, rel, head);
    writeFile(dir, rel, work);
    return (await status(rel)).hash;
  }

  const expectGitAdd = (rel: string, byHand: string | Buffer | null) => expect(indexEntry(dir, rel)).toBe(gitAddOf(dir, rel, byHand));

  it("stages one line of a block of edited lines without reordering it (lazygit #5103)", async () => {
    const head = "int main() {\n\t// init something\n\tint i = 0;\n\n\treturn 0;\n}\n";
    const work = "int main() {\n\t// init variables\n\tint x = 0;\n\n\treturn 0;\n}\n";
    const hash = await edit("main.c", head, work);
    const r = await stage({ path: "main.c", hash, lines: [2] });
    const byHand = "int main() {\n\t// init variables\n\tint i = 0;\n\n\treturn 0;\n}\n";
    expect(indexBlob(dir, "main.c").toString()).toBe(byHand);
    expectGitAdd("main.c", byHand);
    expect(r.ranges).toEqual([expect.objectContaining({ range: 1, kind: "modified", start: 2, end: 3, staged: "partial" })]);
    await stage({ path: "main.c", hash, lines: [3] });
    expectGitAdd("main.c", work);
    expect(git(dir, "status", "--porcelain", "--", "main.c")).toBe("M  main.c\n");
  });

  it("stages a line that moved within its range by moving it, never duplicating or dropping one", async () => {
    const hash = await edit("moved.ts", "alpha = 1;\nbeta = 2;\ngamma = 3;\n", "gamma = 30;\nalpha = 10;\nbeta = 20;\n");
    await stage({ path: "moved.ts", hash, lines: [1] });
    expectGitAdd("moved.ts", "gamma = 30;\nalpha = 1;\nbeta = 2;\n");
  });

  it("handles the final newline at the end of the file (lazygit): added lines after a last line without one, and a newline removed", async () => {
    let hash = await edit("eof.txt", "a\nb", "a\nb\nc\n");
    await stage({ path: "eof.txt", hash, lines: [3] });
    expectGitAdd("eof.txt", "a\nb\nc\n");

    hash = await edit("eof2.txt", "a\nb\n", "A\nb");
    const s = await status("eof2.txt");
    // One range (the lines touch); its last line lost only its newline.
    expect(s.ranges).toEqual([expect.objectContaining({ range: 1, start: 1, end: 2, eol_changed: true })]);
    await stage({ path: "eof2.txt", hash, lines: [2] });
    expectGitAdd("eof2.txt", "a\nb");
    await stage({ path: "eof2.txt", hash, lines: [1] });
    expectGitAdd("eof2.txt", "A\nb");
  });

  it("keeps CRLF lines CRLF when git does not convert them (gitui lost them)", async () => {
    const hash = await edit("win.txt", "x\r\ny\r\nz\r\n", "x\r\nY\r\nz\r\nw\r\n");
    await stage({ path: "win.txt", hash, lines: [2] });
    expect(indexBlob(dir, "win.txt").toString()).toBe("x\r\nY\r\nz\r\n");
    expectGitAdd("win.txt", "x\r\nY\r\nz\r\n");
  });

  it("stages some lines of an untracked file, creating its entry (gitui refused), and the rest as git add", async () => {
    writeFile(dir, "new.txt", "n1\nn2\nn3\n");
    const s = await status("new.txt");
    expect(s.ranges).toEqual([expect.objectContaining({ range: 1, kind: "added", start: 1, end: 3, staged: "none" })]);
    const r = await stage({ path: "new.txt", hash: s.hash, lines: [1, 3] });
    expect(r.staged).toContain("+n1\n+n3");
    expectGitAdd("new.txt", "n1\nn3\n");
    const whole = await stage({ path: "new.txt" });
    expect(whole.files[0].whole_file).toBe(true);
    expectGitAdd("new.txt", "n1\nn2\nn3\n");
  });

  it("stages exactly the worktree's whitespace whatever apply.whitespace and core.whitespace say", async () => {
    git(dir, "config", "apply.whitespace", "fix");
    git(dir, "config", "core.whitespace", "trailing-space,space-before-tab,indent-with-non-tab");
    const hash = await edit("ws.c", "if (a) {\n  b();\n}\n", "if (a) {\n  b();   \n        c();\t\n}\n");
    await stage({ path: "ws.c", hash, lines: [2] });
    expect(indexBlob(dir, "ws.c").toString()).toBe("if (a) {\n  b();   \n}\n");
    expectGitAdd("ws.c", "if (a) {\n  b();   \n}\n");
  });

  it("under core.autocrlf=true shows no line-ending noise and stages what git add of those lines stores", async () => {
    commitFile(dir, "auto.txt", "l1\nl2\nl3\nl4\n");
    git(dir, "config", "core.autocrlf", "true");
    git(dir, "config", "core.safecrlf", "true");
    writeFile(dir, "auto.txt", "l1\r\nL2\r\nl3\r\nL4\r\n");
    const s = await status("auto.txt");
    expect(s.ranges.map((r: any) => [r.start, r.end])).toEqual([
      [2, 2],
      [4, 4],
    ]);
    await stage({ path: "auto.txt", hash: s.hash, lines: [2] });
    expect(indexBlob(dir, "auto.txt").toString()).toBe("l1\nL2\nl3\nl4\n");
    expectGitAdd("auto.txt", "l1\r\nL2\r\nl3\r\nl4\r\n");
  });

  it("under text=auto keeps a file whose index already has CRLF as it is, as git add does", async () => {
    commitFile(dir, "legacy.txt", "a\r\nb\r\nc\r\n");
    writeFile(dir, ".gitattributes", "legacy.txt text=auto\n");
    const hash = (await status("legacy.txt")).hash;
    writeFile(dir, "legacy.txt", "a\r\nB\r\nc\r\nd\r\n");
    const s = await status("legacy.txt");
    expect(s.hash).not.toBe(hash);
    await stage({ path: "legacy.txt", hash: s.hash, lines: [2] });
    expect(indexBlob(dir, "legacy.txt").toString()).toBe("a\r\nB\r\nc\r\n");
    expectGitAdd("legacy.txt", "a\r\nB\r\nc\r\n");
  });

  it("stages a deleted file's deletion (the entry goes) and unstages it back", async () => {
    commitFile(dir, "gone.txt", "d1\nd2\n");
    rmSync(path.join(dir, "gone.txt"));
    const s = await status("gone.txt");
    expect(s.hash).toBeNull();
    expect(s.ranges).toEqual([expect.objectContaining({ range: 1, kind: "deleted", after: 0 })]);
    await stage({ path: "gone.txt", hash: null, ranges: [1] });
    expectGitAdd("gone.txt", null);
    expect(indexEntry(dir, "gone.txt")).toBe("");
    await d.ok("git_unstage_lines", { path: "gone.txt", hash: null, ranges: [1] });
    expect(git(dir, "status", "--porcelain", "--", "gone.txt")).toBe(" D gone.txt\n");
  });

  it("keeps the executable bit of the index entry when staging lines; the whole file takes the worktree's, as git add", async () => {
    commitFile(dir, "run.sh", "#!/bin/sh\necho a\necho b\n");
    git(dir, "update-index", "--chmod=+x", "run.sh");
    git(dir, "commit", "-qm", "x");
    chmodSync(path.join(dir, "run.sh"), 0o755);
    writeFile(dir, "run.sh", "#!/bin/sh\necho A\necho B\n");
    const hash = (await status("run.sh")).hash;
    await stage({ path: "run.sh", hash, lines: [2] });
    expect(indexEntry(dir, "run.sh")).toMatch(/^100755 /);
    expectGitAdd("run.sh", "#!/bin/sh\necho A\necho b\n");

    commitFile(dir, "plain.sh", "echo 1\necho 2\n");
    chmodSync(path.join(dir, "plain.sh"), 0o755);
    writeFile(dir, "plain.sh", "echo one\necho 2\n");
    const h2 = (await status("plain.sh")).hash;
    await stage({ path: "plain.sh", hash: h2, lines: [1] });
    expect(indexEntry(dir, "plain.sh")).toMatch(/^100644 /);
    const whole = await stage({ path: "plain.sh" }, false);
    expect(whole.staged).toContain("old mode 100644\nnew mode 100755");
    await stage({ path: "plain.sh" });
    expectGitAdd("plain.sh", "echo one\necho 2\n");
    expect(indexEntry(dir, "plain.sh")).toMatch(/^100755 /);
  });

  it("unstages chosen lines back to HEAD's, leaving the rest staged", async () => {
    const hash = await edit("un.txt", "p\nq\nr\n", "P\nq\nR\n");
    git(dir, "add", "un.txt");
    const r = await d.ok("git_unstage_lines", { path: "un.txt", hash, lines: [1] });
    expect(r.unstaged).toContain("-P\n+p");
    expectGitAdd("un.txt", "p\nq\nR\n");
    expect(r.ranges.map((x: any) => x.staged)).toEqual(["none", "all"]);
    const again = await d.call("git_unstage_lines", { path: "un.txt", hash, lines: [1] });
    expect(again.result.code).toBe("NO_CHANGE");
  });

  it("stages a range that was staged and then edited again to the worktree's version", async () => {
    const h0 = await edit("again.txt", "v = 1;\nw = 1;\n", "v = 2;\nw = 1;\n");
    await stage({ path: "again.txt", hash: h0, lines: [1] });
    writeFile(dir, "again.txt", "v = 3;\nw = 1;\n");
    const s = await status("again.txt");
    expect(s.ranges[0].staged).toBe("partial");
    expect(s.lines[0]).toMatchObject({ line: 1, vs_index: { same: false }, index_vs_head: { same: false } });
    await stage({ path: "again.txt", hash: s.hash, ranges: [1] });
    expectGitAdd("again.txt", "v = 3;\nw = 1;\n");
  });

  it("without path stages everything as git add -A, deletions and new files included", async () => {
    commitFile(dir, "keep.txt", "k\n");
    commitFile(dir, "drop.txt", "d\n");
    writeFile(dir, "keep.txt", "K\n");
    writeFile(dir, "fresh.txt", "f\n");
    rmSync(path.join(dir, "drop.txt"));
    const preview = await expectUnchanged([dir], [], () => stage({}, false));
    expect(preview.files.map((f: any) => f.path).sort()).toEqual(["drop.txt", "fresh.txt", "keep.txt"]);
    await stage({});
    expect(git(dir, "status", "--porcelain")).toBe("D  drop.txt\nA  fresh.txt\nM  keep.txt\n");
    expect((await d.call("git_stage_lines", {})).result.code).toBe("NO_CHANGE");
  });

  it("previews change nothing (HEAD, index, worktree, refs) and are deterministic", async () => {
    const hash = await edit("pre.txt", "a\nb\nc\n", "A\nb\nC\n");
    const p1 = await expectUnchanged([dir], [], () => stage({ path: "pre.txt", hash, lines: [1] }, false));
    const p2 = await stage({ path: "pre.txt", hash, lines: [1] }, false);
    expect(p1.dry_run).toBe(true);
    expect(p1.staged).toBe("--- a/pre.txt\n+++ b/pre.txt\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n");
    expect(p2.preview_id).toBe(p1.preview_id);
    git(dir, "add", "pre.txt");
    await expectUnchanged([dir], [], () => d.ok("git_unstage_lines", { path: "pre.txt", hash, lines: [3] }, { approved: false }));
    await expectUnchanged([dir], [], () => d.ok("git_rollback_lines", { path: "pre.txt", hash, lines: [3] }, { approved: false }));
  });

  it("an approved call bound to a preview runs only if nothing changed since (PREVIEW_STALE otherwise)", async () => {
    const hash = await edit("bound.txt", "a\nb\n", "A\nB\n");
    const p = await stage({ path: "bound.txt", hash, lines: [1] }, false);
    git(dir, "add", "bound.txt");
    const stale = await d.call("git_stage_lines", { path: "bound.txt", hash, lines: [1], preview_id: p.preview_id });
    expect(stale.result.code).toBe("PREVIEW_STALE");
    git(dir, "reset", "-q", "bound.txt");
    await d.ok("git_stage_lines", { path: "bound.txt", hash, lines: [1], preview_id: p.preview_id });
    expectGitAdd("bound.txt", "A\nb\n");
  });

  it("refuses stale, empty and impossible selections and changes nothing", async () => {
    const hash = await edit("sel.txt", "a\nb\nc\n", "a\nB\nc\n");
    const before = indexEntry(dir, "sel.txt");
    const stale = await d.call("git_stage_lines", { path: "sel.txt", hash: "0123456789abcdef", lines: [2] });
    expect(stale.result).toMatchObject({ code: "HASH_MISMATCH", current_hash: hash });
    expect((await d.call("git_stage_lines", { path: "sel.txt", hash, lines: [1] })).result.code).toBe("NO_CHANGE");
    expect((await d.call("git_stage_lines", { path: "sel.txt", lines: [2] })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("git_stage_lines", { path: "sel.txt", hash, lines: [9] })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("git_stage_lines", { path: "sel.txt", hash, ranges: [2] })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("git_stage_lines", { path: "sel.txt", hash, lines: [2], changelist: "default" })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("git_stage_lines", { path: "nowhere.txt" })).result.code).toBe("NOT_FOUND");
    expect((await d.call("git_stage_lines", { changelist: "no-such-list" })).result.code).toBe("NOT_FOUND");
    expect(indexEntry(dir, "sel.txt")).toBe(before);
  });

  it("a binary file is BINARY_FILE for the line tools", async () => {
    commitFile(dir, "bin.dat", Buffer.from([1, 0, 2, 3]));
    writeFile(dir, "bin.dat", Buffer.from([1, 0, 2, 4]));
    expect((await d.call("git_line_status", { path: "bin.dat" })).result.code).toBe("BINARY_FILE");
    expect((await d.call("git_stage_lines", { path: "bin.dat", hash: null, lines: [1] })).result.code).toBe("BINARY_FILE");
  });

  it("an unmerged file is CONFLICT", async () => {
    commitFile(dir, "c.txt", "base\n");
    git(dir, "checkout", "-q", "-b", "other");
    commitFile(dir, "c.txt", "theirs\n");
    git(dir, "checkout", "-q", "main");
    commitFile(dir, "c.txt", "ours\n");
    try {
      git(dir, "merge", "-q", "other");
    } catch {
      // the conflict is the point
    }
    for (const tool of ["git_line_status", "git_word_diff", "git_stage_lines"]) {
      expect((await d.call(tool, { path: "c.txt" })).result.code, tool).toBe("CONFLICT");
    }
    git(dir, "merge", "--abort");
    git(dir, "branch", "-D", "other");
  });

  it("git_rollback_lines reverts the chosen lines in the worktree through the versioned write, attributed to the session", async () => {
    const hash = await edit("rb.txt", "one\ntwo\nthree\n", "ONE\ntwo\nTHREE\nfour\n");
    const r = await d.ok("git_rollback_lines", { path: "rb.txt", hash, lines: [3, 4] }, { session: "rb" });
    expect(r.diff).toContain("-THREE\n-four\n+three");
    const changed = await d.waitFor((l) => l.event === "fs.changed" && l.data.changes.some((c: any) => c.path === "rb.txt" && c.hash === r.hash));
    expect(changed.data.changes.find((c: any) => c.path === "rb.txt")).toMatchObject({ origin: "tool", by: "rb", tool: "git_rollback_lines" });
    expect(git(dir, "show", ":rb.txt")).toBe("one\ntwo\nthree\n"); // the index is not touched
    expect(r.ranges).toEqual([expect.objectContaining({ range: 1, start: 1, end: 1 })]);
    const stale = await d.call("git_rollback_lines", { path: "rb.txt", hash, lines: [1] });
    expect(stale.result.code).toBe("HASH_MISMATCH");
    await d.ok("git_rollback_lines", { path: "rb.txt", hash: r.hash });
    expect(git(dir, "status", "--porcelain", "--", "rb.txt")).toBe("");
  });

  it("keeps the BOM on the first line of a staged diff, so git apply --cached takes it (issue 20)", async () => {
    const hash = await edit("bom.txt", "\ufeffa\nb\n", "\ufeffa\nc\n");
    const r = await stage({ path: "bom.txt", hash, lines: [2] }, false);
    expect(r.staged).toBe("--- a/bom.txt\n+++ b/bom.txt\n@@ -1,2 +1,2 @@\n \ufeffa\n-b\n+c\n");
    execFileSync("git", ["apply", "--cached", "--check", "-"], { cwd: dir, input: r.staged });
    const rb = await d.ok("git_rollback_lines", { path: "bom.txt", hash, lines: [2] }, { approved: false });
    execFileSync("git", ["apply", "--check", "-"], { cwd: dir, input: rb.diff });
  });

  it("rolls back to a HEAD that is only a BOM as git checkout writes it: the BOM stays (issue 20)", async () => {
    const hash = await edit("bomonly.txt", "\ufeff", "\ufeffadded\n");
    await d.ok("git_rollback_lines", { path: "bomonly.txt", hash, ranges: [1] });
    expect(readFileSync(path.join(dir, "bomonly.txt"))).toEqual(Buffer.from("\ufeff"));
    expect(git(dir, "status", "--porcelain", "--", "bomonly.txt")).toBe("");
  });

  it.each([
    ["eol=crlf", "bare1.txt", () => writeFile(dir, ".gitattributes", "*.txt eol=crlf\n")],
    ["core.autocrlf", "bare2.txt", () => git(dir, "config", "core.autocrlf", "true")],
  ])("under %s rolls lines back into a file with no line terminator as git checkout writes them (issue 20)", async (_, rel, convert) => {
    commitFile(dir, rel, "a\nb\n");
    convert();
    writeFile(dir, rel, "x");
    const s = await status(rel);
    await d.ok("git_rollback_lines", { path: rel, hash: s.hash, ranges: [1] });
    expect(readFileSync(path.join(dir, rel))).toEqual(checkedOut(dir, rel));
    expect(readFileSync(path.join(dir, rel), "utf8")).toBe("a\r\nb\r\n");
  });

  it("rolls a CRLF worktree back to HEAD's lines with the worktree's line endings under autocrlf", async () => {
    commitFile(dir, "rbw.txt", "a\nb\nc\n");
    git(dir, "config", "core.autocrlf", "true");
    writeFile(dir, "rbw.txt", "a\r\nB\r\nC\r\n");
    const s = await status("rbw.txt");
    await d.ok("git_rollback_lines", { path: "rbw.txt", hash: s.hash, lines: [2] });
    expect(git(dir, "show", "HEAD:rbw.txt")).toBe("a\nb\nc\n");
    expect((await d.ok("file_read", { path: "rbw.txt" })).eol).toBe("crlf");
    expect(git(dir, "diff", "--", "rbw.txt")).toContain("-c\n+C");
  });
});
