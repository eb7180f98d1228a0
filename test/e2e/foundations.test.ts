import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileHash, initHash, tagOf } from "../../src/core/hash.js";
import { MAX_CONCURRENT } from "../../src/platform/supervisor.js";
import { type DaemonClient, MAIN, daemonForSuite, startDaemon } from "../helpers/daemon.js";
import { alive, descendants, processes, rssMb, until, waitDead, waitForFile } from "../helpers/process.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";

await initHash();

/** A repository with one commit and a pre-commit hook that records its pid and sleeps. */
function repoWithSlowHook(files: Record<string, string> = { "a.txt": "a\n" }) {
  const ws = tmpWorkspace({ git: true, files });
  git(ws.dir, "add", "-A");
  git(ws.dir, "commit", "-q", "-m", "initial");
  const pidFile = path.join(ws.dir, ".git", "hook.pid");
  writeFileSync(path.join(ws.dir, ".git", "hooks", "pre-commit"), `#!/bin/sh\necho $$ > "${pidFile}"\nsleep 60\n`, { mode: 0o755 });
  writeFileSync(path.join(ws.dir, "a.txt"), "changed\n");
  git(ws.dir, "add", "a.txt");
  return { ...ws, pidFile };
}

/** A file on which rg's PCRE2 engine (a backreference forces it) backtracks for seconds. */
const SLOW_FILE = ("a".repeat(28) + "b\n").repeat(400);
const SLOW_PATTERN = "^(a|aa)+$\\1";

describe("child processes belong to the daemon", () => {
  it("a SIGKILL of the daemon leaves no hook, no grandchild and no rg running", async () => {
    const ws = repoWithSlowHook({ "a.txt": "a\n", "slow.txt": SLOW_FILE });
    const d = await startDaemon(ws.dir);
    try {
      void d.call("git_commit", { message: "slow" }, { id: "commit" });
      void d.call("search", { pattern: SLOW_PATTERN, path: "slow.txt" }, { id: "search" });
      const hookPid = Number(await waitForFile(ws.pidFile));
      await until(() => processes().some((p) => p.cmd.includes(SLOW_PATTERN)), "rg to run");
      const children = descendants(d.child.pid!); // the watchdog included: it ends once it has cleaned up
      expect(children).toContain(hookPid);
      d.child.kill("SIGKILL");
      await d.exited;
      for (const pid of children) await waitDead(pid, 5_000);
      expect(processes().filter((p) => p.cmd.includes(SLOW_PATTERN) || p.pgid === hookPid)).toEqual([]);
    } finally {
      if (alive(d.child.pid!)) d.child.kill("SIGKILL");
      ws.cleanup();
    }
  });

  it("a reader that closes stdout is a shutdown: exit 0, the hook it was running gone", async () => {
    const ws = repoWithSlowHook();
    const d = await startDaemon(ws.dir);
    try {
      void d.call("git_commit", { message: "slow" }, { id: "commit" });
      const hookPid = Number(await waitForFile(ws.pidFile));
      d.child.stdout.destroy();
      d.sendRaw(JSON.stringify({ tool_id: "list", session_id: "s", toolcall_id: "after" }) + "\n"); // its answer meets EPIPE
      expect(await d.exited).toEqual({ code: 0, signal: null });
      await waitDead(hookPid);
      expect(d.stderr).not.toMatch(/EPIPE|fatal/);
    } finally {
      ws.cleanup();
    }
  });

  it("`tool-layer … | head -1` exits 0 once head has gone", () => {
    const ws = tmpWorkspace();
    try {
      const request = JSON.stringify({ tool_id: "list", session_id: "s", toolcall_id: 1 });
      const r = spawnSync(
        "bash",
        [
          "-c",
          `(echo '${request}'; sleep 1; echo '${request}') | "${process.execPath}" "${MAIN}" --root "${ws.dir}" | head -1; echo "status \${PIPESTATUS[1]}"`,
        ],
        { encoding: "utf8", timeout: 30_000 },
      );
      expect(JSON.parse(r.stdout.split("\n")[0]).event).toBe("ready");
      expect(r.stdout).toContain("status 0");
      expect(r.stderr).not.toMatch(/EPIPE|fatal/);
    } finally {
      ws.cleanup();
    }
  });

  it("GIT_DIR in the daemon's environment does not make the VFS or git look at another repository", async () => {
    const other = tmpWorkspace({ git: true, files: { "other-only.txt": "x\n" } });
    git(other.dir, "add", "-A");
    git(other.dir, "commit", "-q", "-m", "other");
    const ws = tmpWorkspace({ git: true, files: { "root-only.txt": "y\n" } });
    const d = await startDaemon(ws.dir, [], {
      GIT_DIR: path.join(other.dir, ".git"),
      GIT_WORK_TREE: other.dir,
      GIT_INDEX_FILE: path.join(other.dir, ".git", "index"),
    });
    try {
      const found = await d.ok("find_file", { query: "only" });
      expect(found.text).toBe("root-only.txt");
      expect((await d.ok("git_status")).untracked).toEqual(["root-only.txt"]);
    } finally {
      await d.close();
      ws.cleanup();
      other.cleanup();
    }
  });

  it(`a burst of git calls runs at most ${MAX_CONCURRENT} git processes at once, none times out, and reads still answer`, async () => {
    const ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
    const d = await startDaemon(ws.dir);
    try {
      // git_log, not git_status: identical git_status calls at once share one run (single flight).
      const burst = Array.from({ length: 120 }, () => d.call("git_log"));
      const read = d.call("file_read", { path: "a.txt" }, { id: "read" });
      const results = await Promise.all(burst);
      expect((await read).success).toBe(true);
      expect(results.filter((r) => !r.success).map((r) => r.result.code)).toEqual([]);
      // The read needs no process: it is answered while git calls still wait for the pool.
      const answerAt = (test: (l: any) => boolean) => d.lines.findIndex(test);
      expect(answerAt((l) => l.call_id === "read")).toBeLessThan(answerAt((l) => l.call_id === results[results.length - 1].call_id));
      const { pool } = (await d.ok("info", { tool_id: "git_status" })).state.processes;
      expect(pool.peak).toBe(MAX_CONCURRENT);
    } finally {
      await d.close();
      ws.cleanup();
    }
  });
});

