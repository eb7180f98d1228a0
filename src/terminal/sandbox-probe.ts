import { closeSync, constants, openSync, readlinkSync } from "node:fs";
import { lstat, readFile, realpath } from "node:fs/promises";
import os from "node:os";
import { type CgroupParents, type CommandCgroup, JOIN_FAILED_EXIT, type Limits, createCommandCgroup, defaultLimits, hostCgroupParents } from "./cgroup-limits.js";
import { ToolError } from "../errors.js";
import { FALLBACK_HOME, HIDDEN_DIRS, buildSandboxArgv, sandboxEnv, sandboxHome } from "./sandbox.js";

export interface RunOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Set when the program could not be started (ENOENT: not installed). */
  error?: NodeJS.ErrnoException;
}

/** Runs a short-lived program to completion: injected, so the probe can go through the daemon's process supervisor. */
export type RunFn = (file: string, args: readonly string[], opts: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs: number }) => Promise<RunOutcome>;

export interface SandboxProbe {
  available: boolean;
  /** Why the sandbox is not available: bwrap missing, user namespaces off, or bwrap's own words. */
  reason?: string;
  /** `bubblewrap 0.8.0`. */
  version?: string;
  network: boolean;
  /** Whether `--disable-userns` works here (bwrap 0.8 and later): pass it on as SandboxOptions.disableUserns. */
  disableUserns: boolean;
  /** Which per-command limits hold, and why the others do not. */
  limits: { pids: boolean; memory: boolean; reason?: string };
}

/** A sandbox that starts in tens of milliseconds; much longer means something is wrong, not slow. */
const PROBE_TIMEOUT_MS = 10_000;

export interface HostSandboxPaths {
  /** The HIDDEN_DIRS that are directories here (not links to one another, not missing). */
  hidden: string[];
  /** /etc/resolv.conf's target when it lies under a hidden dir (systemd-resolved), so DNS works with network on. */
  keep: string[];
  /** The daemon's home when it is a directory, else FALLBACK_HOME. */
  homePath: string;
}

async function isRealDir(p: string): Promise<boolean> {
  return (await lstat(p).catch(() => null))?.isDirectory() ?? false;
}

/** What the sandbox argv needs to know about this host; read once when the daemon starts. */
export async function hostSandboxPaths(): Promise<HostSandboxPaths> {
  const hidden: string[] = [];
  for (const d of HIDDEN_DIRS) if (await isRealDir(d)) hidden.push(d);
  const target = await realpath("/etc/resolv.conf").catch(() => "");
  const keep = hidden.some((d) => target.startsWith(d + "/")) ? [target] : [];
  const home = os.homedir();
  return { hidden, keep, homePath: (await isRealDir(home)) ? home : FALLBACK_HOME };
}

/**
 * Opens the folders a sandbox pins, each as itself: O_NOFOLLOW refuses a symlink at the end, and the descriptor's own
 * path must be the one asked for, so no symlink swapped in above it since the walk leads elsewhere. A folder that moved
 * or went since the walk (a background job) fails the launch: the sandbox would not hold what the preview showed.
 */
export function openPins(folders: readonly string[]): number[] {
  const fds: number[] = [];
  let folder = "";
  try {
    for (folder of folders) {
      fds.push(openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW));
      if (readlinkSync(`/proc/self/fd/${fds.at(-1)}`) !== folder) throw new Error("moved");
    }
    return fds;
  } catch {
    for (const fd of fds) closeSync(fd);
    throw new ToolError("BUSY", `${folder} changed while the sandbox was being set up (moved, removed or replaced by a link); nothing ran. Run the command again.`);
  }
}

async function sysctl(name: string): Promise<string | undefined> {
  return (await readFile(`/proc/sys/${name.replaceAll(".", "/")}`, "utf8").catch(() => undefined))?.trim();
}

/** What the kernel says about user namespaces, for a reason a person can act on. */
async function usernsHint(): Promise<string> {
  const hints: string[] = [];
  if ((await sysctl("user.max_user_namespaces")) === "0") hints.push("user.max_user_namespaces=0");
  if ((await sysctl("kernel.unprivileged_userns_clone")) === "0") hints.push("kernel.unprivileged_userns_clone=0");
  if ((await sysctl("kernel.apparmor_restrict_unprivileged_userns")) === "1") hints.push("kernel.apparmor_restrict_unprivileged_userns=1");
  return hints.length ? ` (${hints.join(", ")})` : "";
}

