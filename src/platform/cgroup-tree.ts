import { randomInt } from "node:crypto";
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { isNodeError } from "../errors.js";
import { pidAlive } from "./pid-alive.js";

/**
 * Containment of every child and grandchild (SPEC 1) in a cgroup v2 tree per supervisor. A process group is left by
 * anything that calls setsid() (a daemonizing server, `setsid cmd &` in a hook); a cgroup is not: a process's
 * descendants are born in its cgroup and only a write to another cgroup's `cgroup.procs` moves them out. `cgroup.kill`
 * (Linux 5.14) SIGKILLs a whole subtree at once, forks in flight included.
 *
 * The daemon itself moves into the tree's `daemon` cgroup at its start (`enter()`), once: every child it forks is then
 * born in the tree at no cost per spawn, and the watchdog kills the tree when the daemon is gone. A long-lived child
 * (a server, a terminal command) also gets a leaf of its own (`start()`), so what it leaves is killed when it ends.
 * Moving a process into a cgroup waits for a grace period of RCU when the kernel's cgroup lock has been idle (10 ms on
 * this loaded 2-core machine): too much for every git call, nothing for a server's start, and paid by the child:
 * it starts as `/bin/sh` running JOIN_SCRIPT, which writes its own pid into the leaf and execs the command, so the
 * command keeps the pid, stdio, exit status and signals it would have had (no wrapper stays, as a PID namespace's init
 * would, and an init ignores SIGTERM without a handler). Where the shell cannot pass the environment on unchanged (a
 * name like `A-B` that dash drops) or the command is not found (Node must report ENOENT as before), the daemon steps
 * into the leaf around the synchronous spawn instead (the fork inherits the cgroup) and back out.
 *
 * No controller is needed (the v2 hierarchy only tracks here; on a hybrid host the limits stay in v1).
 */

/** The cgroup the daemon lives in once it entered its tree (CgroupTree.enter). */
const INSIDE_TREE = /\/tool-layer-tree-\d+-\d+\/daemon$/;

interface Mount {
  root: string;
  point: string;
  fstype: string;
  options: string[];
}

const unescapeMount = (s: string) => s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));

/** The mounts of /proc/self/mountinfo. */
export function parseMountinfo(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split("\n")) {
    const sep = line.indexOf(" - ");
    if (sep < 0) continue;
    const left = line.slice(0, sep).split(" ");
    const right = line.slice(sep + 3).split(" ");
    if (left.length < 5 || right.length < 3) continue;
    mounts.push({ root: unescapeMount(left[3]), point: unescapeMount(left[4]), fstype: right[0], options: right[2].split(",") });
  }
  return mounts;
}

/** Where a cgroup (its path in the hierarchy) appears under a mount of that hierarchy; undefined when the mount does not show it. */
export function mountedPath(mount: Mount, cgPath: string): string | undefined {
  const rel = path.posix.relative(mount.root, cgPath);
  if (rel.startsWith("..")) return undefined;
  return path.posix.join(mount.point, rel);
}

/**
 * Pure: the daemon's own cgroup v2 directory, from /proc/self/mountinfo and /proc/self/cgroup, or why there is none.
 * Once the daemon has entered its cgroup tree, the one it was in before (where per-command cgroups and other trees go).
 */
export function ownV2Cgroup(mountinfo: string, selfCgroup: string): { dir: string } | { reason: string } {
  const v2 = parseMountinfo(mountinfo).find((m) => m.fstype === "cgroup2");
  if (!v2) return { reason: "no cgroup v2 hierarchy is mounted" };
  const line = selfCgroup.split("\n").find((l) => l.startsWith("0::"));
  if (line === undefined) return { reason: "the daemon has no cgroup v2 (no 0:: line in /proc/self/cgroup)" };
  const own = line.slice(3).replace(INSIDE_TREE, "") || "/";
  const dir = mountedPath(v2, own);
  return dir ? { dir } : { reason: `the daemon's cgroup ${own} is not visible under ${v2.point}` };
}

/**
 * `TOOL_LAYER_CONTAINMENT=process-group`, for tests only: the daemon uses no cgroup, as on a host without a usable one
 * (no supervisor tree, children contained by their process group only; no per-command limits in the terminal), so the
 * fallback's paths can be tested on a machine that has cgroups. Returns the reason to give, when set.
 */
export function cgroupsOffForTests(): string | undefined {
  return process.env.TOOL_LAYER_CONTAINMENT === "process-group" ? "TOOL_LAYER_CONTAINMENT=process-group" : undefined;
}

function hostOwnV2Cgroup(): { dir: string } | { reason: string } {
  const off = cgroupsOffForTests();
  if (off) return { reason: off };
  try {
    return ownV2Cgroup(readFileSync("/proc/self/mountinfo", "utf8"), readFileSync("/proc/self/cgroup", "utf8"));
  } catch (e) {
    return { reason: `cannot read the daemon's cgroup (${(e as Error).message})` };
  }
}