describe("approvals bound to previews", () => {
  const ws = tmpWorkspace({ files: { "a.txt": "one\ntwo\n" } });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));
  const at = (rel: string) => path.join(ws.dir, rel);

  it("the same dry run on the same state has the same preview_id; a change of state or of the call gives another", async () => {
    const hash = fileHash(readFileSync(at("a.txt")));
    const params = { path: "a.txt", hash, content: "uno\ndos\n" };
    const first = await d.ok("file_write", params, { approved: false });
    const again = await d.ok("file_write", { content: "uno\ndos\n", hash, path: "a.txt" }, { approved: false });
    expect(first.dry_run).toBe(true);
    expect(first.preview_id).toMatch(/^[0-9a-f]{16}$/);
    expect(again.preview_id).toBe(first.preview_id);
    expect((await d.ok("file_write", { ...params, content: "uno\n" }, { approved: false })).preview_id).not.toBe(first.preview_id);
  });

  it("an approved call that is not the one previewed is PREVIEW_STALE with its own preview, and changes nothing", async () => {
    writeFileSync(at("b.txt"), "x\n");
    const x = tagOf("x");
    const preview = await d.ok(
      "file_write",
      { path: "b.txt", hash: fileHash(Buffer.from("x\n")), edits: [{ type: "insert", startline: x, content: "y" }] },
      { approved: false },
    );
    const before = readFileSync(at("b.txt"));
    const stale = await d.call("file_write", {
      path: "b.txt",
      hash: fileHash(before),
      edits: [{ type: "insert", startline: x, content: "z" }],
      preview_id: preview.preview_id,
    });
    expect(stale.result.code).toBe("PREVIEW_STALE");
    expect(stale.result.preview).toMatchObject({ dry_run: true, preview_id: stale.result.preview_id });
    expect(stale.result.preview_id).not.toBe(preview.preview_id);
    expect(readFileSync(at("b.txt"))).toEqual(before);
    const ran = await d.ok("file_write", {
      path: "b.txt",
      hash: fileHash(before),
      edits: [{ type: "insert", startline: x, content: "z" }],
      preview_id: stale.result.preview_id,
    });
    expect(ran.dry_run).toBeUndefined();
    expect(readFileSync(at("b.txt"), "utf8")).toBe("x\nz\n");
  });

  it("an external change after the preview makes the approval stale", async () => {
    writeFileSync(at("c.txt"), "1\n");
    const params = { path: "c.txt", hash: fileHash(Buffer.from("1\n")), content: "2\n" };
    const preview = await d.ok("file_write", params, { approved: false });
    writeFileSync(at("c.txt"), "1\n\n");
    const r = await d.call("file_write", { ...params, preview_id: preview.preview_id });
    expect(r.result.code).toBe("PREVIEW_STALE");
    expect(r.result.reason).toMatchObject({ code: "HASH_MISMATCH", current_hash: fileHash(Buffer.from("1\n\n")) });
    expect(readFileSync(at("c.txt"), "utf8")).toBe("1\n\n");
  });

  it("preview_id is a param of mutating tools only, and must look like one", async () => {
    expect((await d.call("file_read", { path: "a.txt", preview_id: "0123456789abcdef" })).result.message).toContain("preview_id: unknown field");
    expect((await d.call("file_write", { path: "z.txt", content: "z", preview_id: "nope" })).result.code).toBe("INVALID_PARAMS");
    const schema = (await d.ok("info", { tool_id: "file_write" })).input_schema;
    expect(schema.properties.preview_id).toMatchObject({ type: "string" });
  });
});

