import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { initHash, tagOf } from "../../src/core/hash.js";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { conflictingBranches, expectUnchanged, git, lines, operationState, read, resetRepo, writeFile } from "./fixture.js";

/** The content of a rendered `N|TAG content` line. */
const content = (l: string) => l.slice(l.indexOf(" ") + 1);

/** The worked example: three blocks, one settled by a word merge, one taken from theirs, one composed. */
const BASE = lines(
  "import { a } from './a';",
  "",
  "const timeout = 30;",
  "",
  "function greet(name) {",
  "  return 'Hello ' + name;",
  "}",
  "",
  "export { greet };",
);
const OURS = lines(
  "import { a, b } from './a';",
  "",
  "const timeout = 60;",
  "",
  "function greet(name) {",
  "  return 'Hi ' + name + '!';",
  "}",
  "",
  "export { greet };",
);
const THEIRS = lines(
  "import { a } from './a.js';",
  "",
  "const timeout = 45;",
  "",
  "function greet(name, punct) {",
  "  return 'Hello ' + name + punct;",
  "}",
  "",
  "export { greet, a };",
);

describe("conflicts of a merge: auto-resolution, git_conflicts, git_conflict_resolve, git_conflict_finalize, abort", () => {
  let dir: string;
  let cleanup: () => void;
  let d: DaemonClient;
  let root: string;

  beforeAll(async () => {
    await initHash();
    ({ dir, cleanup } = tmpWorkspace({ git: true }));
    git(dir, "commit", "-q", "--allow-empty", "-m", "root");
    root = git(dir, "rev-parse", "HEAD").trim();
    d = await startDaemon(dir);
  });
  afterAll(async () => {
    await d.close();
    cleanup();
  });
  beforeEach(() => {
    resetRepo(dir, root);
    try {
      git(dir, "config", "--unset-all", "merge.conflictStyle");
    } catch {
      // not set
    }
  });

  it("a merge whose conflict a word merge settles stops before committing, the file unstaged; finalize commits; the preview says so and changes nothing", async () => {
    conflictingBranches(
      dir,
      { "a.txt": lines("one", "const total = add(price, tax);", "three") },
      { "a.txt": lines("one", "let total = add(price, tax);", "three") },
      { "a.txt": lines("one", "const total = add(price, vat);", "three") },
    );
    const preview = await expectUnchanged([dir], [], () => d.ok("git_merge", { ref: "topic" }, { approved: false }));
    expect(preview.conflicts).toEqual(["a.txt"]);
    expect(preview.auto_resolution).toMatchObject({
      mode: "all",
      settled: 1,
      left: 0,
      words: 1,
      completes: false,
      files: [{ path: "a.txt", kind: "text", blocks: [{ block: 1, rule: "words" }] }],
    });
    expect(preview.text).toContain("WORD MERGE");
    expect(preview.text).toContain("1 of them by word merge: it would stop before going on");
    expect((await d.ok("git_merge", { ref: "topic" }, { approved: false })).preview_id).toBe(preview.preview_id);

    const head = git(dir, "rev-parse", "HEAD").trim();
    const r = await d.call("git_merge", { ref: "topic", preview_id: preview.preview_id });
    expect(r.result.code).toBe("CONFLICT");
    const merged = "let total = add(price, vat);";
    expect(r.result.auto_resolved).toEqual([{ path: "a.txt", rule: "words", lines: [2, 2], result: [`2|${tagOf(merged)} ${merged}`] }]);
    expect(r.result).toMatchObject({ review: ["a.txt"], conflicts: [], in_progress: "merge" });
    expect(r.result.message).toContain("stopped before its next step (the merge commit)");
    expect(r.result.message).toContain("WORD MERGE, check it");
    expect(read(dir, "a.txt")).toBe(lines("one", merged, "three"));
    // Nothing committed, nothing staged: the merge waits for the caller.
    expect(git(dir, "rev-parse", "HEAD").trim()).toBe(head);
    expect(git(dir, "ls-files", "-u", "--", "a.txt")).not.toBe("");

    const fin = await expectUnchanged([dir], [], () => d.ok("git_conflict_finalize", {}, { approved: false }));
    expect(fin.staging).toEqual(["a.txt"]);
    await d.ok("git_conflict_finalize", { preview_id: fin.preview_id });
    expect(git(dir, "rev-list", "--parents", "-n1", "HEAD").trim().split(" ")).toHaveLength(3);
    expect(git(dir, "show", "HEAD:a.txt")).toBe(lines("one", merged, "three"));
    expect(git(dir, "log", "-1", "--format=%B").trim()).toBe("Merge branch 'topic'");
    expect(git(dir, "status", "--porcelain")).toBe("");
  });

  it("a block whose word merge would carry text across lines is left for the person, as git leaves it", async () => {
    // Theirs adds the line `c 0` before `c 3`, which ours changed: a token diff reads it as ` 0\nc` after base's `c`.
    conflictingBranches(dir, { "a.txt": "x\nc 3\ny\n" }, { "a.txt": "x\nzz 3\ny\n" }, { "a.txt": "x\nc 0\nc 3\ny\n" });
    const preview = await expectUnchanged([dir], [], () => d.ok("git_merge", { ref: "topic" }, { approved: false }));
    expect(preview.auto_resolution).toMatchObject({ settled: 0, left: 1, completes: false });
    const head = git(dir, "rev-parse", "HEAD").trim();
    const r = await d.call("git_merge", { ref: "topic" });
    expect(r.result.code).toBe("CONFLICT");
    expect(r.result.auto_resolved).toEqual([]);
    expect(r.result.conflicts[0].blocks.map((b: any) => [b.ours.map(content), b.theirs.map(content), b.auto])).toEqual([[["zz 3"], ["c 0", "c 3"], null]]);
    expect(git(dir, "rev-parse", "HEAD").trim()).toBe(head);
    expect(read(dir, "a.txt")).not.toContain("zz 0");
  });

  it('auto_resolve "safe" leaves a word-level block for the person: git_conflicts proposes it, take "auto" applies it, finalize commits', async () => {
    conflictingBranches(
      dir,
      { "a.txt": lines("one", "const total = add(price, tax);", "three") },
      { "a.txt": lines("one", "let total = add(price, tax);", "three") },
      { "a.txt": lines("one", "const total = add(price, vat);", "three") },
    );
    const preview = await expectUnchanged([dir], [], () => d.ok("git_merge", { ref: "topic", auto_resolve: "safe" }, { approved: false }));
    expect(preview.auto_resolution).toMatchObject({ mode: "safe", settled: 0, left: 1, completes: false });
    const gitWrote = lines("one", "<<<<<<< HEAD", "let total = add(price, tax);", "=======", "const total = add(price, vat);", ">>>>>>> topic", "three");
    const r = await d.call("git_merge", { ref: "topic", auto_resolve: "safe" });
    expect(r.result.code).toBe("CONFLICT");
    expect(r.result.auto_resolved).toEqual([]);
    expect(r.result.files).toEqual(["a.txt"]);
    expect(read(dir, "a.txt")).toBe(gitWrote); // as git left it: no block touched
    const listed = await d.ok("git_conflicts");
    expect(listed.operation).toBe("merge");
    expect(listed.ours_label).toMatch(/^main \(HEAD: commit [0-9a-f]{7} \(ours\)\)$/);
    expect(listed.theirs_label).toMatch(/^topic \(commit [0-9a-f]{7} \(theirs\)\)$/);
    const [file] = listed.files;
    expect(file.blocks).toEqual([
      {
        block: 1,
        lines: [2, 6],
        ours: [`1|${tagOf("let total = add(price, tax);")} let total = add(price, tax);`],
        base: [`1|${tagOf("const total = add(price, tax);")} const total = add(price, tax);`],
        theirs: [`1|${tagOf("const total = add(price, vat);")} const total = add(price, vat);`],
        auto: { rule: "words", lines: [`1|${tagOf("let total = add(price, vat);")} let total = add(price, vat);`] },
      },
    ]);
    expect(listed.text).toContain("WORD MERGE, check it");
    await d.ok("git_conflict_resolve", { path: "a.txt", hash: file.hash, block: 1, take: "auto" });
    expect(read(dir, "a.txt")).toBe(lines("one", "let total = add(price, vat);", "three"));
    const fin = await d.ok("git_conflict_finalize");
    expect(fin.head).toBe(git(dir, "rev-parse", "HEAD").trim());
    expect(git(dir, "log", "-1", "--format=%B").trim()).toBe("Merge branch 'topic'");
    expect(git(dir, "status", "--porcelain")).toBe("");
  });

  it("identical edits that git (diff3 style) still leaves as a conflict are settled as identical and the merge completes", async () => {
    git(dir, "config", "merge.conflictStyle", "diff3");
    // Both change line 2 alike; ours also changes line 4. The two diffs line up differently, so git's diff3 output keeps a conflict.
    conflictingBranches(
      dir,
      { "a.txt": lines("x", "old", "x", "old") },
      { "a.txt": lines("x", "new", "x", "new") },
      { "a.txt": lines("x", "new", "x", "old") },
    );
    const preview = await expectUnchanged([dir], [], () => d.ok("git_merge", { ref: "topic" }, { approved: false }));
    expect(preview.auto_resolution).toMatchObject({ settled: 1, left: 0, completes: true, files: [{ blocks: [{ block: 1, rule: "identical" }] }] });
    const r = await d.ok("git_merge", { ref: "topic" });
    expect(r.auto_resolved.map((b: any) => [b.rule, b.lines])).toEqual([["identical", [1, 2]]]);
    expect(read(dir, "a.txt")).toBe(lines("x", "new", "x", "new"));
    expect(git(dir, "status", "--porcelain")).toBe("");
  });

  it("the worked example: one block auto-resolved, one taken from theirs, one composed from both sides with a keep table", async () => {
    conflictingBranches(dir, { "greet.js": BASE }, { "greet.js": OURS }, { "greet.js": THEIRS });
    const stopped = await d.call("git_merge", { ref: "topic" });
    expect(stopped.result.code).toBe("CONFLICT");
    expect(stopped.result.auto_resolved).toMatchObject([{ path: "greet.js", rule: "words", lines: [1, 1] }]);
    expect(stopped.result.message).toContain("WORD MERGE, check it");
    expect(stopped.result.message).toContain("2 blocks in greet.js need you");
    const [left] = stopped.result.conflicts;
    expect(left.blocks.map((b: any) => b.block)).toEqual([1, 2]);
    // The stop's answer numbers the blocks as git_conflicts does for the same hash.
    const listed = (await d.ok("git_conflicts", { path: "greet.js" })).files[0];
    expect(listed).toEqual(left);
    expect(listed.blocks[0].theirs).toEqual([`1|${tagOf("const timeout = 45;")} const timeout = 45;`]);

    const one = await d.ok("git_conflict_resolve", { path: "greet.js", hash: listed.hash, block: 1, take: "theirs" });
    expect(one.after).toEqual([`3|${tagOf("const timeout = 45;")} const timeout = 45;`]);
    expect(one.blocks_left).toBe(1);
    // The hash the first listing was for is stale now.
    const stale = await d.call("git_conflict_resolve", { path: "greet.js", hash: listed.hash, block: 1, take: "ours" });
    expect(stale.result).toMatchObject({ code: "HASH_MISMATCH", current_hash: one.hash });

    const again = (await d.ok("git_conflicts", { path: "greet.js" })).files[0];
    expect(again.hash).toBe(one.hash);
    const block = again.blocks[0];
    expect(block.ours.map(content)).toEqual(["function greet(name) {", "  return 'Hi ' + name + '!';"]);
    expect(block.theirs.map(content)).toEqual(["function greet(name, punct) {", "  return 'Hello ' + name + punct;"]);
    const sig = block.theirs[0].slice(2, 6);
    const wrong = sig === "0000" ? "FFFF" : "0000";
    const bad = await d.call("git_conflict_resolve", { path: "greet.js", hash: again.hash, block: 1, keep: [`theirs:1:${wrong}`] });
    expect(bad.result.code).toBe("TAG_MISMATCH");
    expect((await d.call("git_conflict_resolve", { path: "greet.js", hash: again.hash, block: 2, take: "ours" })).result.code).toBe("NOT_FOUND");
    expect((await d.call("git_conflict_resolve", { path: "greet.js", hash: again.hash, block: 1, keep: ["ours:9"] })).result.code).toBe("NOT_FOUND");

    const keep = [`theirs:1:${sig}`, { text: "  // was: 'Hello ' + name + punct" }, "ours:2"];
    const before = read(dir, "greet.js");
    const preview = await expectUnchanged([dir], [], () =>
      d.ok("git_conflict_resolve", { path: "greet.js", hash: again.hash, block: 1, keep }, { approved: false }),
    );
    expect(read(dir, "greet.js")).toBe(before);
    expect(preview.after.map(content)).toEqual(["function greet(name, punct) {", "  // was: 'Hello ' + name + punct", "  return 'Hi ' + name + '!';"]);
    expect(preview.before[0]).toMatch(/<<<<<<< HEAD$/);
    const done = await d.ok("git_conflict_resolve", { path: "greet.js", hash: again.hash, block: 1, keep, preview_id: preview.preview_id });
    expect(done.hash).toBe(preview.hash);
    expect(done.blocks_left).toBe(0);

    const finPreview = await expectUnchanged([dir], [], () => d.ok("git_conflict_finalize", {}, { approved: false }));
    expect(finPreview.staging).toEqual(["greet.js"]);
    expect(finPreview.text).toContain(`commit the merge (merge of topic) with git's message "Merge branch 'topic'"`);
    await d.ok("git_conflict_finalize", { preview_id: finPreview.preview_id });
    expect(git(dir, "log", "-1", "--format=%B").trim()).toBe("Merge branch 'topic'");
    expect(read(dir, "greet.js")).toBe(
      lines(
        "import { a, b } from './a.js';",
        "",
        "const timeout = 45;",
        "",
        "function greet(name, punct) {",
        "  // was: 'Hello ' + name + punct",
        "  return 'Hi ' + name + '!';",
        "}",
        "",
        "export { greet, a };",
      ),
    );
    expect(git(dir, "status", "--porcelain")).toBe("");
  });

  it("finalize is refused while markers remain, naming file and line; every preview of the conflict tools changes nothing", async () => {
    conflictingBranches(
      dir,
      { "a.txt": lines("1", "x = 1", "3"), "b.txt": lines("b") },
      { "a.txt": lines("1", "x = 2", "3") },
      { "a.txt": lines("1", "x = 3", "3") },
    );
    expect((await d.call("git_merge", { ref: "topic" })).result.code).toBe("CONFLICT");
    const index = readFileSync(path.join(dir, ".git/index"));
    const listed = (await d.ok("git_conflicts")).files[0];
    const previews: [string, Record<string, unknown>][] = [
      ["git_conflict_resolve", { path: "a.txt", hash: listed.hash, block: 1, take: "both" }],
      ["git_conflict_resolve", { path: "a.txt", hash: listed.hash, take: "theirs" }],
      ["git_merge", { abort: true }],
    ];
    for (const [tool, params] of previews) {
      const [a, b] = await expectUnchanged([dir], [], async () => [
        await d.ok(tool, params, { approved: false }),
        await d.ok(tool, params, { approved: false }),
      ]);
      expect(b.preview_id, tool).toBe(a.preview_id);
    }
    // Reading conflicts and previewing their resolution never rewrite the index (no stat refresh, no lock).
    expect(readFileSync(path.join(dir, ".git/index")).equals(index)).toBe(true);
    const refused = await expectUnchanged([dir], [], () => d.call("git_conflict_finalize"));
    expect(refused.result.code).toBe("CONFLICT");
    expect(refused.result.message).toContain("a.txt:2: a conflict marker is still there");
    expect((await d.call("git_conflict_finalize", {}, { approved: false })).result.code).toBe("CONFLICT");
    expect((await d.call("git_conflict_resolve", { path: "b.txt", hash: listed.hash, block: 1, take: "ours" })).result.code).toBe("NOT_FOUND");
    expect((await d.call("git_conflict_resolve", { path: "a.txt", hash: listed.hash, block: 1 })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("git_conflict_resolve", { path: "a.txt", hash: listed.hash, block: 1, take: "ours", keep: ["ours:1"] })).result.code).toBe(
      "INVALID_PARAMS",
    );
    // A hand edit that removes one marker line leaves a stray marker: still refused.
    writeFile(dir, "a.txt", read(dir, "a.txt").replace("<<<<<<< HEAD\n", ""));
    const stray = await d.call("git_conflict_finalize");
    expect(stray.result.code).toBe("CONFLICT");
    expect(stray.result.message).toMatch(/a\.txt:\d+: a conflict marker is still there/);
    // Resolved by hand, finalize goes through.
    writeFile(dir, "a.txt", lines("1", "x = 4", "3"));
    // The preview and the answer name the message the commit gets, not git's MERGE_MSG.
    const withMessage = await expectUnchanged([dir], [], () => d.ok("git_conflict_finalize", { message: "resolved by hand" }, { approved: false }));
    expect(withMessage.step).toBe(`commit the merge (merge of topic) with the message "resolved by hand"`);
    expect(withMessage.text).not.toContain("Merge branch");
    const finished = await d.ok("git_conflict_finalize", { message: "resolved by hand", preview_id: withMessage.preview_id });
    expect(finished.text).toContain(`with the message "resolved by hand"`);
    expect(finished.text).not.toContain("Merge branch");
    expect(git(dir, "log", "-1", "--format=%B").trim()).toBe("resolved by hand");
    expect(git(dir, "show", "HEAD:a.txt")).toBe(lines("1", "x = 4", "3"));
  });

  it("a file whose content has marker-like lines: blocks come from the stages and the daemon rewrites the markers longer", async () => {
    const text = (v: string) => lines("Title", "=======", "<<<<<<< not a marker", `value = ${v}`, ">>>>>>> nor this", "end");
    conflictingBranches(dir, { "doc.txt": text("1") }, { "doc.txt": text("2").replace("value = 2\n", "value = 2\n=======\n") }, { "doc.txt": text("3") });
    const r = await d.call("git_merge", { ref: "topic" });
    expect(r.result.code).toBe("CONFLICT");
    const [file] = (await d.ok("git_conflicts")).files;
    expect(file.blocks).toHaveLength(1);
    const b = file.blocks[0];
    expect(b.ours.map(content)).toEqual(["value = 2", "======="]);
    expect(b.theirs.map(content)).toEqual(["value = 3"]);
    expect(b.edited).toBeUndefined();
    // Written with 8-character markers: the content's 7-character lines cannot be taken for them.
    expect(read(dir, "doc.txt")).toContain("<<<<<<<< HEAD\n");
    await d.ok("git_conflict_resolve", { path: "doc.txt", hash: file.hash, block: 1, keep: ["theirs:1", "ours:2"] });
    await d.ok("git_conflict_finalize");
    expect(git(dir, "show", "HEAD:doc.txt")).toBe(lines("Title", "=======", "<<<<<<< not a marker", "value = 3", "=======", ">>>>>>> nor this", "end"));
  });

  it("a CRLF file keeps CRLF through auto-resolution and a resolution", async () => {
    const crlf = (...ls: string[]) => ls.map((l) => `${l}\r\n`).join("");
    conflictingBranches(
      dir,
      { "w.txt": crlf("a = 1", "keep", "b = f(x, y)", "tail") },
      { "w.txt": crlf("a = 2", "keep", "b = g(x, y)", "tail") },
      { "w.txt": crlf("a = 3", "keep", "b = f(x, z)", "tail") },
    );
    expect((await d.call("git_merge", { ref: "topic" })).result.code).toBe("CONFLICT");
    const after = read(dir, "w.txt");
    expect(after.replace(/\r\n/g, "")).not.toContain("\n");
    expect(after).toContain("b = g(x, z)\r\n");
    const [file] = (await d.ok("git_conflicts")).files;
    expect(file.blocks).toHaveLength(1);
    await d.ok("git_conflict_resolve", { path: "w.txt", hash: file.hash, block: 1, keep: ["ours:1", { text: "c = 0" }] });
    expect(read(dir, "w.txt")).toBe(crlf("a = 2", "c = 0", "keep", "b = g(x, z)", "tail"));
    await d.ok("git_conflict_finalize");
    expect(git(dir, "show", "HEAD:w.txt")).toBe(crlf("a = 2", "c = 0", "keep", "b = g(x, z)", "tail"));
  });

  it("a CRLF worktree over LF blobs (eol=crlf) gets CRLF lines from auto-resolution and resolutions, and LF blobs when staged", async () => {
    conflictingBranches(
      dir,
      { ".gitattributes": "*.txt text eol=crlf\n", "e.txt": lines("a = 1", "keep", "b = f(x, y)", "tail") },
      { "e.txt": lines("a = 2", "keep", "b = g(x, y)", "tail") },
      { "e.txt": lines("a = 3", "keep", "b = f(x, z)", "tail") },
    );
    // git checked the files out with CRLF; make the worktree match before merging (a fresh checkout would).
    git(dir, "checkout", "-q", "-f", "main");
    rmSync(path.join(dir, "e.txt"));
    git(dir, "checkout", "-q", "--", "e.txt");
    expect(read(dir, "e.txt")).toContain("\r\n");
    expect((await d.call("git_merge", { ref: "topic" })).result.code).toBe("CONFLICT");
    expect(read(dir, "e.txt")).toContain("b = g(x, z)\r\n");
    const [file] = (await d.ok("git_conflicts")).files;
    await d.ok("git_conflict_resolve", { path: "e.txt", hash: file.hash, block: 1, keep: ["theirs:1", { text: "c = 0" }] });
    const crlf = (...ls: string[]) => ls.map((l) => `${l}\r\n`).join("");
    expect(read(dir, "e.txt")).toBe(crlf("a = 3", "c = 0", "keep", "b = g(x, z)", "tail"));
    await d.ok("git_conflict_finalize");
    expect(git(dir, "show", "HEAD:e.txt")).toBe(lines("a = 3", "c = 0", "keep", "b = g(x, z)", "tail"));
    expect(git(dir, "status", "--porcelain")).toBe("");
  });

  it("git_merge abort restores HEAD, index and worktree exactly, right after the stop and after resolutions, and keeps a backup", async () => {
    conflictingBranches(
      dir,
      { "a.txt": lines("1", "x = 1", "3", "4", "5", "6", "7", "y = 1"), "b.txt": lines("b") },
      { "a.txt": lines("1", "x = 2", "3", "4", "5", "6", "7", "y = 2") },
      { "a.txt": lines("1", "x = 3", "3", "4", "5", "6", "7", "y = 3"), "n.txt": lines("new") },
    );
    writeFile(dir, "b.txt", lines("uncommitted b"));
    writeFile(dir, "u.txt", lines("untracked"));
    const before = operationState(dir);
    expect((await d.call("git_merge", { ref: "topic" })).result.code).toBe("CONFLICT");
    const abort = await expectUnchanged([dir], [], () => d.ok("git_merge", { abort: true }, { approved: false }));
    expect(abort.files).toContain("a.txt");
    expect(abort.text).toContain("exactly as they were before it began");
    const r = await d.ok("git_merge", { abort: true });
    expect(operationState(dir)).toEqual(before);
    expect(r.backup.ref).toMatch(/^refs\/tool-layer\/backup\/.*-merge-abort$/);

    expect((await d.call("git_merge", { ref: "topic" })).result.code).toBe("CONFLICT");
    const [file] = (await d.ok("git_conflicts")).files;
    await d.ok("git_conflict_resolve", { path: "a.txt", hash: file.hash, block: 2, take: "theirs" });
    const resolvedState = read(dir, "a.txt");
    const r2 = await d.ok("git_merge", { abort: true });
    expect(operationState(dir)).toEqual(before);
    // The backup holds the resolution the abort discarded.
    expect(git(dir, "show", `${r2.backup.ref}:a.txt`)).toBe(resolvedState);
    expect((await d.call("git_merge", { abort: true })).result.code).toBe("NO_CHANGE");
  });

  it("a modify/delete conflict has no blocks: it is listed with its kind and settled whole with take", async () => {
    conflictingBranches(dir, { "gone.txt": lines("v1"), "k.txt": lines("k") }, { "gone.txt": lines("v2") }, { "k.txt": lines("k2") });
    git(dir, "checkout", "-q", "topic");
    git(dir, "rm", "-q", "gone.txt");
    git(dir, "commit", "-q", "-m", "delete gone");
    git(dir, "checkout", "-q", "main");
    const r = await d.call("git_merge", { ref: "topic" });
    expect(r.result.code).toBe("CONFLICT");
    const [file] = (await d.ok("git_conflicts")).files;
    expect(file).toMatchObject({ path: "gone.txt", kind: "deleted_by_them", blocks: [], versions: { base: true, ours: true, theirs: false } });
    expect((await d.call("git_conflict_finalize")).result.message).toContain("gone.txt: modified on our side, deleted on theirs, still unmerged");
    expect((await d.call("git_conflict_resolve", { path: "gone.txt", hash: file.hash, block: 1, take: "ours" })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("git_conflict_resolve", { path: "gone.txt", hash: "0000000000000000", take: "delete" })).result.code).toBe("HASH_MISMATCH");
    const del = await d.ok("git_conflict_resolve", { path: "gone.txt", hash: file.hash, take: "delete" });
    expect(del.deleted).toBe(true);
    expect(git(dir, "ls-files", "-u")).toBe("");
    await d.ok("git_conflict_finalize");
    expect(git(dir, "ls-tree", "--name-only", "HEAD")).toBe("k.txt\n");
  });
});
