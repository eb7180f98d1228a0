import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmdirSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import { isNodeError } from "../errors.js";
import { pidAlive } from "./pid-alive.js";

/**
 * Containment of the children that may start children of their own (SPEC 1): each is started inside a cgroup v2 of
 * its own, under one tree per supervisor. A process group is left by anything that calls setsid() (a daemonizing
 * server, `setsid cmd &` in a hook); a cgroup is not: its processes' descendants are born in it and only a write to
 * another cgroup's `cgroup.procs` moves them out. `cgroup.kill` (Linux 5.14) SIGKILLs a whole subtree at once,
 * forks in flight included, which is what the supervisor does when a child ends and the watchdog when the daemon dies.
 *
 * No controller is needed (the v2 hierarchy only tracks here; on a hybrid host the limits stay in v1), so the tree
 * costs a directory per child (an empty one is kept for the next). The child must be inside before it runs any code of
 * its own, and Node cannot clone into a cgroup: the daemon steps into the new cgroup, spawns (synchronous: the fork
 * inherits the cgroup) and steps back. Two writes, where a wrapper process would cost an exec and stand between the
 * caller and the child's stdio, exit status and signals (and a PID namespace would make the child its init, which
 * ignores SIGTERM without a handler).
 */

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

/** Pure: the daemon's own cgroup v2 directory, from /proc/self/mountinfo and /proc/self/cgroup, or why there is none. */
export function ownV2Cgroup(mountinfo: string, selfCgroup: string): { dir: string } | { reason: string } {
  const v2 = parseMountinfo(mountinfo).find((m) => m.fstype === "cgroup2");
  if (!v2) return { reason: "no cgroup v2 hierarchy is mounted" };
  const line = selfCgroup.split("\n").find((l) => l.startsWith("0::"));
  if (line === undefined) return { reason: "the daemon has no cgroup v2 (no 0:: line in /proc/self/cgroup)" };
  const dir = mountedPath(v2, line.slice(3));
  return dir ? { dir } : { reason: `the daemon's cgroup ${line.slice(3)} is not visible under ${v2.point}` };
}

function hostOwnV2Cgroup(): { dir: string } | { reason: string } {
  try {
    return ownV2Cgroup(readFileSync("/proc/self/mountinfo", "utf8"), readFileSync("/proc/self/cgroup", "utf8"));
  } catch (e) {
    return { reason: `cannot read the daemon's cgroup (${(e as Error).message})` };
  }
}

const TREE_PREFIX = "tool-layer-tree-";
const STALE_TREE = new RegExp(`^${TREE_PREFIX}(\\d+)-\\d+$`);
/** After cgroup.kill the processes take a few milliseconds to exit: between tries to remove their cgroup. */
const EMPTY_POLL_MS = 5;
/** Empty leaves kept for the next children (a pool's worth of git calls), instead of a mkdir and rmdir each. */
const MAX_SPARE_LEAVES = 8;
let sequence = 0;

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
    entries = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
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
 * A supervisor's cgroup tree (`<daemon's cgroup>/tool-layer-tree-PID-N`), made on the first child that needs it. When
 * the machine has no usable cgroup v2 (none mounted, read-only, no permission, a kernel without cgroup.kill), children
 * are contained by their process group only, `state()` says why and the log says it once.
 */
export class CgroupTree {
  /** The tree's directory, where the daemon's own cgroup v2 is known; it exists once `made`. */
  readonly dir?: string;
  private readonly home?: string;
  private made = false;
  private unavailable?: string;
  private leaves = 0;
  private readonly spare: Leaf[] = [];
  /** The daemon's own cgroup.procs, open while the tree is: written after every spawn. */
  private homeFd?: number;

  /** `own`: the daemon's cgroup v2 directory (default: the one /proc says), or why there is none. */
  constructor(private readonly log: (message: string) => void = () => undefined, own = hostOwnV2Cgroup()) {
    if ("reason" in own) {
      this.unavailable = own.reason;
      return;
    }
    this.home = own.dir;
    this.dir = path.join(own.dir, `${TREE_PREFIX}${process.pid}-${++sequence}`);
  }

  state(): Containment {
    return this.unavailable !== undefined || !this.dir ? { kind: "process-group", reason: this.unavailable ?? "" } : { kind: "cgroup", tree: this.dir };
  }

  /**
   * Runs `spawn` (which must start the child synchronously) from inside a new leaf cgroup, so the child is born in it.
   * Without containment, or when the kernel refuses, the child starts outside any and `leaf` is undefined.
   */
  spawnInside<T>(spawn: () => T): { value: T; leaf?: Leaf } {
    const leaf = this.newLeaf();
    if (!leaf) return { value: spawn() };
    try {
      this.move(leaf.dir);
    } catch (e) {
      rmdirQuietly(leaf.dir);
      this.disable(`the daemon cannot move into the cgroup ${leaf.dir}: ${(e as Error).message}`);
      return { value: spawn() };
    }
    let value: T;
    let back: boolean;
    try {
      value = spawn();
    } finally {
      back = this.moveBack();
    }
    // Still in the leaf, the daemon would die with it: the child goes uncontained (and so do the next ones).
    return back ? { value, leaf } : { value };
  }

  /** Returns the daemon to its own cgroup; false (containment off from now on) when the kernel refuses. */
  private moveBack(): boolean {
    try {
      writeSync(this.homeFd!, String(process.pid));
      return true;
    } catch (e) {
      this.disable(`the daemon cannot move back to its cgroup ${this.home}: ${(e as Error).message}`);
      return false;
    }
  }

  /** Kills every leaf at once and removes the tree once it is empty. */
  async close(): Promise<void> {
    if (this.homeFd !== undefined) closeSync(this.homeFd);
    this.homeFd = undefined;
    this.spare.length = 0;
    if (this.made && this.dir) await killCgroupTree(this.dir);
  }

  /**
   * After its child ended: kills what is left in the leaf and removes it once empty (a busy one goes with close()), or
   * keeps it for the next child when nothing was left.
   */
  async release(leaf: Leaf, boundMs = 1_000): Promise<void> {
    if (!leaf.populated() && this.homeFd !== undefined && this.spare.length < MAX_SPARE_LEAVES) {
      this.spare.push(leaf); // empty, and nothing outside can enter it
      return;
    }
    leaf.kill();
    const deadline = Date.now() + boundMs;
    while (leaf.populated() && Date.now() < deadline) await new Promise((r) => setTimeout(r, EMPTY_POLL_MS));
    rmdirQuietly(leaf.dir);
  }

  /** Makes the tree now (the daemon's start), so `state()` and the log tell at once whether containment works. */
  prepare(): void {
    if (this.unavailable !== undefined) this.disable(this.unavailable);
    else this.make();
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
      this.homeFd = openSync(path.join(this.home!, "cgroup.procs"), "w");
      return true;
    } catch (e) {
      this.disable(`cannot create a cgroup under ${path.dirname(this.dir)}: ${(e as Error).message}`);
      return false;
    }
  }

  private newLeaf(): Leaf | undefined {
    if (!this.make() || this.unavailable !== undefined || this.homeFd === undefined) return undefined; // closed
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

  /** From now on children start outside any cgroup; those already in one stay there. */
  private disable(reason: string): void {
    this.unavailable = reason;
    this.log(`child processes are contained by their process group only; one that starts a session of its own (setsid) can outlive the daemon: ${reason}`);
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
