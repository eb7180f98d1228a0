import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite, startDaemon } from "../helpers/daemon.js";
import { tagOf } from "../../src/core/hash.js";
import { CHANGELIST_STATE_MAX_BYTES } from "../../src/git/line-store.js";
import { waitForFile } from "../helpers/process.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, expectUnchanged, git, snapshot, writeFile } from "./fixture.js";
import { gitAddOf, indexEntry } from "./line-oracle.js";

const TEN = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);
const text = (lines: string[]) => `${lines.join("\n")}\n`;
const withLines = (changes: Record<number, string>, base = TEN) => text(base.map((l, i) => changes[i + 1] ?? l));

/** Each changed line of a file (1-based) with its list, from git_changelist_of. */
async function listsOf(d: DaemonClient, p: string): Promise<Record<number, string | null>> {
  const r = await d.ok("git_changelist_of", { path: p });
  return Object.fromEntries(r.lines.map((l: any) => [l.line, l.changelist]));
}

describe("changelists", () => {
  const ws = tmpWorkspace({ git: true });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));
  const dir = ws.dir;

  beforeEach(async () => {
    git(dir, "reset", "-q", "--hard");
    git(dir, "clean", "-qfdx");
    // Every test starts from the lists it expects: only default, active.
    const lists = await d.ok("git_changelists");
    if (lists.active !== "default") await d.ok("git_changelist_edit", { action: "activate", name: "default" });
    for (const l of lists.lists) if (l.name !== "default") await d.ok("git_changelist_edit", { action: "delete", name: l.name });
  });

  it("two unrelated edits of one file become two commits (the worked example of docs/tools/line-git.md)", async () => {
    commitFile(dir, "app.txt", text(TEN));
    writeFile(dir, "app.txt", withLines({ 2: "line two, typo fixed", 9: "line 9 with the new feature" }));
    const s = await d.ok("git_line_status", { path: "app.txt" });
    expect(s.ranges.map((r: any) => [r.range, r.start, r.changelist])).toEqual([
      [1, 2, "default"],
      [2, 9, "default"],
    ]);
    const m = await d.ok("git_changelist_mark", { path: "app.txt", hash: s.hash, ranges: [2], changelist: "feature" });
    expect(m).toMatchObject({ created: true, marked: 1 });
    expect((await d.ok("git_changelists")).text).toBe(
      "* default (active): 1 file\n    app.txt: 1 line (range 1)\n  feature: 1 file\n    app.txt: 1 line (range 2)",
    );

    const first = await d.ok("git_commit", { message: "Fix a typo", changelist: "default" });
    expect(git(dir, "show", "--format=", "-U0", first.commit)).toContain("-line 2\n+line two, typo fixed");
    expect(git(dir, "show", "--format=", first.commit)).not.toContain("feature");
    expect(readFileSync(path.join(dir, "app.txt"), "utf8")).toBe(withLines({ 2: "line two, typo fixed", 9: "line 9 with the new feature" }));
    expect(await listsOf(d, "app.txt")).toEqual({ 9: "feature" });

    const second = await d.ok("git_commit", { message: "Add the feature", changelist: "feature" });
    expect(git(dir, "show", "--format=", "-U0", second.commit)).toContain("-line 9\n+line 9 with the new feature");
    expect(git(dir, "status", "--porcelain")).toBe("");
    expect(git(dir, "log", "--format=%s", "-2")).toBe("Add the feature\nFix a typo\n");
  });

  it("git_commit {changelist} leaves the other lists' lines in the worktree, and the index as it was staged", async () => {
    commitFile(dir, "a.txt", text(TEN));
    commitFile(dir, "b.txt", "bee\n");
    writeFile(dir, "a.txt", withLines({ 2: "two (default, staged)", 5: "five (default)", 8: "eight (feature)" }));
    writeFile(dir, "b.txt", "bee, staged\n");
    git(dir, "add", "b.txt");
    const s = await d.ok("git_line_status", { path: "a.txt" });
    await d.ok("git_stage_lines", { path: "a.txt", hash: s.hash, lines: [2] });
    await d.ok("git_changelist_mark", { path: "a.txt", hash: s.hash, lines: [8], changelist: "feature" });
    const before = snapshot(dir);
    const preview = await expectUnchanged([dir], [], () => d.ok("git_commit", { message: "feature", changelist: "feature" }, { approved: false }));
    expect(preview.files).toEqual([{ path: "a.txt", added: 1, deleted: 1 }]);
    // The preview shows the lines that go in: the list's, and neither the staged nor the other list's.
    expect(preview.diff).toContain("-line 8\n+eight (feature)\n");
    expect(preview.diff).not.toMatch(/two \(default|five \(default|bee/);
    expect(preview.text).toContain("+eight (feature)");
    const r = await d.ok("git_commit", { message: "feature", changelist: "feature" });
    expect(r.diff).toBe(preview.diff);
    expect(git(dir, "show", "--format=", "--name-only", r.commit)).toBe("a.txt\n");
    expect(git(dir, "show", `${r.commit}:a.txt`)).toBe(withLines({ 8: "eight (feature)" }));
    const after = snapshot(dir);
    expect(after.files).toEqual(before.files); // the worktree is byte-identical
    expect(git(dir, "show", ":a.txt")).toBe(withLines({ 2: "two (default, staged)", 8: "eight (feature)" }));
    expect(indexEntry(dir, "b.txt")).toBe(gitAddOf(dir, "b.txt", "bee, staged\n"));
    expect(git(dir, "diff", "--cached", "--name-only")).toBe("a.txt\nb.txt\n");
    expect(git(dir, "diff", "--cached", "-U0", "--", "a.txt")).toContain("-line 2\n+two (default, staged)");
    expect(await listsOf(d, "a.txt")).toEqual({ 2: "default", 5: "default" });
  });

  it("git_commit {changelist} while another call stages through the daemon: the commit is the list's lines, the other staging stays", async () => {
    commitFile(dir, "held-c.txt", text(TEN));
    commitFile(dir, "held-d.txt", "dee\n");
    writeFile(dir, "held-c.txt", withLines({ 3: "three (default)", 7: "seven (feature)" }));
    writeFile(dir, "held-d.txt", "dee, changed\n");
    const s = await d.ok("git_line_status", { path: "held-c.txt" });
    await d.ok("git_changelist_mark", { path: "held-c.txt", hash: s.hash, lines: [7], changelist: "feature" });
    // The pre-commit hook holds the commit until the test has staged other changes through the daemon.
    const held = path.join(dir, ".git", "held");
    const release = path.join(dir, ".git", "release");
    writeFile(dir, ".git/hooks/pre-commit", `#!/bin/sh\necho held > "${held}"\nwhile [ ! -e "${release}" ]; do sleep 0.05; done\n`);
    chmodSync(path.join(dir, ".git/hooks/pre-commit"), 0o755);
    try {
      const head = git(dir, "rev-parse", "HEAD").trim();
      const committing = d.call("git_commit", { message: "feature only", changelist: "feature" });
      await waitForFile(held);
      await d.ok("git_add", { paths: ["held-d.txt"] });
      await d.ok("git_stage_lines", { path: "held-c.txt", hash: s.hash, lines: [3] });
      writeFileSync(release, "go\n");
      const r = (await committing).result;
      expect(git(dir, "rev-parse", `${r.commit}^`).trim()).toBe(head);
      expect(git(dir, "show", "--format=", "--name-only", r.commit)).toBe("held-c.txt\n");
      expect(git(dir, "show", `${r.commit}:held-c.txt`)).toBe(withLines({ 7: "seven (feature)" }));
      // What was staged meanwhile is still staged: held-d.txt whole, held-c.txt's default line (on top of the new HEAD).
      expect(indexEntry(dir, "held-d.txt")).toBe(gitAddOf(dir, "held-d.txt", "dee, changed\n"));
      expect(git(dir, "diff", "--cached", "-U0", "--", "held-c.txt")).toContain("-line 3\n+three (default)");
      expect(git(dir, "diff", "--cached", "--", "held-c.txt")).not.toContain("seven");
      expect(readFileSync(path.join(dir, "held-c.txt"), "utf8")).toBe(withLines({ 3: "three (default)", 7: "seven (feature)" }));
    } finally {
      rmSync(path.join(dir, ".git/hooks/pre-commit"), { force: true });
      rmSync(held, { force: true });
      rmSync(release, { force: true });
    }
  });

  it("git_commit {changelist} whose pre-commit hook stages another file: the commit is undone and kept, nothing else changes", async () => {
    commitFile(dir, "hook-e.txt", text(TEN));
    commitFile(dir, "hook-g.txt", "gee\n");
    writeFile(dir, "hook-e.txt", withLines({ 4: "four (feature)" }));
    writeFile(dir, "hook-g.txt", "gee, formatted\n");
    const s = await d.ok("git_line_status", { path: "hook-e.txt" });
    await d.ok("git_changelist_mark", { path: "hook-e.txt", hash: s.hash, lines: [4], changelist: "feature" });
    writeFile(dir, ".git/hooks/pre-commit", "#!/bin/sh\ngit add hook-g.txt\n");
    chmodSync(path.join(dir, ".git/hooks/pre-commit"), 0o755);
    try {
      const head = git(dir, "rev-parse", "HEAD").trim();
      const before = snapshot(dir);
      const r = await d.call("git_commit", { message: "feature", changelist: "feature" });
      expect(r.result).toMatchObject({ code: "HOOK_FAILED", changed: ["hook-g.txt"] });
      expect(git(dir, "rev-parse", "HEAD").trim()).toBe(head);
      expect(snapshot(dir).files).toEqual(before.files);
      expect(git(dir, "diff", "--cached", "--name-only")).toBe("");
      // The undone commit is kept: the list's line and the file the hook staged.
      expect(git(dir, "show", "--format=", "--name-only", r.result.backup.commit)).toBe("hook-e.txt\nhook-g.txt\n");
    } finally {
      rmSync(path.join(dir, ".git/hooks/pre-commit"), { force: true });
    }
  });

  it("git_commit {changelist, amend} folds that list's changes into the last commit; paths with changelist is INVALID_PARAMS", async () => {
    const last = commitFile(dir, "am.txt", text(TEN), "the last commit");
    writeFile(dir, "am.txt", withLines({ 1: "first (fix)", 6: "six (keep)" }));
    const s = await d.ok("git_line_status", { path: "am.txt" });
    await d.ok("git_changelist_mark", { path: "am.txt", hash: s.hash, lines: [1], changelist: "fixup" });
    expect((await d.call("git_commit", { message: "x", changelist: "fixup", paths: ["am.txt"] })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("git_commit", { message: "x", changelist: "nope" })).result.code).toBe("NOT_FOUND");
    const r = await d.ok("git_commit", { message: "the last commit, fixed", changelist: "fixup", amend: true });
    expect(git(dir, "rev-parse", `${r.commit}^`).trim()).toBe(git(dir, "rev-parse", `${last}^`).trim());
    expect(git(dir, "show", `${r.commit}:am.txt`)).toBe(withLines({ 1: "first (fix)" }));
    expect(git(dir, "status", "--porcelain", "--", "am.txt")).toBe(" M am.txt\n");
    expect(await listsOf(d, "am.txt")).toEqual({ 6: "default" });
  });

  it("a reverted change loses its mark; the same line changed again joins the active list", async () => {
    commitFile(dir, "r.txt", text(TEN));
    writeFile(dir, "r.txt", withLines({ 3: "three changed", 7: "seven changed" }));
    const s = await d.ok("git_line_status", { path: "r.txt" });
    await d.ok("git_changelist_mark", { path: "r.txt", hash: s.hash, lines: [7], changelist: "feature" });
    writeFileSync(path.join(dir, "r.txt"), withLines({ 3: "three changed" }));
    expect(await listsOf(d, "r.txt")).toEqual({ 3: "default" });
    expect((await d.ok("git_changelist_lines", { changelist: "feature" })).files).toEqual([]);
    writeFileSync(path.join(dir, "r.txt"), withLines({ 3: "three changed", 7: "seven again" }));
    expect(await listsOf(d, "r.txt")).toEqual({ 3: "default", 7: "default" });
  });

  it("follows an external edit that inserts lines above a marked range, and new changes next to it join its list", async () => {
    commitFile(dir, "f.txt", text(TEN));
    writeFile(dir, "f.txt", withLines({ 5: "five", 6: "six" }));
    const s = await d.ok("git_line_status", { path: "f.txt" });
    await d.ok("git_changelist_mark", { path: "f.txt", hash: s.hash, ranges: [1], changelist: "feature" });
    const lines = withLines({ 5: "five", 6: "six" }).split("\n");
    lines.splice(1, 0, "inserted a", "inserted b", "inserted c");
    writeFileSync(path.join(dir, "f.txt"), lines.join("\n"));
    const r = await d.ok("git_changelist_lines", { changelist: "feature" });
    expect(r.files).toEqual([expect.objectContaining({ path: "f.txt", lines: [8, 9] })]);
    expect(r.text).toContain("8|");
    expect(await listsOf(d, "f.txt")).toEqual({ 2: "default", 3: "default", 4: "default", 8: "feature", 9: "feature" });
    // A line added right below the marked range joins it; one far away joins the active list.
    lines.splice(9, 0, "below six");
    lines[12] = "line 10 edited";
    writeFileSync(path.join(dir, "f.txt"), lines.join("\n"));
    expect(await listsOf(d, "f.txt")).toEqual({ 2: "default", 3: "default", 4: "default", 8: "feature", 9: "feature", 10: "feature", 13: "default" });
  });

  it("a range is split where a selection ends; marking no changed line is NO_CHANGE; a stale hash is HASH_MISMATCH", async () => {
    commitFile(dir, "s.txt", text(TEN));
    writeFile(dir, "s.txt", withLines({ 4: "4", 5: "5", 6: "6" }));
    const s = await d.ok("git_line_status", { path: "s.txt" });
    await d.ok("git_changelist_mark", { path: "s.txt", hash: s.hash, lines: [5], changelist: "middle" });
    const after = await d.ok("git_line_status", { path: "s.txt" });
    expect(after.ranges[0]).toMatchObject({
      changelist: null,
      changelist_parts: [
        { changelist: "default", start: 4, end: 4 },
        { changelist: "middle", start: 5, end: 5 },
        { changelist: "default", start: 6, end: 6 },
      ],
    });
    expect(after.text).toContain("5|");
    expect((await d.call("git_changelist_mark", { path: "s.txt", hash: s.hash, lines: [1], changelist: "other" })).result.code).toBe("NO_CHANGE");
    expect((await d.ok("git_changelists")).lists.map((l: any) => l.name)).toEqual(["default", "middle"]); // "other" was not made
    expect((await d.call("git_changelist_mark", { path: "s.txt", hash: "0000000000000000", lines: [4], changelist: "middle" })).result.code).toBe(
      "HASH_MISMATCH",
    );
  });

  it("a pure deletion goes to a list by its range, is listed and committed as a deletion; git_changelist_of answers for the lines asked", async () => {
    commitFile(dir, "del.txt", text(TEN));
    const work = TEN.filter((_, i) => i !== 3).map((l) => (l === "line 8" ? "line eight" : l));
    writeFile(dir, "del.txt", text(work));
    const s = await d.ok("git_line_status", { path: "del.txt" });
    expect(s.ranges.map((r: any) => [r.range, r.kind])).toEqual([
      [1, "deleted"],
      [2, "modified"],
    ]);
    await d.ok("git_changelist_mark", { path: "del.txt", hash: s.hash, ranges: [1], changelist: "cleanup" });
    const listed = await d.ok("git_changelist_lines", { changelist: "cleanup" });
    expect(listed.files).toEqual([
      { path: "del.txt", hash: s.hash, lines: [], deletions: [{ after: 3, deleted: [{ head_line: 4, tag: tagOf("line 4"), content: "line 4" }] }] },
    ]);
    expect(listed.text).toContain(`-4|${tagOf("line 4")} [-line 4-] (deleted after line 3)`);
    const asked = await d.ok("git_changelist_of", { path: "del.txt", lines: [7, 1] });
    expect(asked.lines).toEqual([
      { line: 1, tag: tagOf("line 1"), changelist: null },
      { line: 7, tag: tagOf("line eight"), changelist: "default" },
    ]);
    expect(asked.deletions).toEqual([]);
    expect((await d.ok("git_changelist_of", { path: "del.txt" })).deletions).toEqual([{ after: 3, head_lines: [4], changelist: "cleanup" }]);
    const beyond = await d.call("git_changelist_of", { path: "del.txt", lines: [10] });
    expect(beyond.result).toMatchObject({ code: "INVALID_PARAMS", lines: [10] });
    const r = await d.ok("git_commit", { message: "drop line 4", changelist: "cleanup" });
    expect(git(dir, "show", `${r.commit}:del.txt`)).toBe(text(TEN.filter((_, i) => i !== 3)));
    expect(await listsOf(d, "del.txt")).toEqual({ 7: "default" });
  });

  it("activating a list sends new changes there and keeps existing ones where they were", async () => {
    commitFile(dir, "x.txt", text(TEN));
    commitFile(dir, "y.txt", text(TEN));
    writeFile(dir, "x.txt", withLines({ 1: "x1" }));
    await d.ok("git_changelist_edit", { action: "create", name: "next" });
    const act = await d.ok("git_changelist_edit", { action: "activate", name: "next" });
    expect(act.active).toBe("next");
    writeFile(dir, "x.txt", withLines({ 1: "x1", 10: "x10" }));
    writeFile(dir, "y.txt", withLines({ 5: "y5" }));
    expect(await listsOf(d, "x.txt")).toEqual({ 1: "default", 10: "next" });
    expect(await listsOf(d, "y.txt")).toEqual({ 5: "next" });
    const lists = await d.ok("git_changelists");
    expect(lists.lists).toEqual([
      { name: "default", active: false, files: [{ path: "x.txt", lines: 1, deletions: 0, ranges: [1] }] },
      {
        name: "next",
        active: true,
        files: [
          { path: "x.txt", lines: 1, deletions: 0, ranges: [2] },
          { path: "y.txt", lines: 1, deletions: 0, ranges: [1] },
        ],
      },
    ]);
  });

  it("create, rename, delete and activate follow the rules of default and report what is wrong", async () => {
    commitFile(dir, "e.txt", text(TEN));
    writeFile(dir, "e.txt", withLines({ 2: "2", 8: "8" }));
    const s = await d.ok("git_line_status", { path: "e.txt" });
    await d.ok("git_changelist_mark", { path: "e.txt", hash: s.hash, lines: [8], changelist: "a" });
    const code = async (p: Record<string, unknown>) => (await d.call("git_changelist_edit", p)).result.code;
    expect(await code({ action: "create", name: "a" })).toBe("ALREADY_EXISTS");
    expect(await code({ action: "rename", name: "default", new_name: "main" })).toBe("INVALID_PARAMS");
    expect(await code({ action: "delete", name: "default" })).toBe("INVALID_PARAMS");
    expect(await code({ action: "rename", name: "a" })).toBe("INVALID_PARAMS");
    expect(await code({ action: "rename", name: "nope", new_name: "x" })).toBe("NOT_FOUND");
    expect(await code({ action: "activate", name: "nope" })).toBe("NOT_FOUND");
    expect(await code({ action: "create", name: "bad\nname" })).toBe("INVALID_PARAMS");
    await d.ok("git_changelist_edit", { action: "create", name: "b" });
    expect(await code({ action: "rename", name: "a", new_name: "b" })).toBe("ALREADY_EXISTS");
    await d.ok("git_changelist_edit", { action: "rename", name: "a", new_name: "renamed" });
    expect(await listsOf(d, "e.txt")).toEqual({ 2: "default", 8: "renamed" });
    await d.ok("git_changelist_edit", { action: "activate", name: "renamed" });
    const del = await d.ok("git_changelist_edit", { action: "delete", name: "renamed" });
    expect(del).toMatchObject({ lists: ["default", "b"], active: "default" });
    expect(await listsOf(d, "e.txt")).toEqual({ 2: "default", 8: "default" });
    expect((await d.call("git_changelist_lines", { changelist: "renamed" })).result.code).toBe("NOT_FOUND");
  });

  it("git_stage_lines {changelist} stages every change of that list in every file, as git add of them by hand", async () => {
    commitFile(dir, "p.txt", text(TEN));
    commitFile(dir, "q.txt", text(TEN));
    writeFile(dir, "p.txt", withLines({ 1: "p1", 9: "p9" }));
    writeFile(dir, "q.txt", withLines({ 4: "q4" }));
    const p = await d.ok("git_line_status", { path: "p.txt" });
    const q = await d.ok("git_line_status", { path: "q.txt" });
    await d.ok("git_changelist_mark", { path: "p.txt", hash: p.hash, lines: [9], changelist: "ship" });
    await d.ok("git_changelist_mark", { path: "q.txt", hash: q.hash, changelist: "ship" });
    const preview = await expectUnchanged([dir], [], () => d.ok("git_stage_lines", { changelist: "ship" }, { approved: false }));
    expect(preview.files.map((f: any) => f.path)).toEqual(["p.txt", "q.txt"]);
    await d.ok("git_stage_lines", { changelist: "ship" });
    expect(indexEntry(dir, "p.txt")).toBe(gitAddOf(dir, "p.txt", withLines({ 9: "p9" })));
    expect(indexEntry(dir, "q.txt")).toBe(gitAddOf(dir, "q.txt", withLines({ 4: "q4" })));
    await d.ok("git_unstage_lines", { changelist: "ship", path: "q.txt" });
    expect(indexEntry(dir, "q.txt")).toBe(gitAddOf(dir, "q.txt", text(TEN)));
  });

  it("a commit made outside the daemon settles the marks on the new HEAD", async () => {
    commitFile(dir, "h.txt", text(TEN));
    writeFile(dir, "h.txt", withLines({ 2: "two", 8: "eight" }));
    const s = await d.ok("git_line_status", { path: "h.txt" });
    await d.ok("git_changelist_mark", { path: "h.txt", hash: s.hash, lines: [8], changelist: "later" });
    writeFile(dir, "h.txt", withLines({ 8: "eight" }));
    git(dir, "commit", "-qam", "line 8 by hand");
    writeFile(dir, "h.txt", withLines({ 2: "two", 8: "eight" }));
    expect(await listsOf(d, "h.txt")).toEqual({ 2: "default" });
  });

  it("a binary file's change is one whole-file change of the active list, and commits with it", async () => {
    commitFile(dir, "img.bin", Buffer.from([0, 1, 2]));
    commitFile(dir, "t.txt", text(TEN));
    writeFile(dir, "img.bin", Buffer.from([0, 1, 2, 3]));
    writeFile(dir, "t.txt", withLines({ 1: "t1", 10: "t10" }));
    const s = await d.ok("git_line_status", { path: "t.txt" });
    await d.ok("git_changelist_mark", { path: "t.txt", hash: s.hash, lines: [10], changelist: "later" });
    const lists = await d.ok("git_changelists");
    expect(lists.lists[0].files).toEqual([
      expect.objectContaining({ path: "img.bin", whole_file: "BINARY_FILE" }),
      expect.objectContaining({ path: "t.txt", lines: 1 }),
    ]);
    const preview = await expectUnchanged([dir], [], () => d.ok("git_commit", { message: "now", changelist: "default" }, { approved: false }));
    expect(preview.files.map((f: any) => f.path)).toEqual(["img.bin", "t.txt"]);
    const r = await d.ok("git_commit", { message: "now", changelist: "default" });
    expect(git(dir, "show", "--format=", "--name-only", r.commit)).toBe("img.bin\nt.txt\n");
    expect(git(dir, "show", `${r.commit}:t.txt`)).toBe(withLines({ 1: "t1" }));
    expect(git(dir, "status", "--porcelain")).toBe(" M t.txt\n");
  });

  it("info reports the lists and where they are kept", async () => {
    const info = await d.ok("info", { tool_id: "git_changelists" });
    expect(info.state).toMatchObject({ repository: true, changelists: { lists: ["default"], active: "default", store: ".git/tool-layer/changelists.json" } });
    expect(info.mutating).toBe(false);
  });

  it("mark and edit change the persisted lists: not read-only (no approval needed, nothing destroyed), unlike the reads", async () => {
    const hints = async (tool_id: string) => {
      const r = await d.ok("info", { tool_id });
      return { mutating: r.mutating, read_only: r.read_only, destructive: r.destructive, idempotent: r.idempotent };
    };
    for (const tool of ["git_changelist_mark", "git_changelist_edit"]) {
      expect(await hints(tool), tool).toEqual({ mutating: false, read_only: false, destructive: false, idempotent: true });
    }
    for (const tool of ["git_changelists", "git_changelist_of", "git_changelist_lines"]) {
      expect(await hints(tool), tool).toEqual({ mutating: false, read_only: true, destructive: false, idempotent: true });
    }
  });
});

