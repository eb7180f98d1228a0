import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileHash, initHash } from "../../src/core/hash.js";
import { type DaemonClient, daemonForSuite, startDaemon } from "../helpers/daemon.js";
import { descendants, processes, until, waitDead } from "../helpers/process.js";
import { git, tmpWorkspace, writeFile } from "../helpers/tmp.js";

await initHash();

/** Secrets in the daemon's own environment: no command may see them. */
const SECRETS = { EXA_API_KEY: "exa-secret-value", GH_TOKEN: "gh-secret-value", DEPLOY_PASSWORD: "pw-secret-value" };

/** Host pids of the daemon's descendants whose command line is exactly `cmd`. */
function running(d: DaemonClient, cmd: string): number[] {
  const mine = new Set(descendants(d.child.pid!));
  return processes()
    .filter((p) => mine.has(p.pid) && p.cmd === cmd)
    .map((p) => p.pid);
}

async function started(d: DaemonClient, cmd: string): Promise<number> {
  await until(() => running(d, cmd).length > 0, `${cmd} to start`, 20_000);
  return running(d, cmd)[0];
}

const ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n", "old.txt": "old\n", ".gitignore": "dist/\n" } });
git(ws.dir, "add", ".");
git(ws.dir, "commit", "-qm", "init");
git(ws.dir, "init", "-q", "sub");
writeFile(ws.dir, "sub/x.txt", "x\n");
let d: DaemonClient;
daemonForSuite(ws, (c) => (d = c), [], SECRETS);

/** git's list of the ignored files (each file, not their folders), with their content. */
function ignoredFiles(): Map<string, string> {
  const list = git(ws.dir, "ls-files", "-z", "--others", "--ignored", "--exclude-standard").split("\0").filter(Boolean);
  return new Map(list.map((f) => [f, readFileSync(path.join(ws.dir, f), "utf8")]));
}

const refused = [
  ["a redirection into a file", "echo hi > a.txt"],
  ["an append in bash -c", `bash -c "echo x >> a.txt"`],
  ["a here-document into a file", "cat > f.txt <<EOF\nx\nEOF"],
  ["tee FILE", "ls | tee f.txt"],
  ["sed -i", "sed -i s/a/b/ a.txt"],
  ["a write inside $( )", "echo $(echo x > f.txt)"],
  ["a write in a function", "f() { echo x > f.txt; }; f"],
  ["an exec redirection", "exec 3> f.txt; echo x >&3"],
  ["dd of= behind env", "env A=1 dd if=/dev/zero of=f.txt count=1"],
  ["a line that does not parse", 'echo "unterminated'],
  ["eval of a variable", 'eval "$CMD"'],
  ["a descriptor opened on a file, written through /dev/stdout", "echo x 1<a.txt >/dev/stdout"],
  ["an alias the line defines and uses", "shopt -s expand_aliases\nalias w=tee\nw f.txt < /dev/null"],
  ["PS4 under set -x", "PS4='$(echo x > f.txt)'; set -x; true"],
  ["an arithmetic subscript that runs a command", "(( 'a[$(echo x > f.txt)]' ))"],
  ["sed's w command", "sed -n 'w f.txt' a.txt"],
  ["awk's print into a file", `awk '{ print > "f.txt" }' a.txt`],
  ["cp from stdin", "cp /dev/stdin f.txt <<< x"],
  ["a git alias that runs the shell", "git -c alias.w='!echo x > f.txt' w"],
  ["a makefile from stdin", "make -f - <<< $'all:\\n\\techo x > f.txt'"],
  ["a write into the private /tmp through a link to a workspace file", 'ln -s "$PWD/a.txt" /tmp/l; echo x > /tmp/l'],
  ["a script the line writes into the private /tmp, then runs", "echo 'echo x > f.txt' > /tmp/s; bash /tmp/s"],
];

