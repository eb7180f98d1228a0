import { mkdir, readFile, readdir, rmdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { isNodeError } from "../errors.js";
import { cgroupsOffForTests, mountedPath, ownV2Cgroup, parseMountinfo, uniqueSuffix } from "../platform/cgroup-tree.js";
import { pidAlive } from "../platform/pid-alive.js";

/**
 * Per-command process and memory limits through cgroups (SPEC 11 "where the machine's cgroups allow it").
 * RLIMIT_NPROC cannot do it: root is exempt, and it counts every process of the user, not one command's. A cgroup is
 * created per command under the daemon's own cgroup (never beside it, so the limits the machine put on the daemon
 * still hold), and the command joins it before it starts (a sandbox while bwrap sets it up: CommandCgroup.admit; an
 * unsandboxed command through wrap()'s shell), so everything it forks is counted.
 */

export interface Limits {
  /** Tasks (processes and threads) at once. */
  pids: number;
  memoryBytes: number;
}

/** A parallel build or test run uses a few hundred tasks, threads included (a Node worker is about a dozen); 1024 stops
 * a runaway fork loop long before it exhausts the machine's pid space. */
export const DEFAULT_PIDS_MAX = 1024;
/** Half the machine, at most 8 GiB: a type check or test run of a large project fits, a leak does not take the daemon down. */
export function defaultLimits(totalMem = os.totalmem()): Limits {
  return { pids: DEFAULT_PIDS_MAX, memoryBytes: Math.min(8 * 2 ** 30, Math.floor(totalMem / 2)) };
}

/** Where each controller's per-command cgroups go: the daemon's own cgroup in that controller's hierarchy. */
export interface CgroupParents {
  version?: 1 | 2;
  pids?: string;
  memory?: string;
  /** Why a controller is missing. */
  reason?: string;
}

/** Pure: the daemon's cgroup per controller, from /proc/self/mountinfo and /proc/self/cgroup. Prefers cgroup v1
 * controllers where they are mounted (a hybrid host keeps pids and memory there and none in v2). */
export function cgroupParents(mountinfo: string, selfCgroup: string): CgroupParents {
  const mounts = parseMountinfo(mountinfo);
  const lines = selfCgroup
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [, , controllers, p] = /^(\d+):([^:]*):(.*)$/.exec(l) ?? [];
      return { controllers: controllers === undefined ? [] : controllers.split(","), path: p ?? "" };
    });
  const out: CgroupParents = {};
  for (const c of ["pids", "memory"] as const) {
    const m = mounts.find((x) => x.fstype === "cgroup" && x.options.includes(c));
    const own = lines.find((l) => l.controllers.includes(c));
    const dir = m && own ? mountedPath(m, own.path) : undefined;
    if (dir) {
      out[c] = dir;
      out.version = 1;
    }
  }
  if (out.pids || out.memory) return out;
  const v2 = ownV2Cgroup(mountinfo, selfCgroup);
  if ("reason" in v2) return { reason: "no cgroup hierarchy with the pids or memory controller is mounted" };
  return { version: 2, pids: v2.dir, memory: v2.dir };
}

export async function hostCgroupParents(): Promise<CgroupParents> {
  const off = cgroupsOffForTests();
  if (off) return { reason: off };
  try {
    const [mountinfo, self] = await Promise.all([readFile("/proc/self/mountinfo", "utf8"), readFile("/proc/self/cgroup", "utf8")]);
    return cgroupParents(mountinfo, self);
  } catch (e) {
    return { reason: `cannot read the daemon's cgroups (${(e as Error).message})` };
  }
}

/** Joins the cgroups named before `--`, then becomes the command: an argument array, no input of ours in the script. */
const JOIN_SCRIPT = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';
/** The exit code of the join step when the kernel refused the move (the command did not run). */
export const JOIN_FAILED_EXIT = 125;
/** After the command, its cgroup empties within a few milliseconds as the kernel reaps it: this long between tries to
 * remove it, for about a second at most. The runner need not wait for it before answering. */
const RELEASE_POLL_MS = 2;
const RELEASE_TRIES = 500;

/**
 * A command cgroup's name: the daemon's pid, by which the sweep knows a dead daemon's groups, and a random suffix,
 * unique among one daemon's commands without a counter kept in the module.
 */
export function commandCgroupName(pid = process.pid): string {
  return `tool-layer-${pid}-${uniqueSuffix()}`;
}