const USERNS_FAILURE = /new namespace|uid map|unshare|clone|Operation not permitted|Permission denied/i;

async function failureReason(r: RunOutcome): Promise<string> {
  if (r.error?.code === "ENOENT") return "bubblewrap (bwrap) is not installed: install the bubblewrap package";
  if (r.error) return `bwrap could not be started: ${r.error.message}`;
  const said = r.stderr.trim().split("\n")[0] || (r.signal ? `killed by ${r.signal}` : `exit ${r.code}`);
  if (USERNS_FAILURE.test(said)) return `bwrap cannot create its namespaces here: user namespaces are off or restricted${await usernsHint()}: ${said}`;
  return `bwrap failed: ${said}`;
}

/** bwrap learned `--disable-userns` in 0.8.0. */
export function hasDisableUserns(version: string): boolean {
  const m = /(\d+)\.(\d+)/.exec(version);
  return !!m && (Number(m[1]) > 0 || Number(m[2]) >= 8);
}

/**
 * Whether commands can run sandboxed here, with which limits: runs the daemon's real sandbox argv on `true` (nothing
 * the workspace controls), inside a per-command cgroup when one can be made, so a cgroup that cannot be joined shows.
 * `host` and `parents`: what the caller read already (read here when not given).
 */
export async function probeSandbox(run: RunFn, opts: { root: string; network: boolean; limits?: Limits; parents?: CgroupParents; host?: HostSandboxPaths; hide?: readonly string[] }): Promise<SandboxProbe> {
  const version = await run("bwrap", ["--version"], { env: process.env, cwd: opts.root, timeoutMs: PROBE_TIMEOUT_MS });
  if (version.error || version.code !== 0) {
    return { available: false, reason: await failureReason(version), network: opts.network, disableUserns: false, limits: { pids: false, memory: false, reason: "no sandbox" } };
  }
  let disableUserns = hasDisableUserns(version.stdout);
  const host = opts.host ?? (await hostSandboxPaths());
  const homePath = host.homePath;
  const argvFor = (disable: boolean) =>
    buildSandboxArgv({ root: opts.root, gitDirs: [], homePath, network: opts.network, cwd: opts.root, command: "true", hidden: host.hidden, keep: host.keep, disableUserns: disable, hide: opts.hide });
  let argv = argvFor(disableUserns);
  const env = sandboxEnv({ base: process.env, home: sandboxHome({ root: opts.root, homePath }) });
  const parents = opts.parents ?? (await hostCgroupParents());
  let limits: SandboxProbe["limits"] = { pids: false, memory: false, reason: parents.reason };
  let group: CommandCgroup | undefined;
  if (!parents.reason) {
    try {
      group = await createCommandCgroup(parents, opts.limits ?? defaultLimits());
      limits = { pids: !!parents.pids, memory: !!parents.memory };
      if (!parents.pids || !parents.memory) limits.reason = `only the ${parents.pids ? "pids" : "memory"} controller is available`;
    } catch (e) {
      limits = { pids: false, memory: false, reason: `cannot create a cgroup for a command: ${(e as Error).message}` };
    }
  }
  try {
    const runOpts = { env, cwd: opts.root, timeoutMs: PROBE_TIMEOUT_MS };
    let r = await run(group ? group.wrap(argv)[0] : argv[0], (group ? group.wrap(argv) : argv).slice(1), runOpts);
    if (group && r.code === JOIN_FAILED_EXIT) {
      limits = { pids: false, memory: false, reason: `the kernel refused to move a process into the command's cgroup: ${r.stderr.trim().split("\n")[0]}` };
      r = await run(argv[0], argv.slice(1), runOpts);
    }
    if (r.code !== 0 && disableUserns) {
      // A kernel or setup where the nested namespace trick fails: the sandbox still holds without it.
      const without = await run(argv[0], argvFor(false).slice(1), runOpts);
      if (without.code === 0) [r, disableUserns, argv] = [without, false, argvFor(false)];
    }
    const out: SandboxProbe = { available: r.code === 0, version: version.stdout.trim(), network: opts.network, disableUserns, limits };
    if (!out.available) out.reason = await failureReason(r);
    return out;
  } finally {
    await group?.release();
  }
}
