import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { commitFile, expectUnchanged, git, lines, operationState, otherClone, read, repoWithRemote, writeFile } from "./fixture.js";

describe("auto-resolution in git_pull and git_stash, and whole-file conflicts of binary files", () => {
  let repo: ReturnType<typeof repoWithRemote>;
  let other: ReturnType<typeof otherClone>;
  let d: DaemonClient;

  beforeAll(async () => {
    repo = repoWithRemote({ "a.txt": lines("one", "const total = add(price, tax);", "three", "4", "5", "6", "7", "x = 1") });
    other = otherClone(repo.remote);
    d = await startDaemon(repo.dir);
  });
  afterAll(async () => {
    await d.close();
    other.cleanup();
    repo.cleanup();
  });

  it("a pull whose conflict a word merge settles stops before committing and finalize completes it; with rebase too; each preview says so and changes nothing", async () => {
    commitFile(other.dir, "a.txt", lines("one", "const total = add(price, vat);", "three", "4", "5", "6", "7", "x = 1"), "their vat");
    git(other.dir, "push", "-q");
    commitFile(repo.dir, "a.txt", lines("one", "let total = add(price, tax);", "three", "4", "5", "6", "7", "x = 1"), "our let");
    const mine = git(repo.dir, "rev-parse", "HEAD").trim();
    const preview = await expectUnchanged([repo.dir], [repo.remote], () => d.ok("git_pull", {}, { approved: false }));
    expect(preview.auto_resolution).toMatchObject({ settled: 1, left: 0, words: 1, completes: false });
    const r = await d.call("git_pull", { preview_id: preview.preview_id });
    expect(r.result).toMatchObject({ code: "CONFLICT", review: ["a.txt"], auto_resolved: [{ path: "a.txt", rule: "words" }] });
    expect(read(repo.dir, "a.txt")).toContain("let total = add(price, vat);\n");
    expect(git(repo.dir, "rev-parse", "HEAD").trim()).toBe(mine);
    await d.ok("git_conflict_finalize");
    expect(git(repo.dir, "rev-list", "--parents", "-n1", "HEAD").trim().split(" ")).toHaveLength(3);

    // The same pull as a rebase: the replayed commit is settled and the branch ends on top of theirs.
    git(repo.dir, "reset", "-q", "--hard", mine);
    const rebasePreview = await expectUnchanged([repo.dir], [repo.remote], () => d.ok("git_pull", { rebase: true }, { approved: false }));
    expect(rebasePreview.replay.map((s: any) => [s.subject, s.auto?.completes, s.stops])).toEqual([["our let", false, true]]);
    expect(rebasePreview.text).toContain("auto-resolution would settle all 1 block, 1 by word merge: the rebase would STOP here for you to read them");
    const rebased = await d.call("git_pull", { rebase: true });
    expect(rebased.result).toMatchObject({
      code: "CONFLICT",
      in_progress: "rebase",
      review: ["a.txt"],
      auto_resolved: [{ path: "a.txt", rule: "words", commit: mine.slice(0, 7) }],
    });
    expect(rebased.result.message).toContain("stopped before its next step (rebase --continue)");
    await d.ok("git_conflict_finalize");
    expect(git(repo.dir, "log", "--format=%s", "-2").trim().split("\n")).toEqual(["our let", "their vat"]);
    expect(git(repo.dir, "status", "--porcelain")).toBe("");
  });

  it('a stash pop that a word merge settles stops for a look, and finalize completes it as a clean pop (stash dropped); "safe" leaves the block', async () => {
    git(repo.dir, "reset", "-q", "--hard", "origin/main");
    commitFile(repo.dir, "a.txt", read(repo.dir, "a.txt").replace("x = 1", "x = f(a, b)"), "x is f");
    writeFile(repo.dir, "a.txt", read(repo.dir, "a.txt").replace("x = f(a, b)", "x = f(a, c)"));
    git(repo.dir, "stash", "push", "-q");
    commitFile(repo.dir, "a.txt", read(repo.dir, "a.txt").replace("x = f(a, b)", "y = f(a, b)"), "y");
    const before = operationState(repo.dir);
    const safe = await d.call("git_stash", { action: "pop", auto_resolve: "safe" });
    expect(safe.result.code).toBe("CONFLICT");
    expect(safe.result.conflicts[0].blocks[0].auto.rule).toBe("words");
    await d.ok("git_merge", { abort: true });
    expect(operationState(repo.dir)).toEqual(before);
    const preview = await expectUnchanged([repo.dir], [repo.remote], () => d.ok("git_stash", { action: "pop" }, { approved: false }));
    expect(preview.auto_resolution).toMatchObject({ settled: 1, words: 1, completes: false });
    const r = await d.call("git_stash", { action: "pop" });
    expect(r.result).toMatchObject({ code: "CONFLICT", in_progress: "stash", review: ["a.txt"], auto_resolved: [{ rule: "words" }] });
    expect(read(repo.dir, "a.txt")).toContain("y = f(a, c)\n");
    expect(git(repo.dir, "stash", "list")).not.toBe("");
    await d.ok("git_conflict_finalize");
    expect(git(repo.dir, "stash", "list")).toBe("");
    expect(git(repo.dir, "status", "--porcelain")).toBe(" M a.txt\n");
    expect((await d.ok("git_conflicts")).operation).toBeNull();
  });

  it("a binary file changed on both sides is listed with its kind and settled whole: take theirs writes and stages their bytes", async () => {
    git(repo.dir, "reset", "-q", "--hard", "origin/main");
    const bin = (n: number) => Buffer.from([0, 1, 2, n, 0, 255]);
    writeFile(repo.dir, "img.bin", bin(1));
    git(repo.dir, "add", "img.bin");
    git(repo.dir, "commit", "-q", "-m", "img");
    git(repo.dir, "checkout", "-q", "-b", "paint");
    writeFile(repo.dir, "img.bin", bin(3));
    git(repo.dir, "commit", "-q", "-am", "their img");
    git(repo.dir, "checkout", "-q", "main");
    writeFile(repo.dir, "img.bin", bin(2));
    git(repo.dir, "commit", "-q", "-am", "our img");
    const r = await d.call("git_merge", { ref: "paint" });
    expect(r.result.code).toBe("CONFLICT");
    expect(r.result.conflicts).toMatchObject([{ path: "img.bin", kind: "binary", blocks: [] }]);
    const [file] = (await d.ok("git_conflicts")).files;
    expect(file.hash).toMatch(/^[0-9a-f]{16}$/);
    expect((await d.call("git_conflict_resolve", { path: "img.bin", hash: file.hash, block: 1, take: "theirs" })).result.code).toBe("INVALID_PARAMS");
    await expectUnchanged([repo.dir], [], () => d.ok("git_conflict_resolve", { path: "img.bin", hash: file.hash, take: "theirs" }, { approved: false }));
    const took = await d.ok("git_conflict_resolve", { path: "img.bin", hash: file.hash, take: "theirs" });
    expect(took.staged).toBe(true);
    expect(readFileSync(path.join(repo.dir, "img.bin")).equals(bin(3))).toBe(true);
    expect(git(repo.dir, "ls-files", "-u")).toBe("");
    await d.ok("git_conflict_finalize");
    expect(git(repo.dir, "log", "-1", "--format=%s").trim()).toBe("Merge branch 'paint'");
  });
});
