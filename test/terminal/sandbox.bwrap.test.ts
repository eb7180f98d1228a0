import { type ChildProcess, execFile, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { lspSandboxArgv } from "../../src/lsp/sandbox.js";
import { type CommandCgroup, createCommandCgroup, hostCgroupParents } from "../../src/terminal/cgroup-limits.js";
import { type SandboxOptions, buildSandbox, sandboxEnv, sandboxHome } from "../../src/terminal/sandbox.js";
import { type RunFn, hasDisableUserns, hostSandboxPaths, openPins, probeSandbox } from "../../src/terminal/sandbox-probe.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";

/** The probe's runner on child_process.execFile: this test has no daemon (src/ runs it through the supervisor). */
const execRun: RunFn = (file, args, opts) =>
  new Promise((resolve) => {
    execFile(file, args, { env: opts.env, cwd: opts.cwd, timeout: opts.timeoutMs, killSignal: "SIGKILL", encoding: "utf8" }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string; signal?: NodeJS.Signals }) | null;
      if (e && typeof e.code === "string") return resolve({ code: null, signal: null, stdout, stderr, error: e });
      resolve({ code: e ? (typeof e.code === "number" ? e.code : null) : 0, signal: e?.signal ?? null, stdout, stderr });
    });
  });

const host = await hostSandboxPaths();
const probe = await probeSandbox(execRun, { root: os.tmpdir(), network: false });
/** Only a missing binary skips: bwrap is installed here and in CI, and a sandbox that is there but broken must fail. */
const bwrapMissing = !probe.available && /not installed/.test(probe.reason ?? "");
const parents = await hostCgroupParents();

/** Daemon-side secrets the sandbox must not show. */
const SECRETS = { EXA_API_KEY: "exa-secret-value", GH_TOKEN: "gh-secret-value", GIT_DIR: "/nowhere/.git" };

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
}

interface Started {
  child: ChildProcess;
  /** stdout and stderr as they arrive. */
  output: () => string;
  done: Promise<Ran>;
}

function start(opts: SandboxOptions, extra: { env?: Record<string, string>; cgroup?: CommandCgroup } = {}): Started {
  const { argv, pins } = buildSandbox({ hidden: host.hidden, keep: host.keep, disableUserns: probe.disableUserns, ...opts });
  const env = sandboxEnv({ base: { ...process.env, ...SECRETS }, home: sandboxHome(opts), callEnv: extra.env });
  const full = extra.cgroup ? extra.cgroup.wrap(argv) : argv;
  const fds = openPins(pins);
  const child = spawn(full[0], full.slice(1), { env, stdio: ["ignore", "pipe", "pipe", ...fds], detached: true });
  for (const fd of fds) closeSync(fd);
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d));
  child.stderr!.on("data", (d: Buffer) => (out += d));
  const done = new Promise<Ran>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, out }));
  });
  return { child, output: () => out, done };
}

/** Resolves once `predicate` holds for the output so far (checked on every chunk, never on a timer). */
function outputMatches(s: Started, predicate: (out: string) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => predicate(s.output()) && (resolve(), true);
    if (check()) return;
    const onData = () => check() && off();
    const off = () => {
      s.child.stdout!.off("data", onData);
      s.child.stderr!.off("data", onData);
    };
    s.child.stdout!.on("data", onData);
    s.child.stderr!.on("data", onData);
    s.done.then(() => (check() ? undefined : reject(new Error(`exited before the output matched: ${s.output()}`))), reject);
  });
}

/** Host pids of live processes whose argv is exactly `argv` (zombies are dead: only their parent's wait is left). */
function liveProcesses(argv: string[]): number[] {
  const want = argv.join("\0") + "\0";
  const found: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, "utf8") !== want) continue;
      const state = readFileSync(`/proc/${e}/stat`, "utf8").replace(/^.*\) /s, "")[0];
      if (state !== "Z" && state !== "X") found.push(Number(e));
    } catch {
      /* gone while reading */
    }
  }
  return found;
}

/** Polls /proc until `done(pids)` holds or the deadline passes: the kernel starts and tears down processes
 * asynchronously (a forked child shows its new argv only once it has exec'd; a PID namespace dies after its init). */
async function watchProcesses(argv: string[], done: (pids: number[]) => boolean, deadlineMs = 10_000): Promise<number[]> {
  const until = Date.now() + deadlineMs;
  let pids = liveProcesses(argv);
  while (!done(pids) && Date.now() < until) {
    await new Promise((r) => setImmediate(r));
    pids = liveProcesses(argv);
  }
  return pids;
}

