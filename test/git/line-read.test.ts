import { rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, git, writeFile } from "./fixture.js";

/** git_word_diff and git_line_status: what they show, in `text` and as data, on real repositories. */
describe("git_word_diff and git_line_status", () => {
  const ws = tmpWorkspace({ git: true });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));
  const dir = ws.dir;

  beforeEach(() => {
    try {
      git(dir, "config", "--unset-all", "core.autocrlf");
    } catch {
      // not set
    }
    git(dir, "reset", "-q", "--hard");
    git(dir, "clean", "-qfdx");
  });

  it("word-diffs the worktree against the index, each line with its tags, in a text a model can edit from", async () => {
    commitFile(dir, "w.ts", "const a = foo(bar, baz);\nkeep();\nold line here\nlast();\n");
    writeFile(dir, "w.ts", "const a = foo(bar, qux);\nkeep();\nlast();\nadded();\n");
    const r = await d.ok("git_word_diff", { path: "w.ts" });
    expect(r).toMatchObject({ path: "w.ts", from: "index", to: "worktree" });
    expect(r.changes[0]).toEqual({
      old: { line: 1, tag: expect.stringMatching(/^[0-9A-F]{4}$/), content: "const a = foo(bar, baz);" },
      new: { line: 1, tag: expect.stringMatching(/^[0-9A-F]{4}$/), content: "const a = foo(bar, qux);" },
      words: [
        { op: "=", text: "const a = foo(bar, " },
        { op: "-", text: "baz" },
        { op: "+", text: "qux" },
        { op: "=", text: ");" },
      ],
    });
    const [header, ...body] = r.text.split("\n");
    expect(header).toBe(`file w.ts · hash ${r.hash} · index -> worktree · 3 changed lines in 3 ranges`);
    expect(body).toEqual([
      "@@ range 1 · modified · line 1 (index 1)",
      `1|${r.changes[0].new.tag} const a = foo(bar, [-baz-]{+qux+});`,
      "@@ range 2 · deleted · after line 2 (index 3)",
      `-3|${r.changes[1].old.tag} [-old line here-]`,
      "@@ range 3 · added · line 4 (index none)",
      `4|${r.changes[2].new.tag} {+added();+}`,
    ]);
  });

  it("with staged compares the index with HEAD, with ref the worktree (or index) with a commit", async () => {
    const first = commitFile(dir, "s.txt", "one\ntwo\n");
    commitFile(dir, "s.txt", "one\nTWO\n");
    writeFile(dir, "s.txt", "ONE\nTWO\n");
    git(dir, "add", "s.txt");
    writeFile(dir, "s.txt", "ONE\nTWO\nthree\n");
    const staged = await d.ok("git_word_diff", { path: "s.txt", staged: true });
    expect(staged.changes.map((c: any) => c.new.content)).toEqual(["ONE"]);
    expect(staged.text).toContain("HEAD -> index");
    const unstaged = await d.ok("git_word_diff", { path: "s.txt" });
    expect(unstaged.changes.map((c: any) => c.new.content)).toEqual(["three"]);
    const vsFirst = await d.ok("git_word_diff", { path: "s.txt", ref: first });
    const added = (r: any) => r.changes.filter((c: any) => c.new).map((c: any) => c.new.content);
    expect(added(vsFirst)).toEqual(["ONE", "TWO", "three"]);
    expect(vsFirst.from).toBe(first.slice(0, 12));
    const indexVsFirst = await d.ok("git_word_diff", { path: "s.txt", ref: first, staged: true });
    expect(added(indexVsFirst)).toEqual(["ONE", "TWO"]);
    expect((await d.call("git_word_diff", { path: "s.txt", ref: "no-such-branch" })).result.code).toBe("NOT_FOUND");
  });

  it("shows an untracked file as all added, and a line moved within a change with where it came from", async () => {
    writeFile(dir, "u.txt", "first\nsecond\n");
    const u = await d.ok("git_word_diff", { path: "u.txt" });
    expect(u.changes.map((c: any) => [c.old, c.new.content])).toEqual([
      [null, "first"],
      [null, "second"],
    ]);
    expect((await d.ok("git_line_status", { path: "u.txt" })).ranges).toEqual([
      expect.objectContaining({ kind: "added", start: 1, end: 2, head_start: 1, head_end: 0 }),
    ]);

    commitFile(dir, "mv.ts", "alpha = 1;\nbeta = 2;\ngamma = 3;\n");
    writeFile(dir, "mv.ts", "gamma = 30;\nalpha = 10;\nbeta = 20;\n");
    const mv = await d.ok("git_word_diff", { path: "mv.ts" });
    expect(mv.changes[0]).toMatchObject({ old: { line: 3 }, new: { line: 1 }, moved: true });
    expect(mv.text).toContain("(moved from 3)");
  });

  it("line status: each range with its staging and list, each line's word diff against HEAD and whether the index has it", async () => {
    commitFile(dir, "st.txt", "a\nb\nc\nd\ne\nf\n");
    writeFile(dir, "st.txt", "a\nB\nC\nd\nf\n");
    git(dir, "add", "st.txt");
    writeFile(dir, "st.txt", "a\nB\nCC\nd\nf\nnew\n");
    const r = await d.ok("git_line_status", { path: "st.txt" });
    expect(r.ranges.map((x: any) => [x.range, x.kind, x.start, x.end, x.staged])).toEqual([
      [1, "modified", 2, 3, "partial"],
      [2, "deleted", 5, 4, "all"],
      [3, "added", 6, 6, "none"],
    ]);
    expect(r.lines.map((l: any) => [l.line, l.change, l.vs_index.same, l.index_vs_head.same])).toEqual([
      [2, "modified", true, false],
      [3, "modified", false, false],
      [6, "added", false, true],
    ]);
    expect(r.deletions).toEqual([expect.objectContaining({ after: 4, staged: true, deleted: [expect.objectContaining({ head_line: 5, content: "e" })] })]);
    const t = r.text.split("\n");
    expect(t[0]).toBe(`file st.txt · hash ${r.hash} · 3 ranges vs HEAD (1 staged, 1 partly staged, 1 not staged) · changelists: default`);
    expect(t).toContain("@@ range 1 · modified · lines 2-3 (HEAD 2-3) · staged partial · changelist default");
    expect(t.find((l: string) => l.startsWith("2|"))).toMatch(/^2\|[0-9A-F]{4} \[-b-\]\{\+B\+\} \(staged\)$/);
    expect(t.find((l: string) => l.startsWith("3|"))).toMatch(/\[-c-\]\{\+CC\+\} \(staged, edited since\)$/);
    expect(t).toContain("@@ range 2 · deleted · after line 4 (HEAD 5) · staged all · changelist default");

    const asked = await d.ok("git_line_status", { path: "st.txt", lines: [1, 3] });
    expect(asked.lines.map((l: any) => [l.line, l.change])).toEqual([
      [1, "unchanged"],
      [3, "modified"],
    ]);
    expect(asked.text.split("\n").slice(1)).toEqual([
      `1|${asked.lines[0].tag} a (unchanged)`,
      expect.stringMatching(/^3\|.* \(range 1, staged, edited since\)$/),
    ]);
    expect((await d.call("git_line_status", { path: "st.txt", lines: [99] })).result.code).toBe("INVALID_PARAMS");
  });

  it("answers about the disk as it is now, not as the bus last said", async () => {
    commitFile(dir, "now.txt", "x\n");
    for (let i = 0; i < 5; i++) {
      writeFileSync(path.join(dir, "now.txt"), `x\n${"y\n".repeat(i + 1)}`);
      expect((await d.ok("git_line_status", { path: "now.txt" })).ranges[0].end).toBe(i + 2);
    }
  });

  it("under core.autocrlf a CRLF checkout of an LF file shows only the real changes", async () => {
    commitFile(dir, "crlf.txt", "one\ntwo\nthree\n");
    git(dir, "config", "core.autocrlf", "true");
    writeFile(dir, "crlf.txt", "one\r\nTWO\r\nthree\r\n");
    const r = await d.ok("git_word_diff", { path: "crlf.txt" });
    expect(r.changes.map((c: any) => c.new.content)).toEqual(["TWO"]);
    git(dir, "config", "--unset", "core.autocrlf");
    // Without conversion every line's terminator changed: git sees them all, and so do we.
    const exact = await d.ok("git_word_diff", { path: "crlf.txt" });
    expect(exact.changes.map((c: any) => [c.new.content, c.eol_changed ?? false])).toEqual([
      ["one", true],
      ["TWO", false],
      ["three", true],
    ]);
  });

  it("a file deleted from the worktree is one deletion with no hash; a path git and disk do not know is NOT_FOUND", async () => {
    commitFile(dir, "del.txt", "d1\nd2\n");
    rmSync(path.join(dir, "del.txt"));
    const r = await d.ok("git_line_status", { path: "del.txt" });
    expect(r).toMatchObject({ hash: null, ranges: [{ range: 1, kind: "deleted", after: 0, head_start: 1, head_end: 2 }] });
    expect((await d.call("git_word_diff", { path: "nothing.txt" })).result.code).toBe("NOT_FOUND");
    expect((await d.call("git_line_status", { path: "../outside.txt" })).result.code).toBe("PATH_OUTSIDE_ROOT");
    expect((await d.call("git_line_status", { path: ".git/config" })).result.code).toBe("PATH_FORBIDDEN");
  });
});