describe("changelists across daemon restarts", () => {
  const ws = tmpWorkspace({ git: true });
  afterAll(() => ws.cleanup());

  it("survive a restart, follow what changed on disk meanwhile, and follow the bus with no call asking", async () => {
    const dir = ws.dir;
    commitFile(dir, "k.txt", text(TEN));
    writeFile(dir, "k.txt", withLines({ 3: "three", 7: "seven" }));
    let d = await startDaemon(dir);
    const s = await d.ok("git_line_status", { path: "k.txt" });
    await d.ok("git_changelist_mark", { path: "k.txt", hash: s.hash, lines: [7], changelist: "kept" });
    // An edit the daemon only sees on the bus: once its fs.changed is out, the tracker has it (it is served first).
    const lines = withLines({ 3: "three", 7: "seven" }).split("\n");
    lines.unshift("top 1", "top 2");
    writeFileSync(path.join(dir, "k.txt"), lines.join("\n"));
    const event = await d.waitFor((l) => l.event === "fs.changed" && l.data.changes.some((c: any) => c.path === "k.txt"));
    await d.close();
    const stored = JSON.parse(readFileSync(path.join(dir, ".git/tool-layer/changelists.json"), "utf8"));
    expect(stored.lists).toEqual(["default", "kept"]);
    expect(stored.files["k.txt"].base).toBe(event.data.changes.find((c: any) => c.path === "k.txt").hash);
    // 0-based runs: the two new lines on top and line 3 in the active list, line 7 (now 9) kept.
    expect(stored.files["k.txt"].marks).toEqual({
      lines: [
        [0, 2, "default"],
        [4, 5, "default"],
        [8, 9, "kept"],
      ],
      deletions: [],
    });

    // While no daemon runs: one more line above.
    lines.unshift("top 0");
    writeFileSync(path.join(dir, "k.txt"), lines.join("\n"));
    d = await startDaemon(dir);
    try {
      expect(await listsOf(d, "k.txt")).toEqual({ 1: "default", 2: "default", 3: "default", 6: "default", 10: "kept" });
      const lists = await d.ok("git_changelists");
      expect(lists.lists.map((l: any) => l.name)).toEqual(["default", "kept"]);
    } finally {
      await d.close();
    }
  });

  it("a state file over its bound is refused by every changelist call, naming the file and how to start afresh", async () => {
    const big = tmpWorkspace({ git: true });
    commitFile(big.dir, "k.txt", text(TEN));
    const state = path.join(big.dir, ".git/tool-layer/changelists.json");
    mkdirSync(path.dirname(state), { recursive: true });
    writeFileSync(state, "");
    truncateSync(state, CHANGELIST_STATE_MAX_BYTES + 1); // sparse: no time or disk spent on it
    const d = await startDaemon(big.dir);
    try {
      for (const [tool, params] of [
        ["git_changelists", {}],
        ["git_changelist_edit", { action: "create", name: "x" }],
        ["git_line_status", { path: "k.txt" }],
      ] as const) {
        const r = await d.call(tool, params);
        expect(r.result, tool).toMatchObject({ code: "TOO_LARGE", file: state, size: CHANGELIST_STATE_MAX_BYTES + 1, max_bytes: CHANGELIST_STATE_MAX_BYTES });
        expect(r.result.message, tool).toContain(state);
        expect(r.result.message, tool).toMatch(/move it aside or delete it/);
      }
      // Moved aside as the message says: the lists start afresh.
      renameSync(state, `${state}.big`);
      expect((await d.ok("git_changelists")).lists.map((l: { name: string }) => l.name)).toEqual(["default"]);
    } finally {
      await d.close();
      big.cleanup();
    }
  });

  it("a root outside any repository is NOT_A_REPOSITORY for every line tool", async () => {
    const plain = tmpWorkspace({ files: { "a.txt": "a\n" } });
    const d = await startDaemon(plain.dir);
    try {
      for (const [tool, params] of [
        ["git_line_status", { path: "a.txt" }],
        ["git_word_diff", { path: "a.txt" }],
        ["git_changelists", {}],
        ["git_changelist_edit", { action: "create", name: "x" }],
        ["git_stage_lines", {}],
      ] as const) {
        expect((await d.call(tool, params)).result.code, tool).toBe("NOT_A_REPOSITORY");
      }
    } finally {
      await d.close();
      plain.cleanup();
    }
  });
});