const noneLeft = (argv: string[]) => watchProcesses(argv, (p) => p.length === 0);

describe.skipIf(bwrapMissing)(`inside the bubblewrap sandbox (${probe.available ? probe.version : probe.reason})`, () => {
  let ws: ReturnType<typeof tmpWorkspace>;
  let home: string;
  let outside: string;
  let opts: SandboxOptions;

  beforeEach(() => {
    ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n" } });
    git(ws.dir, "commit", "-q", "--allow-empty", "-m", "init");
    git(ws.dir, "init", "-q", "sub");
    home = mkdtempSync(path.join(os.tmpdir(), "tool-layer-home-"));
    mkdirSync(path.join(home, ".ssh"));
    writeFileSync(path.join(home, ".ssh", "id_rsa"), "PRIVATE KEY\n");
    mkdirSync(path.join(home, ".config", "gh"), { recursive: true });
    writeFileSync(path.join(home, ".config", "gh", "hosts.yml"), "oauth_token: gho_x\n");
    // Outside /tmp on purpose: the sandbox's /tmp is private, so a folder there would be missing, not read-only.
    outside = mkdtempSync("/var/tmp/tool-layer-outside-");
    opts = {
      root: ws.dir,
      gitDirs: [path.join(ws.dir, ".git"), path.join(ws.dir, "sub", ".git")],
      homePath: home,
      network: false,
      cwd: ws.dir,
      command: "true",
    };
  });

  afterEach(() => {
    ws.cleanup();
    rmSync(home, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  test("the workspace is writable; the system and folders outside it are not", async () => {
    const command = [
      "echo made > new.txt; echo ws=$?",
      "mkdir -p build && echo o > build/out.o; echo build=$?",
      '{ echo x > "$OUTSIDE/f"; } 2>/dev/null; echo outside=$?',
      "touch /etc/tool-layer-probe 2>/dev/null; echo etc=$?",
    ].join("\n");
    const r = await start({ ...opts, command }, { env: { OUTSIDE: outside } }).done;
    expect(r.out).toBe("ws=0\nbuild=0\noutside=1\netc=1\n");
    expect(readFileSync(path.join(ws.dir, "new.txt"), "utf8")).toBe("made\n");
    expect(existsSync(path.join(outside, "f"))).toBe(false);
    expect(existsSync("/etc/tool-layer-probe")).toBe(false);
  });

  test("every git dir is read-only: the root's .git and a nested repository's, not the files around them", async () => {
    const head = git(ws.dir, "rev-parse", "HEAD");
    const command = [
      "touch .git/x 2>/dev/null; echo git=$?",
      "touch sub/.git/x 2>/dev/null; echo sub=$?",
      "rm -rf .git 2>/dev/null; echo rm=$?",
      "mv .git moved 2>/dev/null; echo mv=$?",
      "git -c user.name=a -c user.email=b commit -q --allow-empty -m inside 2>/dev/null; echo commit=$?",
      "touch sub/file; echo subfile=$?",
    ].join("\n");
    const r = await start({ ...opts, command }).done;
    expect(r.out).toMatch(/^git=1\nsub=1\nrm=1\nmv=1\ncommit=\d+\nsubfile=0\n$/);
    expect(r.out).not.toContain("commit=0");
    expect(existsSync(path.join(ws.dir, ".git", "x"))).toBe(false);
    expect(existsSync(path.join(ws.dir, "sub", ".git", "x"))).toBe(false);
    expect(git(ws.dir, "rev-parse", "HEAD")).toBe(head);
    expect(existsSync(path.join(ws.dir, "sub", "file"))).toBe(true);
  });

  test("a git dir gone since it was found does not stop the command", async () => {
    mkdirSync(path.join(ws.dir, "deep", "er"), { recursive: true });
    const nested = path.join(ws.dir, "deep", "er", ".git");
    const r = await start({ ...opts, gitDirs: [...opts.gitDirs, nested], command: "echo ran" }).done;
    expect(r).toMatchObject({ code: 0, out: "ran\n" });
  });

  test("the folders above a nested git dir cannot be moved away to make the repository anew", async () => {
    git(ws.dir, "init", "-q", "build/inner");
    const gitDirs = [...opts.gitDirs, path.join(ws.dir, "build", "inner", ".git")];
    const command = [
      "mv build/inner build/gone 2>/dev/null; echo inner=$?",
      "mv build gone 2>/dev/null; echo build=$?",
      "mv sub sub-gone 2>/dev/null; echo sub=$?",
      "touch build/new; echo write=$?",
    ].join("\n");
    const r = await start({ ...opts, gitDirs, command }).done;
    expect(r.out).toBe("inner=1\nbuild=1\nsub=1\nwrite=0\n");
    expect(existsSync(path.join(ws.dir, "build", "inner", ".git", "HEAD"))).toBe(true);
  });

  test("a pinned folder swapped for a link before the launch is refused, never followed", () => {
    git(ws.dir, "init", "-q", "lib/inner");
    const { pins } = buildSandbox({ ...opts, gitDirs: [path.join(ws.dir, "lib", "inner", ".git")] });
    expect(pins).toEqual([path.join(ws.dir, "lib"), path.join(ws.dir, "lib", "inner")]);
    // A relative link out of the workspace: bound by path, `--bind lib lib` would make the host's /etc writable.
    rmSync(path.join(ws.dir, "lib"), { recursive: true });
    symlinkSync(path.relative(ws.dir, "/etc"), path.join(ws.dir, "lib"));
    expect(() => openPins(pins)).toThrow(/changed while the sandbox was being set up/);
    // A link above the last folder is caught too: the descriptor's path is not the one asked for.
    rmSync(path.join(ws.dir, "lib"));
    mkdirSync(path.join(outside, "inner"));
    symlinkSync(outside, path.join(ws.dir, "lib"));
    expect(() => openPins([path.join(ws.dir, "lib", "inner")])).toThrow(/lib\/inner changed/);
  });

  test("a hidden folder (the daemon's state) shows empty and read-only, in a chosen home too, and cannot be moved away", async () => {
    const state = path.join(home, ".local", "state", "tool-layer");
    mkdirSync(state, { recursive: true });
    writeFileSync(path.join(state, "approvals.json"), "approved\n");
    const command = [
      `cat ${state}/approvals.json 2>/dev/null; echo read=$?`,
      `ls -A ${state} | wc -l`,
      `mkdir ${state}/roots 2>/dev/null; echo write=$?`,
      `mv ${home}/.local/state ${home}/.local/away 2>/dev/null; echo move=$?`,
      `touch ${home}/.local/other; echo home=$?`,
    ].join("\n");
    const r = await start({ ...opts, home, hide: [state], command }).done;
    expect(r.out).toBe("read=1\n0\nwrite=1\nmove=1\nhome=0\n");
    expect(readFileSync(path.join(state, "approvals.json"), "utf8")).toBe("approved\n");
    // Without a chosen home it is out of sight through the read-only system too.
    writeFileSync(path.join(outside, "seen"), "x");
    const plain = await start({ ...opts, hide: [outside], command: `ls -A ${outside} | wc -l; touch ${outside}/x 2>/dev/null; echo write=$?` }).done;
    expect(plain.out).toBe("0\nwrite=1\n");
  });

  test("a language server's sandbox hides the state folder too", async () => {
    writeFileSync(path.join(outside, "approvals.json"), "approved\n");
    const argv = lspSandboxArgv({ root: ws.dir, keep: [], hidden: host.hidden, disableUserns: probe.disableUserns, hide: [outside] }, "sh", [
      "-c",
      `cat ${outside}/approvals.json 2>/dev/null; echo read=$?; ls -A ${outside} | wc -l`,
    ]);
    const r = await new Promise<string>((resolve) => execFile(argv[0], argv.slice(1), { encoding: "utf8" }, (_e, out) => resolve(out)));
    expect(r).toBe("read=1\n0\n");
  });

  test("/tmp is private to the command", async () => {
    const name = `tool-layer-private-${process.pid}-${Date.now()}`;
    const r = await start({ ...opts, command: `echo inside > /tmp/${name} && cat /tmp/${name}` }).done;
    expect(r).toMatchObject({ code: 0, out: "inside\n" });
    expect(existsSync(`/tmp/${name}`)).toBe(false);
  });

  test("as root, remounting / read-write fails: every capability is dropped", async () => {
    const command = [
      "mount -o remount,bind,rw / 2>/dev/null; echo mount=$?",
      "touch /etc/tool-layer-remount 2>/dev/null; echo etc=$?",
      "grep CapEff /proc/self/status",
    ].join("\n");
    const r = await start({ ...opts, command }).done;
    expect(r.out).toMatch(/^mount=(?!0\n)\d+\netc=1\nCapEff:\s+0000000000000000\n$/);
    expect(existsSync("/etc/tool-layer-remount")).toBe(false);
  });

  test("kernel settings are read-only: as root, kernel.core_pattern would run a program outside the sandbox", async () => {
    // Only asks (access W_OK, which says EROFS for a read-only mount): nothing is written even if the check failed.
    const command =
      "for f in /proc/sys/kernel/core_pattern /proc/sys/kernel/modprobe /proc/sys/fs/binfmt_misc/register; do [ -w $f ] && echo writable $f; done; echo checked";
    expect((await start({ ...opts, command }).done).out).toBe("checked\n");
  });

  test.skipIf(!probe.disableUserns)("the command cannot make a user namespace of its own", async () => {
    const r = await start({ ...opts, command: "unshare -U true 2>/dev/null && echo made || echo refused" }).done;
    expect(r.out).toBe("refused\n");
  });

  test("the command cannot move itself out of its cgroup: /sys is read-only", async () => {
    const command = "[ -w /sys/fs/cgroup ] || [ -w /sys/fs/cgroup/pids ] && echo writable; touch /sys/fs/cgroup/x 2>/dev/null; echo touch=$?";
    expect((await start({ ...opts, command }).done).out).toBe("touch=1\n");
  });

  test("no network: a listener on the host's 127.0.0.1 is unreachable (and reachable with network on)", async () => {
    const server = net.createServer((s) => s.end()).listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const command = `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo connected || echo unreachable`;
      expect((await start({ ...opts, command }).done).out).toBe("unreachable\n");
      expect((await start({ ...opts, network: true, command }).done).out).toBe("connected\n");
    } finally {
      server.close();
    }
  });

  test.skipIf(process.getuid?.() !== 0)("unix sockets under /run are out of reach (a read-only mount does not stop connect)", async () => {
    const sock = `/run/tool-layer-test-${process.pid}.sock`;
    const server = net.createServer((s) => s.end()).listen(sock);
    await new Promise((r) => server.once("listening", r));
    try {
      const connect = "require('net').connect(process.env.SOCK).on('connect', () => console.log('connected')).on('error', (e) => console.log(e.code))";
      const command = `${process.execPath} -e "$SCRIPT"`;
      const env = { SCRIPT: connect, SOCK: sock };
      expect((await start({ ...opts, command }, { env }).done).out).toBe("ENOENT\n");
      // The same socket with /run left visible: what the tmpfs over it prevents.
      expect((await start({ ...opts, hidden: [], command }, { env }).done).out).toBe("connected\n");
    } finally {
      server.close();
    }
  });

  test("the home folder is empty unless one is chosen", async () => {
    const command = 'echo "home=$HOME"; ls -A ~ | wc -l; cat ~/.ssh/id_rsa ~/.config/gh/hosts.yml 2>/dev/null; echo cat=$?';
    const r = await start({ ...opts, command }).done;
    expect(r.out).toBe(`home=${home}\n0\ncat=1\n`);
    const chosen = mkdtempSync(path.join(os.tmpdir(), "tool-layer-terminal-home-"));
    try {
      writeFileSync(path.join(chosen, ".npmrc"), "registry=x\n");
      const c = await start({ ...opts, home: chosen, command: "cat ~/.npmrc && echo kept > ~/.cache-marker" }).done;
      expect(c).toMatchObject({ code: 0, out: "registry=x\n" });
      expect(readFileSync(path.join(chosen, ".cache-marker"), "utf8")).toBe("kept\n");
    } finally {
      rmSync(chosen, { recursive: true, force: true });
    }
  });

  test("the daemon's secrets and repository variables are not in the environment, nor are the host's processes", async () => {
    // The brackets keep grep from finding its own command line; the processes are the sandbox's own few (bwrap's init,
    // bash, the pipeline), not the host's.
    const command = "env; echo ---; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c 'secret-valu[e]'; ls -d /proc/[0-9]* | wc -l";
    const r = await start({ ...opts, command }).done;
    const [env, counts] = r.out.split("---\n");
    const [hits, processes] = counts.trim().split("\n").map(Number);
    expect(env).not.toContain("secret-value");
    expect(env).not.toMatch(/^(EXA_API_KEY|GH_TOKEN|GIT_DIR)=/m);
    expect(env).toMatch(/^PAGER=cat$/m);
    expect(env).toMatch(/^GIT_TERMINAL_PROMPT=0$/m);
    expect(hits).toBe(0);
    expect(processes).toBeLessThan(10);
  });

  test("the command's exit code passes through", async () => {
    expect((await start({ ...opts, command: "exit 7" }).done).code).toBe(7);
  });

  test("killing bwrap kills what the command left running (by host pid, nothing is left)", async () => {
    const sleeper = ["sleep", `1000.${process.pid}${Date.now() % 100000}`];
    const s = start({ ...opts, command: `${sleeper.join(" ")} & echo started; wait` });
    await outputMatches(s, (o) => o.includes("started"));
    expect(await watchProcesses(sleeper, (p) => p.length > 0)).toHaveLength(1);
    s.child.kill("SIGKILL"); // bwrap itself, not its group: --die-with-parent and the PID namespace do the rest
    await s.done;
    expect(await noneLeft(sleeper)).toEqual([]);
  });

  test("a background process a foreground command leaves behind dies when the command exits", async () => {
    const sleeper = ["sleep", `1001.${process.pid}${Date.now() % 100000}`];
    const r = await start({ ...opts, command: `${sleeper.join(" ")} >/dev/null 2>&1 & echo left` }).done;
    expect(r).toMatchObject({ code: 0, out: "left\n" });
    expect(await noneLeft(sleeper)).toEqual([]);
  });

  describe.skipIf(!probe.limits.pids)(`per-command limits (${probe.limits.reason ?? "cgroups hold here"})`, () => {
    /** Forks up to 300 `sleep 30.N` (bounded: never a real fork bomb) and reports how many started before the first failure. */
    const FORK_LOOP = [
      'const { spawn } = require("child_process"); const kids = []; let err = null;',
      "const done = () => { console.log(JSON.stringify({ started: kids.length, err })); for (const k of kids) k.kill('SIGKILL'); process.exit(0); };",
      "const next = (i) => { if (i >= 300 || err) return done(); const c = spawn('sleep', [process.env.MARK]);",
      "c.on('error', (e) => { err = e.code; next(i + 1); }); c.on('spawn', () => { kids.push(c); next(i + 1); }); };",
      "next(0);",
    ].join(" ");

    test("a bounded fork loop hits the process limit", async () => {
      const group = await createCommandCgroup(parents, { pids: 32, memoryBytes: 2 ** 30 });
      const mark = `30.${process.pid}${Date.now() % 100000}`;
      try {
        const r = await start({ ...opts, command: `${process.execPath} -e "$SCRIPT"` }, { env: { SCRIPT: FORK_LOOP, MARK: mark }, cgroup: group }).done;
        const report = JSON.parse(r.out.trim().split("\n").pop()!) as { started: number; err: string | null };
        expect(report.err).toBe("EAGAIN");
        expect(report.started).toBeGreaterThan(0);
        expect(report.started).toBeLessThan(32);
        expect(await noneLeft(["sleep", mark])).toEqual([]);
      } finally {
        expect(await group.release()).toBe(true);
      }
    });

    test.skipIf(!probe.limits.memory)("a command over its memory limit is killed", async () => {
      const group = await createCommandCgroup(parents, { pids: 256, memoryBytes: 128 * 2 ** 20 });
      try {
        const fill = "const a = []; for (let i = 0; i < 512; i++) a.push(Buffer.alloc(2 ** 20, 1)); console.log('done');";
        const r = await start({ ...opts, command: `${process.execPath} -e "$SCRIPT"` }, { env: { SCRIPT: fill }, cgroup: group }).done;
        expect(r.out).not.toContain("done");
        expect(r.code).toBe(137); // SIGKILL from the OOM killer, as bwrap reports it
      } finally {
        expect(await group.release()).toBe(true);
      }
    });
  });
});

describe("sandbox probe", () => {
  test.skipIf(bwrapMissing)("bwrap works here, and the probe says which limits hold", () => {
    expect(probe).toMatchObject({ available: true, network: false, disableUserns: hasDisableUserns(probe.version ?? "") });
    expect(probe.version).toMatch(/^bubblewrap \d/);
    expect(typeof probe.limits.pids).toBe("boolean");
    if (!probe.limits.pids) expect(probe.limits.reason).toBeTruthy();
  });

  test("a missing binary is reported as such", async () => {
    const noBwrap: typeof execRun = (file, args, o) => execRun(file === "bwrap" ? "/nonexistent/bwrap" : file, args, o);
    const p = await probeSandbox(noBwrap, { root: os.tmpdir(), network: true });
    expect(p).toMatchObject({ available: false, network: true, limits: { pids: false, memory: false } });
    expect(p.reason).toMatch(/bubblewrap \(bwrap\) is not installed/);
  });
});
