import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { descendants, processes, until, waitDead } from "../helpers/process.js";
import { tmpWorkspace } from "../helpers/tmp.js";

const ws = tmpWorkspace({ files: { "a.txt": "a\n" } });
let d: DaemonClient;
daemonForSuite(ws, (c) => (d = c));

const outputOf = (job: string) => d.events.filter((e) => e.event === "terminal.output" && e.data.job === job);
const exitedEvent = (job: string) => d.waitFor((l) => l.event === "terminal.exited" && l.data.job === job, 30_000);

describe("background jobs", () => {
  it("answer at once with a job id, stream output as events, end with terminal.exited after the last output", async () => {
    const r = await d.ok("terminal_run", { command: "for i in 1 2 3; do echo \"line $i\"; done; printf '\\033[1mbold\\033[0m\\n'", background: true });
    expect(r).toMatchObject({ job: expect.stringMatching(/^job-\d+$/), sandboxed: true });
    const exited = await exitedEvent(r.job);
    expect(exited.data).toEqual({ job: r.job, exit_code: 0, signal: null });
    const events = outputOf(r.job);
    expect(events.map((e) => e.data.data).join("")).toBe("line 1\nline 2\nline 3\nbold\n");
    expect(events.every((e) => e.seq < exited.seq)).toBe(true);
    expect(events.at(-1)!.data.next).toBe(Buffer.byteLength(readFileSync(r.output_file, "utf8")));
    const { jobs } = await d.ok("terminal_jobs");
    expect(jobs.find((j: { job: string }) => j.job === r.job)).toMatchObject({ running: false, exit_code: 0, command: expect.stringContaining("line $i") });
  });

  it("terminal_output returns the buffered output from an offset; terminal_kill stops the job and its tree", async () => {
    const r = await d.ok("terminal_run", { command: "echo abc; echo def; sleep 1041 & wait", background: true });
    await d.waitFor((l) => l.event === "terminal.output" && l.data.job === r.job && l.data.next >= 8);
    // The output can come before the background sleep has exec'd (bash forks it, then echoes on).
    const findSleeper = () => {
      const mine = new Set(descendants(d.child.pid!));
      return processes().find((p) => mine.has(p.pid) && p.cmd === "sleep 1041");
    };
    await until(() => findSleeper() !== undefined, "the job's sleep to start");
    const sleeper = findSleeper()!;

    expect(await d.ok("terminal_output", { job: r.job })).toMatchObject({ data: "abc\ndef\n", since: 0, next: 8, size: 8, more: false, running: true });
    expect(await d.ok("terminal_output", { job: r.job, since: 4 })).toMatchObject({ data: "def\n", next: 8 });
    expect((await d.ok("terminal_jobs")).jobs.find((j: { job: string }) => j.job === r.job)).toMatchObject({ running: true });

    const dry = await d.ok("terminal_kill", { job: r.job }, { approved: false });
    expect(dry).toMatchObject({ dry_run: true, running: true });
    expect((await d.ok("terminal_jobs")).jobs.find((j: { job: string }) => j.job === r.job)).toMatchObject({ running: true });

    const killed = await d.ok("terminal_kill", { job: r.job, preview_id: dry.preview_id });
    expect(killed).toMatchObject({ job: r.job, killed: true });
    await waitDead(sleeper.pid);
    expect((await exitedEvent(r.job)).data.job).toBe(r.job);
    expect(await d.ok("terminal_kill", { job: r.job })).toMatchObject({ killed: false });
    expect((await d.ok("terminal_output", { job: r.job })).data).toBe("abc\ndef\n");
  });

  it("a flood is capped in the stream with a note, and complete in the file", async () => {
    const r = await d.ok("terminal_run", { command: "yes 'a line of output' | head -c 3000000; echo END", background: true });
    await exitedEvent(r.job);
    const events = outputOf(r.job);
    const streamed = events.map((e) => e.data.data).join("");
    expect(streamed.length).toBeLessThan(1_000_000);
    expect(events.some((e) => e.data.dropped > 0)).toBe(true);
    expect(streamed).toContain("bytes of output not streamed");
    expect(streamed.endsWith("END\n")).toBe(true);
    expect(readFileSync(r.output_file).length).toBe(3_000_004);
  });

  it("a job's > /dev/stdout adds to its output: every line streamed, and in the file", async () => {
    const r = await d.ok("terminal_run", { command: "echo one; echo two > /dev/stdout; echo three >/dev/stderr; echo four", background: true });
    await exitedEvent(r.job);
    expect(
      outputOf(r.job)
        .map((e) => e.data.data)
        .join(""),
    ).toBe("one\ntwo\nthree\nfour\n");
    expect(readFileSync(r.output_file, "utf8")).toBe("one\ntwo\nthree\nfour\n");
    expect(await d.ok("terminal_output", { job: r.job })).toMatchObject({ data: "one\ntwo\nthree\nfour\n", next: 19, more: false });
  });

  it("unknown jobs are NOT_FOUND; a job has no timeout_ms", async () => {
    expect((await d.call("terminal_output", { job: "job-999" })).result.code).toBe("NOT_FOUND");
    expect((await d.call("terminal_kill", { job: "job-999" })).result.code).toBe("NOT_FOUND");
    expect((await d.call("terminal_run", { command: "true", background: true, timeout_ms: 1000 })).result.code).toBe("INVALID_PARAMS");
  });

  it("running jobs are stopped when the daemon shuts down", async () => {
    const r = await d.ok("terminal_run", { command: "sleep 1042", background: true });
    const mine = () => new Set(descendants(d.child.pid!));
    await until(() => processes().some((p) => mine().has(p.pid) && p.cmd === "sleep 1042"), "the job to start");
    const pid = processes().find((p) => mine().has(p.pid) && p.cmd === "sleep 1042")!.pid;
    expect(r.job).toBeTruthy();
    await d.close();
    await waitDead(pid);
  });
});