/** The daemon pid in a command cgroup's name; undefined for any other folder. */
export function commandCgroupPid(name: string): number | undefined {
  const m = /^tool-layer-(\d+)-\d+$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** The socket pairs a held sandbox takes after its pins: bwrap's --info-fd, then its --block-fd (see heldBwrapArgv). */
export const HELD_PIPES = 2;

/**
 * A bwrap command line started held: bwrap writes the host pid of the child it cloned to `firstFd` (--info-fd), and
 * that child sets up the whole sandbox, drops its capabilities, then waits for a byte on `firstFd + 1` (--block-fd)
 * before it goes on (chdir, setsid, the fork of the command under its init, exec). CommandCgroup.admit lets it go.
 */
export function heldBwrapArgv(argv: readonly string[], firstFd: number): string[] {
  return [argv[0], "--info-fd", String(firstFd), "--block-fd", String(firstFd + 1), ...argv.slice(1)];
}

/** The host pid of a held bwrap's child, from its --info-fd once closed; undefined when bwrap never cloned it. */
function sandboxChildPid(info: Readable): Promise<number | undefined> {
  return new Promise((resolve) => {
    let text = "";
    info.setEncoding("utf8");
    info.on("data", (d: string) => (text += d));
    info.on("error", () => undefined); // then it closes: what came is all there is
    info.once("close", () => {
      const m = /"child-pid":\s*(\d+)/.exec(text);
      resolve(m ? Number(m[1]) : undefined);
    });
  });
}

/** One command's cgroups (one per controller in v1, one in v2). */
export class CommandCgroup {
  constructor(readonly dirs: string[]) {}

  /** The argv that puts the process into these cgroups and then runs `argv`. */
  wrap(argv: readonly string[]): string[] {
    return ["/bin/sh", "-c", JOIN_SCRIPT, "sh", ...this.dirs.map((d) => path.join(d, "cgroup.procs")), "--", ...argv];
  }

  /** Moves process `pid` into these cgroups; one gone meanwhile (ESRCH: bwrap failed, or was killed) runs nothing more. */
  private async join(pid: number): Promise<void> {
    for (const d of this.dirs) {
      try {
        await writeFile(path.join(d, "cgroup.procs"), String(pid));
      } catch (e) {
        if (!isNodeError(e, "ESRCH")) throw e;
      }
    }
  }

  /**
   * Moves a bwrap started held (heldBwrapArgv; `info` and `block` are the daemon's ends of its two descriptors) into
   * these cgroups, then lets its child go on: so the command and all it starts are born inside, as with wrap(). The
   * kernel's move waits for an RCU grace period when no move happened on the machine for a few milliseconds (10-15 ms
   * here): wrap() pays it before bwrap starts, here it runs beside bwrap's own setup of the sandbox. bwrap is moved at
   * once, its child once --info-fd names it. Rejects when the kernel refuses a move: the child is still held then
   * (nothing of the command ran), and the caller kills it. One thing shows the difference: bwrap's child is cloned
   * (with its cgroup namespace) before its move, so the command's /proc/self/cgroup names its cgroup below the
   * daemon's (`/tool-layer-…`) where wrap() gave `/`; the limits, and what can reach them, are the same.
   */
  async admit(bwrapPid: number, info: Readable, block: Writable): Promise<void> {
    const outer = this.join(bwrapPid);
    outer.catch(() => undefined); // awaited below, after the child's pid
    const child = await sandboxChildPid(info);
    await outer;
    if (child !== undefined) await this.join(child);
    block.on("error", () => undefined); // bwrap ended meanwhile (a timeout, a bind that failed): nothing waits for it
    block.end("1");
  }

  /** Every process still in the cgroups (host pids). */
  async pids(): Promise<number[]> {
    const all = new Set<number>();
    for (const d of this.dirs) {
      const text = await readFile(path.join(d, "cgroup.procs"), "utf8").catch(() => "");
      for (const l of text.split("\n")) if (l) all.add(Number(l));
    }
    return [...all];
  }

  /** SIGKILLs whatever is left in the cgroups: a second way to leave nothing behind, beside the PID namespace. */
  async kill(): Promise<void> {
    for (const pid of await this.pids()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone already */
      }
    }
  }

  /** Kills what is left and removes the cgroups; false when one was still busy after RELEASE_TRIES (swept later). */
  async release(): Promise<boolean> {
    let ok = true;
    for (const d of this.dirs) {
      for (let i = 0; ; i++) {
        try {
          await rmdir(d);
          break;
        } catch (e) {
          if (isNodeError(e, "ENOENT")) break;
          if (!isNodeError(e, "EBUSY") || i >= RELEASE_TRIES) {
            ok = false;
            break;
          }
          await this.kill();
          await new Promise((r) => setTimeout(r, RELEASE_POLL_MS));
        }
      }
    }
    return ok;
  }
}