/**
 * The child's first step: join the leaf named by $1, give PWD back what the caller chose ($2 = 1: $3; else unset: a
 * shell sets it to the working directory), become the command ($4…, argv[0] as given, found on the child's PATH).
 * A join the kernel refuses is silent (the command's stderr is not ours to write on): the child stays where it was born,
 * the daemon's cgroup (the tree's, once entered).
 */
const JOIN_SCRIPT = '{ echo $$ > "$1"; } 2>/dev/null; if [ "$2" = 1 ]; then PWD=$3; else unset PWD; fi; shift 3; exec "$@"';
const SHELL = "/bin/sh";
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Runs a program to its end, synchronously (the supervisor's, which owns every spawn): its exit status and stdout. */
export type RunSync = (cmd: string, args: readonly string[], env: Record<string, string>) => { status: number | null; stdout: string };

interface ShellCheck {
  works: boolean;
  keepsOddNames: boolean;
}

/** What this machine's /bin/sh passes on through JOIN_SCRIPT: two runs of `env`. */
function probeShell(runSync: RunSync): ShellCheck {
  const base = { PATH: process.env.PATH ?? "/usr/bin:/bin", TOOL_LAYER_PROBE: "a b=c", "TOOL-LAYER.ODD": "1" };
  const passes = (env: Record<string, string>, pwd: string | undefined) => {
    const r = runSync(SHELL, ["-c", JOIN_SCRIPT, "sh", "/dev/null", pwd === undefined ? "0" : "1", pwd ?? "", "env"], env);
    const seen = new Set(r.stdout.split("\n").filter(Boolean));
    const wanted = Object.entries(env)
      .filter(([k]) => SHELL_NAME.test(k))
      .map(([k, v]) => `${k}=${v}`);
    const odd = seen.has("TOOL-LAYER.ODD=1");
    return { ok: r.status === 0 && wanted.every((l) => seen.has(l)) && seen.size === wanted.length + (odd ? 1 : 0), odd };
  };
  const without = passes(base, undefined);
  const withPwd = passes({ ...base, PWD: "/tool-layer-probe" }, "/tool-layer-probe");
  return { works: without.ok && withPwd.ok, keepsOddNames: without.odd && withPwd.odd };
}

/** Whether execvp would find `cmd` as an executable file (the shell then finds the same one on the same PATH). */
function resolves(cmd: string, pathVar: string, cwd: string): boolean {
  const executable = (p: string) => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (cmd.includes("/")) return executable(path.resolve(cwd, cmd));
  return pathVar.split(":").some((dir) => executable(path.resolve(cwd, dir, cmd)));
}

const TREE_PREFIX = "tool-layer-tree-";
const STALE_TREE = new RegExp(`^${TREE_PREFIX}(\\d+)-\\d+$`);
/** After cgroup.kill the processes take a few milliseconds to exit: between tries to remove their cgroup. */
const EMPTY_POLL_MS = 5;
/** Empty leaves kept for the next long-lived children, instead of a mkdir and rmdir each. */
const MAX_SPARE_LEAVES = 8;
/** The number after the daemon's pid in the cgroups it names (trees, commands' cgroups): random, so two of one process
 * never collide, and no counter is kept. */
export const uniqueSuffix = () => randomInt(2 ** 47);

/** One child's cgroup. */
export class Leaf {
  constructor(readonly dir: string) {}

  /** SIGKILLs every process in it (the child's and whatever they started, sessions of their own included). */
  kill(): void {
    try {
      writeFileSync(path.join(this.dir, "cgroup.kill"), "1");
    } catch {
      /* removed already */
    }
  }

  /** Whether a process is still in it. */
  populated(): boolean {
    return populated(this.dir);
  }
}

function populated(dir: string): boolean {
  try {
    return /^populated 1$/m.test(readFileSync(path.join(dir, "cgroup.events"), "utf8"));
  } catch {
    return false; // gone
  }
}

/** Removes a cgroup and the ones under it once each is empty; false when one is still busy. */
function removeTree(dir: string): boolean {
  let entries: string[];
  try {
    entries = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch (e) {
    return isNodeError(e, "ENOENT");
  }
  let ok = true;
  for (const name of entries) ok = removeTree(path.join(dir, name)) && ok;
  try {
    rmdirSync(dir);
  } catch (e) {
    return isNodeError(e, "ENOENT");
  }
  return ok;
}

/** Kills a whole tree, then removes it once its processes are gone (about a second at most; later sweeps get the rest). */
export async function killCgroupTree(dir: string, boundMs = 1_000): Promise<boolean> {
  new Leaf(dir).kill();
  const deadline = Date.now() + boundMs;
  while (populated(dir) && Date.now() < deadline) await new Promise((r) => setTimeout(r, EMPTY_POLL_MS));
  return removeTree(dir);
}

export type Containment = { kind: "cgroup"; tree: string } | { kind: "process-group"; reason: string };

/**
 * A supervisor's cgroup tree (`<daemon's cgroup>/tool-layer-tree-PID-N`). Once `enter()`ed, the daemon itself lives in
 * its `daemon` cgroup, so every child it forks is born in the tree at no cost (git, rg, hooks under git); a long-lived
 * child gets a leaf of its own (`start()`), so what it leaves behind can be killed when it ends. The tree is killed
 * whole by `close()` (the daemon steps out first) and by the watchdog once the daemon is gone. When the machine has no
 * usable cgroup v2 (none mounted, read-only, no permission, a kernel without cgroup.kill), children are contained by
 * their process group only, `state()` says why and the log says it once.
 */
export class CgroupTree {
  /** The tree's directory, where the daemon's own cgroup v2 is known; it exists once `made`. */
  readonly dir?: string;
  /** The daemon's cgroup before enter(), where close() puts it back. */
  private readonly outside?: string;
  private made = false;
  private unavailable?: string;
  private leaves = 0;
  private readonly spare: Leaf[] = [];
  /** The cgroup.procs of where the daemon lives between spawns (the tree's `daemon` once entered), open while the tree is. */
  private baseFd?: number;
  private base?: string;
  private entered = false;
  /** probeShell's answer, on the first child that could join its leaf by itself. */
  private shellCheck?: ShellCheck;

  /**
   * `own`: the daemon's cgroup v2 directory (default: the one /proc says), or why there is none. `runSync`: how to run
   * the check of /bin/sh; without it, every long-lived child joins its leaf through the daemon's own move.
   */
  constructor(
    private readonly log: (message: string) => void = () => undefined,
    own = hostOwnV2Cgroup(),
    private readonly runSync?: RunSync,
  ) {
    if ("reason" in own) {
      this.unavailable = own.reason;
      return;
    }
    this.outside = own.dir;
    this.dir = path.join(own.dir, `${TREE_PREFIX}${process.pid}-${uniqueSuffix()}`);
  }

  state(): Containment {
    if (this.entered || (this.unavailable === undefined && this.dir)) return { kind: "cgroup", tree: this.dir! };
    return { kind: "process-group", reason: this.unavailable ?? "" };
  }

  /** The daemon's own cgroup v2 directory, as it was before enter(). */
  get daemonCgroup(): string | undefined {
    return this.outside;
  }

  /**
   * Makes the tree and moves the daemon into its `daemon` cgroup (the daemon's start), so every child is born inside
   * and `state()` and the log tell at once whether containment works. The caller's watchdog must have started before:
   * it must stay outside the tree it kills.
   */
  enter(): void {
    if (this.unavailable !== undefined) return this.disable(this.unavailable);
    if (this.entered || !this.make()) return;
    const inside = path.join(this.dir!, "daemon");
    try {
      mkdirSync(inside);
      const fd = openSync(path.join(inside, "cgroup.procs"), "w");
      writeSync(fd, String(process.pid));
      closeSync(this.baseFd!);
      [this.baseFd, this.base, this.entered] = [fd, inside, true];
    } catch (e) {
      this.disable(`the daemon cannot move into the cgroup ${inside}: ${(e as Error).message}`);
    }
  }

  /**
   * Starts a long-lived child inside a new leaf cgroup through `spawn` (synchronous: Node's spawn of `cmd` with `args`,
   * the caller's options otherwise). Without containment, or when the kernel refuses, `leaf` is undefined and the child
   * starts where the daemon is (in the tree once entered).
   */
  start<T>(
    cmd: string,
    args: readonly string[],
    env: Record<string, string>,
    cwd: string,
    spawn: (cmd: string, args: readonly string[]) => T,
  ): { value: T; leaf?: Leaf } {
    const leaf = this.newLeaf();
    if (!leaf) return { value: spawn(cmd, args) };
    if (this.joinsItself(cmd, env, cwd)) {
      const pwd = env.PWD === undefined ? ["0", ""] : ["1", env.PWD];
      return { value: spawn(SHELL, ["-c", JOIN_SCRIPT, "sh", path.join(leaf.dir, "cgroup.procs"), ...pwd, cmd, ...args]), leaf };
    }
    try {
      this.move(leaf.dir);
    } catch (e) {
      rmdirQuietly(leaf.dir);
      this.disable(`the daemon cannot move into the cgroup ${leaf.dir}: ${(e as Error).message}`);
      return { value: spawn(cmd, args) };
    }
    let value: T;
    let back: boolean;
    try {
      value = spawn(cmd, args);
    } finally {
      back = this.moveBack();
    }
    // Still in the leaf, the daemon would die with it: the child goes uncontained (and so do the next ones).
    return back ? { value, leaf } : { value };
  }

  /** Whether the child can join its leaf by itself (JOIN_SCRIPT) and still get exactly `env` and ENOENT semantics. */
  private joinsItself(cmd: string, env: Record<string, string>, cwd: string): boolean {
    if (!this.runSync || env.PATH === undefined) return false;
    const shell = (this.shellCheck ??= probeShell(this.runSync));
    if (!shell.works) return false;
    if (!shell.keepsOddNames && !Object.keys(env).every((k) => SHELL_NAME.test(k))) return false;
    return resolves(cmd, env.PATH, cwd);
  }

  /** Returns the daemon to where it lives between spawns; false (containment off from now on) when the kernel refuses. */
  private moveBack(): boolean {
    try {
      writeSync(this.baseFd!, String(process.pid));
      return true;
    } catch (e) {
      this.disable(`the daemon cannot move back to its cgroup ${this.base}: ${(e as Error).message}`);
      return false;
    }
  }

  /** The daemon steps out, then every process in the tree is killed at once and the tree removed once empty. */
  async close(): Promise<void> {
    if (this.baseFd !== undefined) closeSync(this.baseFd);
    this.baseFd = undefined;
    this.spare.length = 0;
    if (!this.made || !this.dir) return;
    if (this.entered) {
      try {
        writeFileSync(path.join(this.outside!, "cgroup.procs"), String(process.pid));
        this.entered = false;
      } catch (e) {
        // Still inside: the watchdog kills the tree once the daemon has exited.
        this.log(`the daemon cannot move back to its cgroup ${this.outside}: ${(e as Error).message}`);
        return;
      }
    }
    await killCgroupTree(this.dir);
  }

  /**
   * After its child ended: kills what is left in the leaf and removes it once empty (a busy one goes with close()), or
   * keeps it for the next child when nothing was left.
   */
  async release(leaf: Leaf, boundMs = 1_000): Promise<void> {
    if (!leaf.populated() && this.baseFd !== undefined && this.spare.length < MAX_SPARE_LEAVES) {
      this.spare.push(leaf); // empty, and nothing outside can enter it
      return;
    }
    leaf.kill();
    const deadline = Date.now() + boundMs;
    while (leaf.populated() && Date.now() < deadline) await new Promise((r) => setTimeout(r, EMPTY_POLL_MS));
    rmdirQuietly(leaf.dir);
  }

  private make(): boolean {
    if (this.made) return true;
    if (this.unavailable !== undefined || !this.dir) return false;
    try {
      sweepStale(path.dirname(this.dir));
      mkdirSync(this.dir);
      this.made = true;
      // Linux 5.14 and later: without cgroup.kill a tree cannot be emptied at once, forks in flight included.
      if (!existsSync(path.join(this.dir, "cgroup.kill"))) throw new Error("the kernel has no cgroup.kill (Linux 5.14 and later)");
      this.base = this.outside;
      this.baseFd = openSync(path.join(this.outside!, "cgroup.procs"), "w");
      return true;
    } catch (e) {
      this.disable(`cannot create a cgroup under ${path.dirname(this.dir)}: ${(e as Error).message}`);
      return false;
    }
  }

  private newLeaf(): Leaf | undefined {
    if (!this.make() || this.unavailable !== undefined || this.baseFd === undefined) return undefined; // closed
    const spare = this.spare.pop();
    if (spare) return spare;
    const dir = path.join(this.dir!, `c${++this.leaves}`);
    try {
      mkdirSync(dir);
      return new Leaf(dir);
    } catch (e) {
      this.disable(`cannot create a cgroup under ${this.dir}: ${(e as Error).message}`);
      return undefined;
    }
  }

  private move(dir: string): void {
    writeFileSync(path.join(dir, "cgroup.procs"), String(process.pid));
  }

  /** From now on children start without a leaf of their own; those already in one stay there. */
  private disable(reason: string): void {
    this.unavailable = reason;
    if (this.entered) this.log(`children get no cgroup of their own; what one leaves behind is killed with the daemon only: ${reason}`);
    else this.log(`child processes are contained by their process group only; one that starts a session of its own (setsid) can outlive the daemon: ${reason}`);
  }
}

/** The trees of daemons that died without their watchdog (both SIGKILLed): what is left in them is killed, they are removed. */
function sweepStale(parent: string): void {
  let entries: string[] = [];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const e of entries) {
    const m = STALE_TREE.exec(e);
    if (m && !pidAlive(Number(m[1]))) void killCgroupTree(path.join(parent, e));
  }
}

function rmdirQuietly(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    /* busy (swept with the tree) or gone */
  }
}