describe("terminal_run refuses shell writes before anything runs", () => {
  it.each(refused)("%s: SHELL_WRITE_REFUSED in a dry run and approved, nothing written", async (_what, command) => {
    for (const approved of [false, true]) {
      const r = await d.call("terminal_run", { command }, { approved });
      expect(r.success, `${command} (approved ${approved})`).toBe(false);
      expect(r.result.code).toBe("SHELL_WRITE_REFUSED");
      expect(r.result.message).toContain("file_write");
    }
    expect(readFileSync(path.join(ws.dir, "a.txt"), "utf8")).toBe("a\n");
    expect(existsSync(path.join(ws.dir, "f.txt"))).toBe(false);
  });

  it("an editor the call's env sets runs as a command, so it is checked: refused, nothing written", async () => {
    const env = { GIT_EDITOR: "echo x > f.txt #" };
    const r = await d.call("terminal_run", { command: "git config --edit --file /tmp/x.cfg", env });
    expect(r.result.code).toBe("SHELL_WRITE_REFUSED");
    expect(r.result.message).toContain("inside the value of `GIT_EDITOR` (the call's env)");
    expect(existsSync(path.join(ws.dir, "f.txt"))).toBe(false);
  });

  it("says why a line could not be checked", async () => {
    const r = await d.call("terminal_run", { command: "echo 'open" });
    expect(r.result.message).toMatch(/could not be checked|parse/);
  });
});

