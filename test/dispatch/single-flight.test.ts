import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type DaemonClient, type Response, daemonForSuite } from "../helpers/daemon.js";
import { countingGit } from "../helpers/counting-git.js";
import { until, waitDead } from "../helpers/process.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";

describe("single flight: identical read-only calls in flight at once share one run", () => {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "one\n", "b.txt": "bee\n" } });
  git(ws.dir, "add", "-A");
  git(ws.dir, "commit", "-qm", "initial");
  const counter = countingGit();
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c), [], counter.env);
  afterAll(() => counter.cleanup());

  /** Resolves once the daemon has taken every line sent so far: it takes them in order, so the `list` after them. */
  const taken = () => d.ok("list");
  /**
   * git_status answers a repeat from memory while nothing changed (src/git/live-status.ts): a new info/exclude (no
   * change event: .git/info is not watched) makes the next one run git.
   */
  let excludes = 0;
  const forget = () => writeFileSync(path.join(ws.dir, ".git/info/exclude"), `# ${++excludes}\n`);
  /** Holds git status and starts one git_status call; resolves once its git has run (and waits to answer). */
  async function heldStatus(id: string): Promise<{ answer: Promise<Response>; runs: number }> {
    forget();
    counter.hold();
    const before = counter.statusRuns();
    const answer = d.call("git_status", {}, { id });
    await until(() => counter.statusRuns() === before + 1, "the first git status to run");
    return { answer, runs: before + 1 };
  }

  it("one git status answers every git_status that came while it ran, each with its own call_id, across sessions", async () => {
    const first = await heldStatus("sf-1");
    const joiners = [d.call("git_status", {}, { id: "sf-2" }), d.call("git_status", {}, { id: "sf-3", session: "other" })];
    await taken();
    counter.release();
    const answers = await Promise.all([first.answer, ...joiners]);
    expect(answers.map((a) => a.call_id)).toEqual(["sf-1", "sf-2", "sf-3"]);
    for (const a of answers) expect(a).toMatchObject({ success: true, result: { clean: true } });
    expect(counter.statusRuns()).toBe(first.runs);
    // A call after the run ended starts a new one once anything changed.
    forget();
    await d.ok("git_status");
    expect(counter.statusRuns()).toBe(first.runs + 1);
  });

  it("a cancel of one joiner answers it CANCELLED; the others still get the run's answer", async () => {
    const first = await heldStatus("c-1");
    const joiner = d.call("git_status", {}, { id: "c-2" });
    await taken();
    expect(await d.ok("cancel", { call_id: "c-1" })).toMatchObject({ cancelled: true });
    expect((await first.answer).result.code).toBe("CANCELLED");
    counter.release();
    expect(await joiner).toMatchObject({ success: true, result: { clean: true } });
    expect(counter.statusRuns()).toBe(first.runs);
  });

  it("the run is stopped (its git killed) once every joiner is cancelled", async () => {
    const first = await heldStatus("k-1");
    const joiner = d.call("git_status", {}, { id: "k-2" });
    await taken();
    const pid = counter.pids().at(-1)!;
    for (const id of ["k-1", "k-2"]) expect(await d.ok("cancel", { call_id: id })).toMatchObject({ cancelled: true });
    for (const a of await Promise.all([first.answer, joiner])) expect(a.result.code).toBe("CANCELLED");
    await waitDead(pid); // still held: only the cancel can have ended it
    counter.release();
  });

  it("calls with other params do not share: each search pattern gets its own answer", async () => {
    const [one, two] = await Promise.all([d.ok("search", { pattern: "one" }), d.ok("search", { pattern: "nothing-matches-this" })]);
    expect(one.total).toBe(1);
    expect(two.total).toBe(0);
  });

  // The two tests that change the worktree come last, so no change event reaches a test that counts runs.
  it("a change event between two calls gives two runs: the second sees the change, the first's joiners do not", async () => {
    const first = await heldStatus("ch-1");
    const joiner = d.call("git_status", {}, { id: "ch-2" });
    await taken();
    writeFileSync(path.join(ws.dir, "a.txt"), "changed\n");
    await d.waitFor((l) => l.event === "fs.changed" && l.data.changes.some((c: { path: string }) => c.path === "a.txt"));
    const after = d.call("git_status", {}, { id: "ch-3" });
    await until(() => counter.statusRuns() === first.runs + 1, "a second git status to run");
    counter.release();
    const [a, b, c] = await Promise.all([first.answer, joiner, after]);
    expect(a.result).toMatchObject({ clean: true });
    expect(b.result).toMatchObject({ clean: true });
    expect(c.result).toMatchObject({ clean: false, unstaged: [expect.objectContaining({ path: "a.txt" })] });
  });

  it("a call after an approved write answered starts its own run, before the watcher has reported the write", async () => {
    const first = await heldStatus("w-1");
    const read = await d.ok("file_read", { path: "b.txt" });
    await d.ok("file_write", { path: "b.txt", hash: read.hash, content: "written\n" });
    const after = d.call("git_status", {}, { id: "w-2" });
    await until(() => counter.statusRuns() === first.runs + 1, "a second git status to run");
    counter.release();
    const unstaged = async (answer: Promise<Response>) => ((await answer).result.unstaged as { path: string }[]).map((e) => e.path);
    expect(await unstaged(first.answer)).toEqual(["a.txt"]);
    expect(await unstaged(after)).toEqual(["a.txt", "b.txt"]);
  });
});
