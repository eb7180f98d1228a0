import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { conflictingBranches, git, lines, resetRepo } from "./fixture.js";

/**
 * How many git processes of a kind one call starts, read from GIT_TRACE (which the daemon passes on to every git it
 * runs): the work a call does once must not be done again (a merge-tree is a whole merge).
 */
describe("git processes per call", () => {
  const ws = tmpWorkspace({ git: true });
  // Outside the repository: a file in .git changing with every git command would wake the daemon's git watcher.
  const traceDir = mkdtempSync(path.join(tmpdir(), "tool-layer-trace-"));
  const trace = path.join(traceDir, "trace.log");
  afterAll(() => rmSync(traceDir, { recursive: true, force: true }));
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c), [], { GIT_TRACE: trace });
  const dir = ws.dir;
  let root: string;

  /** The git commands (`merge-tree`, `add`, ...) `call` ran, in order. */
  async function commandsOf(call: () => Promise<unknown>): Promise<string[]> {
    writeFileSync(trace, "");
    await call();
    return [...readFileSync(trace, "utf8").matchAll(/trace: built-in: git (\S+)/g)].map((m) => m[1]);
  }
  const countOf = (commands: string[], name: string) => commands.filter((c) => c === name).length;

  beforeEach(() => {
    root ??= (git(dir, "commit", "-q", "--allow-empty", "-m", "root"), git(dir, "rev-parse", "HEAD").trim());
    resetRepo(dir, root);
  });

  it("a merge preview with conflicts computes the merge once: the conflicts, the files in the way and auto-resolution share it", async () => {
    conflictingBranches(
      dir,
      { "a.txt": lines("one", "const total = add(price, tax);", "three") },
      { "a.txt": lines("one", "let total = add(price, tax);", "three") },
      { "a.txt": lines("one", "const total = add(price, vat);", "three") },
    );
    let preview: any;
    const commands = await commandsOf(async () => (preview = await d.ok("git_merge", { ref: "topic" }, { approved: false })));
    expect(preview.conflicts).toEqual(["a.txt"]);
    expect(preview.auto_resolution).toMatchObject({ settled: 1, left: 0, words: 1 });
    expect(countOf(commands, "merge-tree")).toBe(1);
  });

  it("git_conflict_finalize stages every conflicted file with one git add", async () => {
    conflictingBranches(
      dir,
      { "a.txt": lines("a"), "b.txt": lines("b"), "c.txt": lines("c") },
      { "a.txt": lines("a1"), "b.txt": lines("b1"), "c.txt": lines("c1") },
      { "a.txt": lines("a2"), "b.txt": lines("b2"), "c.txt": lines("c2") },
    );
    const stopped = await d.call("git_merge", { ref: "topic" });
    expect(stopped.result.files).toEqual(["a.txt", "b.txt", "c.txt"]);
    for (const f of ["a.txt", "b.txt", "c.txt"]) writeFileSync(path.join(dir, f), "settled\n");
    let fin: any;
    const commands = await commandsOf(async () => (fin = await d.ok("git_conflict_finalize")));
    expect(fin.staging).toEqual(["a.txt", "b.txt", "c.txt"]);
    expect(git(dir, "show", "--format=", "--name-only", "HEAD").trim().split("\n")).toEqual(["a.txt", "b.txt", "c.txt"]);
    expect(git(dir, "show", "HEAD:b.txt")).toBe("settled\n");
    expect(countOf(commands, "add")).toBe(1);
  });

  it("auto-resolution stages the files it settled whole with one git add", async () => {
    // Ours only trimmed trailing spaces, theirs changed the value: settled by the whitespace rule (a word merge would stop).
    const base = { "a.txt": lines("one", "x = 1   ", "three"), "b.txt": lines("one", "y = 1   ", "three") };
    const ours = { "a.txt": lines("one", "x = 1", "three"), "b.txt": lines("one", "y = 1", "three") };
    const theirs = { "a.txt": lines("one", "x = 2   ", "three"), "b.txt": lines("one", "y = 2   ", "three") };
    conflictingBranches(dir, base, ours, theirs);
    let r: any;
    const commands = await commandsOf(async () => (r = await d.ok("git_merge", { ref: "topic" })));
    expect(r.auto_resolved.map((b: any) => b.path)).toEqual(["a.txt", "b.txt"]);
    expect(git(dir, "status", "--porcelain")).toBe("");
    expect(countOf(commands, "add")).toBe(1);
  });
});