describe("terminal_run", () => {
  it("runs the ordinary forms that look like the refused ones", async () => {
    // `| cat`: the command's own stdout is a file, which `> /dev/stdout` would reopen and truncate.
    const command = [
      "ls a.txt > /dev/stdout | cat",
      "cat < a.txt > /dev/stdout | cat",
      "sed -n p a.txt",
      "sed 's/a/b/' a.txt",
      "awk '{ print $1 }' a.txt",
      "git -c color.ui=always log --oneline -1 > /dev/null",
      "printf '%s\\n' x",
      "declare -a arr=(1 2)",
      "i=0; (( i++ ))",
      "[[ -v HOME ]] && echo home",
    ].join("; ");
    const r = await d.ok("terminal_run", { command });
    expect(r).toMatchObject({ exit_code: 0, output: "a.txt\na\na\nb\na\nx\nhome\n", changed_files: [] });
  });

  it("allows 2>&1, > /dev/null, pipes and the private /tmp; a dry run runs nothing and shows the sandbox", async () => {
    const command = "echo one 2>&1; echo two > /dev/null; printf 'a\\nb\\n' | tr a-z A-Z; echo tmp > /tmp/x && cat /tmp/x; touch ran.txt";
    const dry = await d.ok("terminal_run", { command }, { approved: false });
    expect(existsSync(path.join(ws.dir, "ran.txt"))).toBe(false);
    expect(dry).toMatchObject({ dry_run: true, verdict: "allowed", sandbox: { mode: "bwrap", network: false } });
    expect(dry.commands).toContain("tr a-z A-Z");
    expect(dry.sandbox.argv).toEqual(expect.arrayContaining(["bwrap", "--cap-drop", "ALL", "--unshare-all", "--die-with-parent"]));
    expect(dry.sandbox.argv).toContain(path.join(ws.dir, ".git"));
    expect(dry.sandbox.argv).toContain(path.join(ws.dir, "sub", ".git"));
    // Deterministic: the same call on the same state has the same preview.
    expect((await d.ok("terminal_run", { command }, { approved: false })).preview_id).toBe(dry.preview_id);
    const r = await d.ok("terminal_run", { command, preview_id: dry.preview_id });
    expect(r).toMatchObject({ exit_code: 0, timed_out: false, output: "one\nA\nB\ntmp\n", sandboxed: true });
    expect(r.text).toContain("exit 0");
  });

  it("a non-zero exit is a success with its exit code", async () => {
    expect(await d.ok("terminal_run", { command: "echo failing; exit 7" })).toMatchObject({ exit_code: 7, output: "failing\n", timed_out: false });
  });

  it("reports what the command changed in the workspace, attributed to the session and terminal_run; not ignored paths", async () => {
    await d.ok("file_read", { path: "a.txt" }, { session: "s1" });
    const script =
      "const fs=require('fs');fs.mkdirSync('build',{recursive:true});fs.writeFileSync('build/out.js','built\\n');fs.rmSync('old.txt');fs.appendFileSync('a.txt','more\\n');fs.mkdirSync('dist',{recursive:true});fs.writeFileSync('dist/x.js','ignored\\n')";
    const r = await d.ok("terminal_run", { command: `node -e "${script}"` }, { session: "s1" });
    expect(r.exit_code).toBe(0);
    const byPath = Object.fromEntries(r.changed_files.map((c: { path: string }) => [c.path, c]));
    expect(byPath).toEqual({
      "build/out.js": { path: "build/out.js", kind: "created", hash: fileHash(Buffer.from("built\n")) },
      "old.txt": { path: "old.txt", kind: "deleted", hash: null },
      "a.txt": { path: "a.txt", kind: "modified", hash: fileHash(Buffer.from("a\nmore\n")) },
    });
    expect(r.changed_files_total).toBe(3);
    expect(r.ignored_changes).toEqual({ count: 1, created: 1, modified: 0, deleted: 0 });
    expect(r.text).toContain("created build/out.js");
    // The events said the same, before the call answered.
    const changes = d.events.filter((e) => e.event === "fs.changed").flatMap((e) => e.data.changes);
    const out = changes.find((c) => c.path === "build/out.js");
    expect(out).toMatchObject({ origin: "tool", by: "s1", tool: "terminal_run" });
    // The session did not see what the command wrote: it stays stale for it.
    expect(changes.find((c) => c.path === "a.txt")).toMatchObject({ by: "s1", stale_sessions: ["s1"] });
    expect(changes.some((c) => c.path.startsWith("dist/"))).toBe(false);
  });

  it("counts the changes under ignored paths that changed_files leaves out, as git sees them", async () => {
    writeFile(ws.dir, "dist/keep.js", "1\n");
    writeFile(ws.dir, "dist/gone.js", "1\n");
    writeFile(ws.dir, "dist/deep/same.js", "1\n");
    writeFile(ws.dir, "dist/deep/edit.js", "1\n");
    const before = ignoredFiles();
    const script =
      "const fs=require('fs');fs.writeFileSync('dist/keep.js','2\\n');fs.writeFileSync('dist/deep/edit.js','2\\n');fs.rmSync('dist/gone.js');fs.mkdirSync('dist/new/x',{recursive:true});fs.writeFileSync('dist/new/a.js','a');fs.writeFileSync('dist/new/x/b.js','b')";
    const r = await d.ok("terminal_run", { command: `node -e "${script}"` });
    expect(r.exit_code).toBe(0);
    const after = ignoredFiles();
    const created = [...after.keys()].filter((f) => !before.has(f)).length;
    const deleted = [...before.keys()].filter((f) => !after.has(f)).length;
    const modified = [...after.keys()].filter((f) => before.has(f) && before.get(f) !== after.get(f)).length;
    expect({ created, deleted, modified }).toEqual({ created: 2, deleted: 1, modified: 2 }); // the oracle saw the command
    expect(r.ignored_changes).toEqual({ count: created + deleted + modified, created, modified, deleted });
    expect(r.text).toContain("5 changes under ignored paths");
    expect((await d.ok("terminal_run", { command: "cat dist/keep.js" })).ignored_changes).toEqual({ count: 0, created: 0, modified: 0, deleted: 0 });
  });

  it("does not hold file writes while it runs: a file_write meanwhile goes through and is file_write's", async () => {
    const command = "until [ -e go.txt ]; do sleep 0.02; done; cat go.txt";
    const dry = await d.ok("terminal_run", { command }, { approved: false });
    const run = d.call("terminal_run", { command, preview_id: dry.preview_id }, { session: "s2" });
    const w = await d.ok("file_write", { path: "go.txt", content: "go\n" }, { session: "s3" });
    expect(w).toBeTruthy();
    const r = await run;
    expect(r.result).toMatchObject({ exit_code: 0, output: "go\n" });
    expect(r.result.changed_files.map((c: { path: string }) => c.path)).not.toContain("go.txt");
  });

  it("a command reading stdin sees its end at once; given stdin, it reads it", async () => {
    expect(await d.ok("terminal_run", { command: "cat; read x || echo eof" })).toMatchObject({ exit_code: 0, output: "eof\n" });
    expect(await d.ok("terminal_run", { command: 'read x; echo "got $x"', stdin: "hello\n" })).toMatchObject({ output: "got hello\n" });
  });

  it("the daemon's secrets are not in the command's environment; nothing prompts", async () => {
    const r = await d.ok("terminal_run", { command: "env" });
    for (const value of Object.values(SECRETS)) expect(r.output).not.toContain(value);
    expect(r.output).toMatch(/^GIT_TERMINAL_PROMPT=0$/m);
    expect(r.output).toMatch(/^HOME=/m);
  });

  it("inside the sandbox the git dir and the world outside the workspace are read-only", async () => {
    const r = await d.ok("terminal_run", {
      command: "mkdir .git/evil 2>&1; echo $?; mkdir sub/.git/evil 2>&1; echo $?; touch /var/tmp/tool-layer-escape 2>&1; echo $?",
    });
    const codes = r.output
      .trim()
      .split("\n")
      .filter((l: string) => /^\d+$/.test(l));
    expect(codes).toEqual(["1", "1", "1"]);
    expect(existsSync(path.join(ws.dir, ".git", "evil"))).toBe(false);
    expect(existsSync(path.join(ws.dir, "sub", ".git", "evil"))).toBe(false);
    expect(existsSync("/var/tmp/tool-layer-escape")).toBe(false);
  });

  it("a repository one command makes is read-only to the next", async () => {
    await d.ok("terminal_run", { command: "true" }); // the git dirs as they were, before lib/ came
    writeFile(ws.dir, "lib/l.txt", "l\n");
    await d.waitFor((e) => e.event === "fs.changed" && e.data.changes.some((c: { path: string }) => c.path === "lib/l.txt"));
    // No watched file comes or goes with it: only the command's end tells that the git dirs may have changed.
    expect(await d.ok("terminal_run", { command: "git init -q lib && echo made" })).toMatchObject({ exit_code: 0, output: "made\n" });
    const r = await d.ok("terminal_run", { command: "mkdir lib/.git/evil 2>/dev/null; echo $?" });
    expect(r).toMatchObject({ exit_code: 0, output: "1\n" });
    expect(existsSync(path.join(ws.dir, "lib", ".git", "evil"))).toBe(false);
  });

  it("a nested .git removed between the preview and the run: the sandbox changed, so the preview is stale; the new one runs", async () => {
    writeFile(ws.dir, "vendored/v.txt", "v\n");
    git(ws.dir, "init", "-q", "vendored");
    const dry = await d.ok("terminal_run", { command: "echo ran" }, { approved: false });
    expect(dry.sandbox.argv).toContain(path.join(ws.dir, "vendored", ".git"));
    rmSync(path.join(ws.dir, "vendored", ".git"), { recursive: true });
    const stale = await d.call("terminal_run", { command: "echo ran", preview_id: dry.preview_id });
    expect(stale.result.code).toBe("PREVIEW_STALE");
    expect(stale.result.preview.sandbox.argv).not.toContain(path.join(ws.dir, "vendored", ".git"));
    expect(await d.ok("terminal_run", { command: "echo ran", preview_id: stale.result.preview_id })).toMatchObject({ exit_code: 0, output: "ran\n" });
  });

  it("caps output as head and tail with a note, the whole of it in output_file; ANSI escapes are removed from output and text only", async () => {
    const r = await d.ok("terminal_run", { command: "seq 1 100000" });
    expect(r.truncated).toBe(true);
    expect(r.output.length).toBeLessThanOrEqual(30_000);
    expect(r.output.startsWith("1\n2\n3\n")).toBe(true);
    expect(r.output.endsWith("99999\n100000\n")).toBe(true);
    expect(r.output).toMatch(/lines \(.*\) cut from the middle; output_file has the whole output/);
    const whole = readFileSync(r.output_file, "utf8");
    expect(whole.split("\n").length).toBe(100_001);
    expect(r.output_bytes).toBe(Buffer.byteLength(whole));
    expect(path.relative(ws.dir, r.output_file).startsWith("..")).toBe(true);

    const colour = await d.ok("terminal_run", { command: "printf '\\033[31mred\\033[0m \\033]0;title\\007plain\\n'" });
    expect(colour.output).toBe("red plain\n");
    expect(colour.text).not.toContain("\x1b");
    expect(readFileSync(colour.output_file, "utf8")).toContain("\x1b[31mred");
  });

  it("> /dev/stdout, /dev/stderr and /dev/fd/1 at the top of a line add to the output, never truncate what came before", async () => {
    const r = await d.ok("terminal_run", { command: "echo one; echo two > /dev/stdout; ls >/dev/stdout a.txt; echo three >/dev/stderr; echo four >/dev/fd/1" });
    expect(r).toMatchObject({ exit_code: 0, output: "one\ntwo\na.txt\nthree\nfour\n", truncated: false });
    expect(readFileSync(r.output_file, "utf8")).toBe(r.output);
    expect(r.output_bytes).toBe(r.output.length);
  });

  it("what a finished command left in the background is killed when it exits", async () => {
    const command = `sleep 1023 > /dev/null 2>&1 & while [ "$(cat /proc/$!/comm)" != sleep ]; do :; done; echo left`;
    expect(await d.ok("terminal_run", { command })).toMatchObject({ exit_code: 0, output: "left\n" });
    await until(() => running(d, "sleep 1023").length === 0, "the leftover sleeper to be gone");
  });

  it("a timeout kills the command with its tree (sleep 1000 &) and is a success with timed_out", async () => {
    const call = d.call("terminal_run", { command: "echo before; sleep 1021 & wait", timeout_ms: 8_000 });
    const pid = await started(d, "sleep 1021");
    const r = await call;
    expect(r.success).toBe(true);
    expect(r.result).toMatchObject({ timed_out: true, output: "before\n" });
    expect(r.result.text).toContain("timed out");
    await waitDead(pid);
  });

  it("a cancel kills the command with its tree", async () => {
    const call = d.call("terminal_run", { command: "sleep 1022 & wait" }, { id: "cancel-me" });
    const pid = await started(d, "sleep 1022");
    expect(await d.ok("cancel", { call_id: "cancel-me" })).toMatchObject({ cancelled: true });
    expect((await call).result.code).toBe("CANCELLED");
    await waitDead(pid);
  });

  it("bad params: a cwd outside the root, env that hides code, timeout_ms of a job, over the maximum", async () => {
    expect((await d.call("terminal_run", { command: "ls", cwd: "/etc" })).result.code).toBe("PATH_OUTSIDE_ROOT");
    expect((await d.call("terminal_run", { command: "ls", env: { "BASH_FUNC_ls%%": "() { :; }" } })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("terminal_run", { command: "ls", env: { PROMPT_COMMAND: "x" } })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("terminal_run", { command: "ls", background: true, timeout_ms: 10 })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("terminal_run", { command: "ls", timeout_ms: 600_001 })).result.code).toBe("INVALID_PARAMS");
    expect(await d.ok("terminal_run", { command: "pwd", cwd: "build" })).toMatchObject({ output: `${path.join(ws.dir, "build")}\n` });
  });

  it("info says the sandbox works, the network is off and which limits hold", async () => {
    const { state } = await d.ok("info", { tool_id: "terminal_run" });
    expect(state).toMatchObject({ available: true, sandbox: { mode: "bwrap", available: true }, network: "off", home: "empty" });
    expect(state.limits).toHaveProperty("pids");
    expect(state.limits).toHaveProperty("memory_bytes");
  });
});