describe("a workspace root below the repository's top", () => {
  const ws = tmpWorkspace({ git: true, files: { "top.txt": "top\n", "sub/a.txt": "one\ntwo\nthree\n" } });
  git(ws.dir, "add", "-A");
  git(ws.dir, "commit", "-qm", "initial");
  const sub = { dir: path.join(ws.dir, "sub"), cleanup: () => ws.cleanup() };
  let d: DaemonClient;
  daemonForSuite(sub, (c) => (d = c));

  it("names files from the root, and stages into the repository's index under their full path", async () => {
    writeFile(ws.dir, "sub/a.txt", "ONE\ntwo\nTHREE\n");
    const s = await d.ok("git_line_status", { path: "a.txt" });
    expect(s.path).toBe("a.txt");
    expect(s.ranges.map((r: any) => r.start)).toEqual([1, 3]);
    await d.ok("git_stage_lines", { path: "a.txt", hash: s.hash, lines: [3] });
    expect(git(ws.dir, "show", ":sub/a.txt")).toBe("one\ntwo\nTHREE\n");
    await d.ok("git_changelist_mark", { path: "a.txt", hash: s.hash, lines: [1], changelist: "first" });
    const r = await d.ok("git_commit", { message: "first line", changelist: "first" });
    expect(git(ws.dir, "show", `${r.commit}:sub/a.txt`)).toBe("ONE\ntwo\nthree\n");
    expect(git(ws.dir, "show", ":sub/a.txt")).toBe("ONE\ntwo\nTHREE\n");
    expect(git(ws.dir, "show", `${r.commit}:top.txt`)).toBe("top\n");
  });

  it("a symlink is NOT_A_FILE: git stores it as the name it points to, not as lines", async () => {
    symlinkSync("a.txt", path.join(sub.dir, "link.txt"));
    expect((await d.call("git_line_status", { path: "link.txt" })).result.code).toBe("NOT_A_FILE");
  });
});