async function writeLimit(dir: string, file: string, value: string, optional = false): Promise<void> {
  try {
    await writeFile(path.join(dir, file), value);
  } catch (e) {
    if (optional && isNodeError(e, "ENOENT")) return;
    throw e;
  }
}

/** In cgroup v2 a child gets a controller only when its parent delegates it, which the kernel refuses (EBUSY) while
 * the parent holds processes itself, as the daemon's own cgroup does unless it is the root. */
async function enableV2Controllers(parent: string): Promise<void> {
  const enabled = await readFile(path.join(parent, "cgroup.subtree_control"), "utf8").catch(() => "");
  if (enabled.includes("pids") && enabled.includes("memory")) return;
  try {
    await writeFile(path.join(parent, "cgroup.subtree_control"), "+pids +memory");
  } catch (e) {
    const why = isNodeError(e, "EBUSY")
      ? "it holds processes itself (start the daemon in a cgroup of its own that delegates pids and memory)"
      : (e as Error).message;
    throw new Error(`cgroup v2: the daemon's cgroup ${parent} cannot give pids and memory to a child: ${why}`);
  }
}

/** Creates a command's cgroups with `limits`; throws (with the kernel's reason) when the machine does not allow it. */
export async function createCommandCgroup(parents: CgroupParents, limits: Limits): Promise<CommandCgroup> {
  const name = commandCgroupName();
  const dirs: string[] = [];
  const group = new CommandCgroup(dirs);
  try {
    if (parents.version === 2 && parents.pids) {
      await enableV2Controllers(parents.pids);
      const d = path.join(parents.pids, name);
      await mkdir(d);
      dirs.push(d);
      await writeLimit(d, "pids.max", String(limits.pids));
      await writeLimit(d, "memory.max", String(limits.memoryBytes));
      await writeLimit(d, "memory.swap.max", "0", true);
      return group;
    }
    if (parents.pids) {
      const d = path.join(parents.pids, name);
      await mkdir(d);
      dirs.push(d);
      await writeLimit(d, "pids.max", String(limits.pids));
    }
    if (parents.memory) {
      const d = path.join(parents.memory, name);
      await mkdir(d);
      dirs.push(d);
      await writeLimit(d, "memory.limit_in_bytes", String(limits.memoryBytes));
      // Memory plus swap no larger than memory: the limit is not dodged by swapping.
      await writeLimit(d, "memory.memsw.limit_in_bytes", String(limits.memoryBytes), true);
    }
    return group;
  } catch (e) {
    await group.release();
    throw e;
  }
}

/**
 * The next command's cgroups, made ahead (when the terminal starts, then as each command takes its own), so that a
 * command does not wait for their mkdir and limit writes. One made ahead and not taken is removed by close().
 */
export class CgroupReserve {
  private next?: Promise<CommandCgroup>;
  private closed = false;

  constructor(
    private readonly parents: CgroupParents,
    private readonly limits: Limits,
  ) {}

  /** Starts making the next one, unless one is made or on its way. */
  warm(): void {
    if (this.next || this.closed) return;
    this.next = createCommandCgroup(this.parents, this.limits);
    this.next.catch(() => undefined); // take() makes another then
  }

  /** Fresh, empty cgroups with the limits: the ones made ahead (or, when those failed, made now); throws as
   * createCommandCgroup does. */
  async take(): Promise<CommandCgroup> {
    const ahead = this.next;
    this.next = undefined;
    const group = await (ahead ?? Promise.reject(new Error("none made ahead"))).catch(() => createCommandCgroup(this.parents, this.limits));
    this.warm();
    return group;
  }

  async close(): Promise<void> {
    this.closed = true;
    const ahead = this.next;
    this.next = undefined;
    await (await ahead?.catch(() => undefined))?.release();
  }
}

/** Removes the empty cgroups of daemons that died before releasing them (a SIGKILLed daemon cannot clean up). */
export async function sweepStaleCgroups(parents: CgroupParents): Promise<void> {
  for (const parent of new Set([parents.pids, parents.memory].filter((p): p is string => !!p))) {
    const entries = await readdir(parent).catch(() => [] as string[]);
    for (const e of entries) {
      const pid = commandCgroupPid(e);
      if (pid === undefined || pidAlive(pid)) continue;
      await rmdir(path.join(parent, e)).catch(() => undefined);
    }
  }
}