describe("the wait for the watcher after a command", () => {
  const settles = async (k: DaemonClient) =>
    (await k.ok("info", { tool_id: "file_read" })).state.settles as { quiet: number; drained: number; marker: number; timed: number };
  const make = (name: string) => `node -e "require('fs').writeFileSync('${name}', 'm\\n')"`;

  it("in a repository: a quiet settle writes no marker; once parcel batches, it ends on the daemon's marker in the git dir, which no event shows and shutdown removes", async () => {
    const w = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
    const k = await startDaemon(w.dir);
    const marker = path.join(w.dir, ".git", `tool-layer-settle.${k.child.pid}`);
    try {
      let before = await settles(k);
      await k.ok("terminal_run", { command: "true" });
      const first = await settles(k);
      // Quiet as a rule; a batch of the daemon's own start within the half second before makes it the marker's.
      expect(first.quiet + first.marker).toBe(before.quiet + before.marker + 1);
      expect(first.timed).toBe(before.timed);
      if (first.quiet > before.quiet) expect(existsSync(marker)).toBe(false); // it would have made parcel batch for half a second
      // A change just before the command makes parcel batch (for half a second), so the settle cannot be a quiet one.
      writeFileSync(path.join(w.dir, "before.txt"), "b\n");
      await k.waitFor((l) => l.event === "fs.changed" && l.data.changes.some((c: { path: string }) => c.path === "before.txt"));
      before = await settles(k);
      const r = await k.ok("terminal_run", { command: make("made.txt") });
      expect(r.changed_files).toContainEqual({ path: "made.txt", kind: "created", hash: fileHash(Buffer.from("m\n")) });
      expect(await settles(k)).toEqual({ ...before, marker: before.marker + 1 });
      expect(existsSync(marker)).toBe(true);
      expect(k.events.some((e) => JSON.stringify(e.data).includes("tool-layer-settle"))).toBe(false);
      await k.close();
      expect(existsSync(marker)).toBe(false);
    } finally {
      await k.close();
      w.cleanup();
    }
  });

  it("a file the command writes as its very last act is in changed_files, after the host's word that parcel's threads slept", async () => {
    // No repository: no marker, so no settle makes parcel batch, and once the daemon's start is half a second behind,
    // every settle finds parcel quiet.
    const w = tmpWorkspace({ files: { "a.txt": "a\n" } });
    const k = await startDaemon(w.dir);
    try {
      let before: Awaited<ReturnType<typeof settles>>;
      let after = await settles(k);
      for (let calls = 0; calls === 0 || after.quiet === before!.quiet; calls++) {
        if (calls === 100) throw new Error("no quiet settle in 100 calls");
        before = after;
        await k.ok("terminal_run", { command: "true" });
        after = await settles(k);
      }
      expect(after.drained).toBe(before!.drained + 1); // a quiet one asked the host, and its threads slept
      // touch exits right after its write: the event may still be in parcel's threads when the daemon sees the exit.
      before = after;
      const r = await k.ok("terminal_run", { command: "touch last.txt" });
      expect(r.changed_files).toEqual([{ path: "last.txt", kind: "created", hash: fileHash(Buffer.alloc(0)) }]);
      after = await settles(k);
      // Its batch came (before the settle began, or before the host's word), so the settle went on to the timed wait.
      expect(after).toMatchObject({ quiet: before.quiet, marker: before.marker, timed: before.timed + 1 });
    } finally {
      await k.close();
      w.cleanup();
    }
  });

  it("outside a repository, never a marker, and it still sees what the command made", async () => {
    const w = tmpWorkspace({ files: { "a.txt": "a\n" } });
    const k = await startDaemon(w.dir);
    try {
      const before = await settles(k);
      const r = await k.ok("terminal_run", { command: make("made.txt") });
      expect(r.changed_files.map((c: { path: string }) => c.path)).toEqual(["made.txt"]);
      const after = await settles(k);
      expect(after.marker).toBe(before.marker);
      expect(after.quiet + after.timed).toBe(before.quiet + before.timed + 1);
    } finally {
      await k.close();
      w.cleanup();
    }
  });
});

describe("when the daemon is SIGKILLed", () => {
  it("leaves no command or job running", async () => {
    const w = tmpWorkspace({ files: { "a.txt": "a\n" } });
    const k = await startDaemon(w.dir);
    try {
      await k.ok("terminal_run", { command: "sleep 1031", background: true });
      void k.call("terminal_run", { command: "sleep 1032 & wait" });
      const pids = [await started(k, "sleep 1031"), await started(k, "sleep 1032")];
      k.child.kill("SIGKILL");
      await k.exited;
      for (const pid of pids) await waitDead(pid);
    } finally {
      w.cleanup();
    }
  });
});