describe("a repository with no commit yet", () => {
  const ws = tmpWorkspace({ git: true, files: { "first.txt": "a\nb\nc\n" } });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));

  it("stages some lines of a new file, unstages everything, and commits one changelist onto the unborn branch", async () => {
    const dir = ws.dir;
    const s = await d.ok("git_line_status", { path: "first.txt" });
    expect(s.ranges).toEqual([expect.objectContaining({ kind: "added", start: 1, end: 3 })]);
    await d.ok("git_stage_lines", { path: "first.txt", hash: s.hash, lines: [2] });
    expect(indexEntry(dir, "first.txt")).toBe(gitAddOf(dir, "first.txt", "b\n"));
    await d.ok("git_unstage_lines", {});
    expect(indexEntry(dir, "first.txt")).toBe("");
    await d.ok("git_changelist_mark", { path: "first.txt", hash: s.hash, lines: [1], changelist: "start" });
    const r = await d.ok("git_commit", { message: "the first line", changelist: "start" });
    expect(git(dir, "show", `${r.commit}:first.txt`)).toBe("a\n");
    expect(git(dir, "rev-list", "--count", "HEAD")).toBe("1\n");
    expect(readFileSync(path.join(dir, "first.txt"), "utf8")).toBe("a\nb\nc\n");
    expect(git(dir, "show", ":first.txt")).toBe("a\n");
    expect(await listsOf(d, "first.txt")).toEqual({ 2: "default", 3: "default" });
  });
});
