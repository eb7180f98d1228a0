import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { childEnv } from "../../src/platform/child-env.js";
import { isAlive } from "../../src/platform/process-tree.js";
import { GONE_WAIT_MS, KILL_GRACE_MS, type LimitOptions, Supervisor } from "../../src/platform/supervisor.js";
import { alive, processes, until, waitDead, waitForFile } from "../helpers/process.js";
import { tmpWorkspace } from "../helpers/tmp.js";

const supervisor = new Supervisor(3);
afterAll(() => supervisor.stop());
const sh = (script: string, cwd = process.cwd()) => ({ cmd: "sh", args: ["-c", script], cwd });

describe("the process supervisor", () => {
  it("a timeout kills the whole process group, grandchildren included", async () => {
    const ws = tmpWorkspace();
    try {
      const r = await supervisor.run(sh("sleep 30 & echo $! > child.pid; wait", ws.dir), { timeoutMs: 300 });
      expect(r.timedOut).toBe(true);
      await waitDead(Number(readFileSync(path.join(ws.dir, "child.pid"), "utf8")));
    } finally {
      ws.cleanup();
    }
  });

  it("what a command leaves running in its group dies when it exits", async () => {
    const ws = tmpWorkspace();
    try {
      const r = await supervisor.run(sh("sleep 30 > /dev/null 2>&1 & echo $! > child.pid", ws.dir));
      expect(r.code).toBe(0);
      await waitDead(Number(readFileSync(path.join(ws.dir, "child.pid"), "utf8")));
    } finally {
      ws.cleanup();
    }
  });

  it("a command without a group of its own is killed on timeout too; stdin is closed; output is capped", async () => {
    expect((await supervisor.run({ cmd: "sleep", args: ["30"], cwd: process.cwd(), group: false }, { timeoutMs: 200 })).timedOut).toBe(true);
    expect(await supervisor.run({ cmd: "cat", args: [], cwd: process.cwd() }, { timeoutMs: 20_000 })).toMatchObject({ code: 0, stdout: "", timedOut: false });
    const big = await supervisor.run(sh("head -c 5000 /dev/zero"), { maxBytes: 1000 });
    expect(big.stdout.length).toBe(1000);
    expect(big.truncated).toBe(true);
    expect((await supervisor.run({ cmd: "cat", args: [], cwd: process.cwd() }, { input: "fed\n" })).stdout).toBe("fed\n");
  });

  it("runs at most its pool size of short-lived children at once, the rest wait in order", async () => {
    const marks: string[] = [];
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const child = await supervisor.spawn(sh("sleep 0.05"));
        running++;
        most = Math.max(most, running);
        marks.push(`start ${i}`);
        await child.exited;
        running--;
      }),
    );
    expect(most).toBe(3);
    expect(marks).toEqual(Array.from({ length: 12 }, (_, i) => `start ${i}`));
  });

  it("a call aborted while it waits for a slot never starts", async () => {
    const blockers = await Promise.all([0, 1, 2].map(() => supervisor.spawn(sh("sleep 30"))));
    const controller = new AbortController();
    const queued = supervisor.run(sh("echo started > /dev/stderr"), { signal: controller.signal });
    controller.abort(new Error("gave up"));
    await expect(queued).rejects.toThrow("gave up");
    for (const b of blockers) b.stop();
    await Promise.all(blockers.map((b) => b.exited));
    expect(supervisor.state()).toMatchObject({ pool: { busy: 0, queued: 0 } });
  });

  it("counts the time a call waited for a slot (waitedMs, by its signal): none when a slot was free, frozen once it runs", async () => {
    const free = new AbortController();
    await supervisor.run(sh("true"), { signal: free.signal });
    expect(supervisor.waitedMs(free.signal)).toBe(0);
    const blockers = await Promise.all([0, 1, 2].map(() => supervisor.spawn(sh("sleep 30"))));
    const queued = new AbortController();
    const run = supervisor.run(sh("true"), { signal: queued.signal });
    expect(supervisor.state()).toMatchObject({ pool: { queued: 1 } });
    blockers[0].stop();
    await blockers[0].exited;
    await run;
    const waited = supervisor.waitedMs(queued.signal);
    expect(waited).toBeGreaterThan(0);
    await supervisor.run(sh("true"));
    expect(supervisor.waitedMs(queued.signal)).toBe(waited);
    for (const b of blockers.slice(1)) b.stop();
    await Promise.all(blockers.map((b) => b.exited));
  });

  it("a command that cannot start rejects with its error and frees its slot", async () => {
    await expect(supervisor.run({ cmd: "/no/such/program", args: [], cwd: process.cwd() })).rejects.toMatchObject({ code: "ENOENT" });
    expect(supervisor.state()).toMatchObject({ pool: { busy: 0 } });
  });

  it("children get the workspace environment: no repository variables, nothing that prompts", async () => {
    const saved = { ...process.env };
    process.env.GIT_DIR = "/elsewhere/.git";
    process.env.GIT_INDEX_FILE = "/elsewhere/index";
    process.env.GIT_CONFIG_COUNT = "1";
    process.env.GIT_CONFIG_KEY_0 = "core.fsmonitor";
    process.env.GIT_CONFIG_VALUE_0 = "touch /tmp/pwned";
    process.env.KEEP_ME = "yes";
    try {
      const r = await supervisor.run(sh("env"));
      const env = Object.fromEntries(
        r.stdout
          .trim()
          .split("\n")
          .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
      );
      for (const name of ["GIT_DIR", "GIT_INDEX_FILE", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"]) expect(env[name], name).toBeUndefined();
      expect(env).toMatchObject({ KEEP_ME: "yes", GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat", GIT_EDITOR: ":" });
    } finally {
      process.env = saved;
    }
    expect(childEnv({ EXTRA: "1", PATH: undefined }, { PATH: "/bin", GIT_WORK_TREE: "/x" })).toEqual(expect.objectContaining({ EXTRA: "1" }));
    expect(childEnv({ PATH: undefined }, { PATH: "/bin", GIT_WORK_TREE: "/x" })).not.toHaveProperty("GIT_WORK_TREE");
  });

  it("`output` gives the child one descriptor for stdout and stderr: the file has both in the order written", async () => {
    const ws = tmpWorkspace();
    try {
      const file = path.join(ws.dir, "out.log");
      const fd = openSync(file, "a");
      const r = await supervisor.run({ ...sh("echo one; echo two >&2; echo three"), output: fd }).finally(() => closeSync(fd));
      expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" });
      expect(readFileSync(file, "utf8")).toBe("one\ntwo\nthree\n");
    } finally {
      ws.cleanup();
    }
  });

  it("stop() ends long-lived children and waits for them", async () => {
    const own = new Supervisor();
    const server = await own.spawnLong({ cmd: "sh", args: ["-c", "trap '' TERM; sleep 30 & wait"], cwd: process.cwd(), label: "stubborn" });
    const kids = () =>
      processes()
        .filter((p) => p.pgid === server.pid)
        .map((p) => p.pid);
    expect(own.state()).toMatchObject({ running: 1, children: [{ pid: server.pid, label: "stubborn" }] });
    const members = kids();
    await own.stop(300);
    for (const pid of [server.pid, ...members]) await waitDead(pid);
    expect(alive(server.pid)).toBe(false);
  });
});

/** A grandchild in a session (and process group) of its own, so no group kill reaches it; its pid goes to `file`. */
const escapingGrandchild = (file: string) => `setsid sleep 30 < /dev/null > /dev/null 2>&1 & echo $! > ${file}`;
const pidIn = (dir: string, file: string) => waitForFile(path.join(dir, file)).then(Number);
/** The cgroup v2 a process is in, as a path of the hierarchy ("0::" in /proc/PID/cgroup). */
const cgroupOf = (pid: number) =>
  readFileSync(`/proc/${pid}/cgroup`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("0::"))!
    .slice(3);

/** A long-lived child run to its end, with its stdout. */
async function runLong(owner: Supervisor, spec: Parameters<Supervisor["spawnLong"]>[0], opts: LimitOptions = {}) {
  const managed = await owner.spawnLong(spec, opts);
  let stdout = "";
  managed.child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  return { ...(await managed.exited), stdout, timedOut: managed.timedOut };
}

describe("containment: what a child starts cannot leave it by setsid (SPEC 1)", () => {
  it("a long-lived child runs in a cgroup of its own under the supervisor's tree; a short-lived one where the daemon is", async () => {
    const containment = supervisor.state().containment as { kind: string; tree: string };
    expect(containment).toMatchObject({ kind: "cgroup", tree: expect.stringMatching(/tool-layer-tree-\d+-\d+$/) });
    const mine = cgroupOf(process.pid);
    const long = await runLong(supervisor, { cmd: "cat", args: ["/proc/self/cgroup"], cwd: process.cwd() });
    expect(long.stdout).toMatch(new RegExp(`^0::.*/${path.basename(containment.tree)}/c\\d+$`, "m"));
    expect(cgroupOf(process.pid)).toBe(mine);
    const short = await supervisor.run({ cmd: "cat", args: ["/proc/self/cgroup"], cwd: process.cwd() });
    expect(short.stdout).toContain(`0::${mine}\n`);
  });

  it("a long-lived child's grandchild that left the group with setsid dies when the child exits, on a timeout and on stop()", async () => {
    const ws = tmpWorkspace();
    const own = new Supervisor();
    try {
      expect((await runLong(supervisor, sh(escapingGrandchild("exited.pid"), ws.dir))).code).toBe(0);
      await waitDead(await pidIn(ws.dir, "exited.pid"));

      const timedOut = await runLong(supervisor, sh(`${escapingGrandchild("timeout.pid")}; sleep 30`, ws.dir), { timeoutMs: 300 });
      expect(timedOut.timedOut).toBe(true);
      await waitDead(await pidIn(ws.dir, "timeout.pid"));

      const server = await own.spawnLong({ ...sh(`${escapingGrandchild("stop.pid")}; exec sleep 30`, ws.dir), label: "server" });
      const escaped = await pidIn(ws.dir, "stop.pid");
      // Left the group (setsid runs just after the fork that `$!` names).
      await until(() => processes().find((p) => p.pid === escaped)?.pgid === escaped, "the grandchild to lead a group of its own");
      expect(server.pid).not.toBe(escaped);
      await own.stop(300);
      await waitDead(escaped);
    } finally {
      await own.stop(0);
      ws.cleanup();
    }
  });

  it("stop({graceMs: 0}) takes a long-lived child's whole tree at once, a setsid grandchild that holds its stdout included", async () => {
    const ws = tmpWorkspace();
    try {
      // The grandchild keeps the child's stdout open, so no 'close' comes when the child itself dies.
      const server = await supervisor.spawnLong(sh("setsid sleep 30 & echo $! > held.pid; exec sleep 30", ws.dir));
      server.child.stdout.resume();
      const held = await pidIn(ws.dir, "held.pid");
      expect(await server.stop({ graceMs: 0 })).toEqual({ code: null, signal: "SIGKILL", left: [] });
      expect(isAlive(held)).toBe(false);
    } finally {
      ws.cleanup();
    }
  });

  it("a contained child gets exactly its environment and argv[0], and is in its cgroup, whichever way it joins it", async () => {
    const tree = (supervisor.state().containment as { tree: string }).tree;
    const node = path.basename(process.execPath);
    const script = "console.log(JSON.stringify({ env: process.env, argv0: process.argv0, cgroup: require('fs').readFileSync('/proc/self/cgroup', 'utf8') }))";
    const base = { PATH: path.dirname(process.execPath), SPACED: "a b=c" };
    // No PWD (a shell would add one), a PWD that is not the working directory, and a name no shell keeps (A-B).
    for (const env of [base, { ...base, PWD: "/not/the/cwd" }, { ...base, "ODD-NAME.X": "1" }]) {
      const r = await runLong(supervisor, { cmd: node, args: ["-e", script], cwd: "/", exactEnv: env });
      const seen = JSON.parse(r.stdout) as { env: Record<string, string>; argv0: string; cgroup: string };
      expect(seen.env).toEqual(env);
      expect(seen.argv0).toBe(node);
      expect(seen.cgroup).toMatch(new RegExp(`^0::.*/${path.basename(tree)}/c\\d+$`, "m"));
    }
  });

  it("a contained child's exit code, signal, stdin and stdout are its own; a missing program is still ENOENT", async () => {
    expect(await runLong(supervisor, sh("exit 3"))).toMatchObject({ code: 3, signal: null });
    expect(await runLong(supervisor, sh("kill -TERM $$"))).toMatchObject({ code: null, signal: "SIGTERM" });
    const cat = await supervisor.spawnLong({ cmd: "cat", args: [], cwd: process.cwd(), stdin: "pipe" });
    let out = "";
    cat.child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    cat.child.stdin!.end("through\n");
    expect(await cat.exited).toEqual({ code: 0, signal: null });
    expect(out).toBe("through\n");
    await expect(supervisor.spawnLong({ cmd: "no-such-program-here", args: [], cwd: process.cwd() })).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("a child's stop({graceMs}): the one way to end a child", () => {
  /** A leader and a child in its group that log SIGTERM and go on, and a grandchild in a session of its own. */
  const stubborn = [
    `trap 'echo leader >> term.log' TERM`,
    `sh -c 'trap "echo kid >> term.log" TERM; echo $$ > kid.pid; while :; do sleep 0.05; done' &`,
    escapingGrandchild("escaped.pid"),
    "echo $$ > leader.pid",
    "while :; do sleep 0.05; done",
  ].join("\n");

  it("SIGTERM to the whole group, SIGKILL after the grace, resolved once every process of the tree is gone", async () => {
    const ws = tmpWorkspace();
    try {
      const server = await supervisor.spawnLong({ ...sh(stubborn, ws.dir), label: "stubborn" });
      const tree = [await pidIn(ws.dir, "leader.pid"), await pidIn(ws.dir, "kid.pid"), await pidIn(ws.dir, "escaped.pid")];
      expect(tree[0]).toBe(server.pid);
      expect(await server.stop({ graceMs: 1_000 })).toEqual({ code: null, signal: "SIGKILL", left: [] });
      expect(tree.filter(isAlive)).toEqual([]);
      expect(readFileSync(path.join(ws.dir, "term.log"), "utf8").split("\n").filter(Boolean).sort()).toEqual(["kid", "leader"]);
    } finally {
      ws.cleanup();
    }
  });

  it("graceMs 0 is SIGKILL at once; a child that ends on SIGTERM ends there; a child already gone is not signalled", async () => {
    const ws = tmpWorkspace();
    try {
      const now = await supervisor.spawnLong(sh(stubborn, ws.dir));
      const tree = [await pidIn(ws.dir, "leader.pid"), await pidIn(ws.dir, "kid.pid"), await pidIn(ws.dir, "escaped.pid")];
      expect(await now.stop({ graceMs: 0 })).toEqual({ code: null, signal: "SIGKILL", left: [] });
      expect(tree.filter(isAlive)).toEqual([]);
      expect(existsSync(path.join(ws.dir, "term.log"))).toBe(false);

      const polite = await supervisor.spawnLong(sh("sleep 30"));
      expect(await polite.stop()).toEqual({ code: null, signal: "SIGTERM", left: [] });

      const done = await supervisor.spawnLong(sh("exit 4"));
      await done.exited;
      expect(await done.stop()).toEqual({ code: 4, signal: null, left: [] });
    } finally {
      ws.cleanup();
    }
  });
});

describe("stop({ask}): a polite request in SIGTERM's place, and a bounded wait for the tree", () => {
  it("SIGKILL after the grace when the ask does not end the child, with no SIGTERM before", async () => {
    const ws = tmpWorkspace();
    try {
      const deaf = await supervisor.spawnLong(sh(`trap 'echo term >> term.log' TERM; echo $$ > deaf.pid; while :; do sleep 0.05; done`, ws.dir));
      await pidIn(ws.dir, "deaf.pid");
      let asked = 0;
      const never = () => new Promise<void>(() => void asked++);
      expect(await deaf.stop({ graceMs: 200, ask: never })).toEqual({ code: null, signal: "SIGKILL", left: [] });
      expect(asked).toBe(1);
      expect(existsSync(path.join(ws.dir, "term.log"))).toBe(false);
    } finally {
      ws.cleanup();
    }
  });

  it("without cgroups a setsid grandchild outlives every kill: the stop ends GONE_WAIT_MS after the kill and names it; a child the ask ended exits as it chose", async () => {
    process.env.TOOL_LAYER_CONTAINMENT = "process-group";
    const own = new Supervisor();
    delete process.env.TOOL_LAYER_CONTAINMENT;
    const ws = tmpWorkspace();
    let escaped: number | undefined;
    try {
      expect(own.state().containment).toMatchObject({ kind: "process-group" });
      const server = await own.spawnLong({ ...sh(`${escapingGrandchild("escaped.pid")}; read line; exit 0`, ws.dir), stdin: "pipe" });
      escaped = await pidIn(ws.dir, "escaped.pid");
      await until(() => processes().find((p) => p.pid === escaped)?.pgid === escaped, "the grandchild to lead a group of its own");
      const ask = async () => void server.child.stdin!.end("bye\n");
      expect(await server.stop({ graceMs: 10 * GONE_WAIT_MS, ask })).toEqual({ code: 0, signal: null, left: [escaped] });
      expect(alive(escaped)).toBe(true);
    } finally {
      if (escaped !== undefined && alive(escaped)) process.kill(escaped, "SIGKILL");
      await own.stop(0);
      ws.cleanup();
    }
  });
});

describe("a stopped child's late SIGKILL", () => {
  it("never reaches the next child that got its cgroup", async () => {
    const own = new Supervisor();
    try {
      const first = await own.spawnLong(sh("sleep 30"));
      void first.stop(); // it ends on SIGTERM, long before the grace is over
      await first.exited;
      // Its empty cgroup is kept for the next long-lived child: the first's SIGKILL, due at the end of the grace, must not come.
      const next = await own.spawnLong(sh(`sleep ${(KILL_GRACE_MS + 1_000) / 1_000}; exit 7`));
      expect(await next.exited).toEqual({ code: 7, signal: null });
    } finally {
      await own.stop(0);
    }
  });
});