describe("the JSON-lines transport", () => {
  const ws = tmpWorkspace({ files: { "a.txt": "a\n" } });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));

  it("refuses a numeric toolcall_id that is not a safe integer instead of echoing it changed", async () => {
    for (const id of ["12345678901234567890", "9007199254740993", "1e300"]) {
      const before = d.lines.length;
      d.sendRaw(`{"tool_id":"list","session_id":"s","toolcall_id":${id}}\n`);
      const r = await d.waitFor((l) => d.lines.indexOf(l) >= before && l.call_id === null);
      expect(r.result.code, id).toBe("INVALID_REQUEST");
      expect(r.result.message, id).toMatch(/safe integer.*string/);
    }
    expect((await d.call("list", {}, { id: Number.MAX_SAFE_INTEGER })).call_id).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("tolerates a UTF-8 BOM at the start of a line, as it tolerates a trailing \\r", async () => {
    d.sendRaw(`\ufeff{"tool_id":"list","session_id":"s","toolcall_id":"bom"}\r\n`);
    expect((await d.waitFor((l) => l.call_id === "bom")).success).toBe(true);
  });

  it("numbers every event line with seq, one more each time, ready first", async () => {
    writeFileSync(path.join(ws.dir, "b.txt"), "b\n");
    await d.waitFor((l) => l.event === "fs.changed" && l.data.changes.some((c: { path: string }) => c.path === "b.txt"));
    writeFileSync(path.join(ws.dir, "c.txt"), "c\n");
    await d.waitFor((l) => l.event === "fs.changed" && l.data.changes.some((c: { path: string }) => c.path === "c.txt"));
    const seqs = d.events.map((e) => e.seq);
    expect(d.events[0].event).toBe("ready");
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it("a reader that stops reading makes the daemon stop reading too: memory stays bounded, nothing is lost", async () => {
    const text = Array.from({ length: 150 }, (_, i) => `line ${i} ${"x".repeat(60)}`).join("\n") + "\n";
    writeFileSync(path.join(ws.dir, "many.txt"), text);
    const reader = spawn(process.execPath, [MAIN, "--root", ws.dir], { stdio: ["pipe", "pipe", "inherit"] });
    try {
      let answers = 0;
      let ready = false;
      let buffered = "";
      reader.stdout.on("data", (chunk: Buffer) => {
        buffered += chunk.toString();
        const parts = buffered.split("\n");
        buffered = parts.pop()!;
        ready ||= parts.some((l) => l.includes('"event":"ready"'));
        answers += parts.filter((l) => l.includes('"call_id"')).length;
      });
      await until(() => ready, "ready", 20_000);
      reader.stdout.pause();
      const CALLS = 20_000;
      const request = (i: number) => JSON.stringify({ tool_id: "file_read", session_id: "s", toolcall_id: i, params: { path: "many.txt" } }) + "\n";
      let written = 0;
      const writeAll = (async () => {
        for (; written < CALLS; written++) {
          if (!reader.stdin.write(request(written))) await new Promise((r) => reader.stdin.once("drain", r));
        }
      })();
      // The daemon stops taking requests once its answers back up: our writes stall well before all are sent.
      let peak = 0;
      let last = -1;
      let steadySince = Date.now();
      await until(
        () => {
          peak = Math.max(peak, rssMb(reader.pid!));
          if (written !== last) (last = written), (steadySince = Date.now());
          return Date.now() - steadySince > 500; // no request taken for half a second: the daemon stopped reading
        },
        "the daemon to stop reading",
        60_000,
      );
      const stalledAt = written;
      expect(stalledAt).toBeLessThan(CALLS);
      expect(peak).toBeLessThan(400);
      reader.stdout.resume();
      await writeAll;
      await until(() => answers === CALLS, "every answer", 120_000);
      expect(rssMb(reader.pid!)).toBeLessThan(400);
    } finally {
      reader.stdin.end();
      reader.kill("SIGKILL");
    }
  }, 180_000);
});

describe("the command line", () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { input: "", encoding: "utf8" });

  it("--help prints the usage on stdout and exits 0; --version and -v print the version", () => {
    const help = run("--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: tool-layer/);
    for (const flag of ["--root", "--tools", "--watcher", "--max-file-bytes", "--version"]) expect(help.stdout).toContain(flag);
    // Each flag's help stands apart from the flag, however long its values (--mcp-confirm's once ran into its help).
    const flagLines = help.stdout.split("\n").filter((l) => /^ {2}(-\w, | {4})--/.test(l));
    expect(flagLines.filter((l) => !/^ {2}(-\w, | {4})--\S+( \S+)? {2,}\S/.test(l))).toEqual([]);
    const version = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;
    for (const flag of ["--version", "-v"]) expect(run(flag)).toMatchObject({ status: 0, stdout: `${version}\n` });
  });

  it("a bad flag or value is one line on stderr naming it, exit 2", () => {
    const ws = tmpWorkspace({ files: { "file.txt": "x\n" } });
    try {
      const cases: [string[], RegExp][] = [
        [["--frobnicate"], /unknown option --frobnicate/],
        [["--root", ws.dir, "--max-file-bytes", "-5"], /--max-file-bytes must be a positive integer, not -5/],
        [["--root", ws.dir, "--max-file-bytes", "12abc"], /--max-file-bytes must be a positive integer, not 12abc/],
        [["--root", ws.dir, "--watcher", "inotify"], /--watcher must be parcel or chokidar, not inotify/],
        [["--root", ws.dir, "--codegraph", "maybe"], /--codegraph must be auto, on or off, not maybe/],
        [["--root", ws.dir, "--lsp-sandbox", "yes"], /--lsp-sandbox must be auto, on or off, not yes/],
        [["--root", ws.dir, "--terminal-sandbox", "auto"], /--terminal-sandbox must be on or off, not auto/],
        [["--root", "/no/such/place"], /--root \/no\/such\/place does not exist/],
        [["--root", path.join(ws.dir, "file.txt")], /--root .*file\.txt is not a directory/],
        [["--root"], /--root needs a value/],
        [["stray"], /unexpected argument stray/],
      ];
      for (const [args, message] of cases) {
        const r = run(...args);
        expect(r.status, args.join(" ")).toBe(2);
        expect(r.stdout, args.join(" ")).toBe("");
        expect(r.stderr, args.join(" ")).toMatch(message);
        expect(r.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      }
    } finally {
      ws.cleanup();
    }
  });
});
