import { type HostSandboxPaths, hostSandboxPaths } from "../platform/sandbox/host.js";
import { type BwrapProbe, type RunFn, type ProbeRun, probeBwrap } from "../platform/sandbox/probe.js";
import {
  type CgroupParents,
  type CommandCgroup,
  JOIN_FAILED_EXIT,
  type Limits,
  createCommandCgroup,
  defaultLimits,
  hostCgroupParents,
} from "./cgroup-limits.js";
import { sandboxEnv, sandboxHome, terminalPolicy } from "./sandbox.js";

export { type HostSandboxPaths, hostSandboxPaths, openPins } from "../platform/sandbox/host.js";
export { type RunFn, hasDisableUserns } from "../platform/sandbox/probe.js";

export interface SandboxProbe extends BwrapProbe {
  network: boolean;
  /** Which per-command limits hold, and why the others do not. */
  limits: { pids: boolean; memory: boolean; reason?: string };
}

/**
 * Whether commands can run sandboxed here, with which limits: the one bubblewrap probe (platform/sandbox/probe.ts) on
 * the daemon's real terminal policy running `true` (nothing the workspace controls), its first try inside a
 * per-command cgroup when one can be made, so a cgroup that cannot be joined shows.
 * `host` and `parents`: what the caller read already (read here when not given).
 */
export async function probeSandbox(
  run: RunFn,
  opts: { root: string; network: boolean; limits?: Limits; parents?: CgroupParents; host?: HostSandboxPaths; hide?: readonly string[] },
): Promise<SandboxProbe> {
  const host = opts.host ?? (await hostSandboxPaths());
  const homePath = host.homePath;
  const env = sandboxEnv({ base: process.env, home: sandboxHome({ root: opts.root, homePath }) });
  let limits: SandboxProbe["limits"] = { pids: false, memory: false, reason: "no sandbox" };
  let group: CommandCgroup | undefined;
  /** The first try, once bwrap is known to be there: inside a command's cgroup, or without one when it cannot be joined. */
  const first = async (argv: readonly string[], plain: (argv: readonly string[]) => Promise<ProbeRun>): Promise<ProbeRun> => {
    const parents = opts.parents ?? (await hostCgroupParents());
    limits = { pids: false, memory: false, reason: parents.reason };
    if (!parents.reason) {
      try {
        group = await createCommandCgroup(parents, opts.limits ?? defaultLimits());
        limits = { pids: !!parents.pids, memory: !!parents.memory };
        if (!parents.pids || !parents.memory) limits.reason = `only the ${parents.pids ? "pids" : "memory"} controller is available`;
      } catch (e) {
        limits = { pids: false, memory: false, reason: `cannot create a cgroup for a command: ${(e as Error).message}` };
      }
    }
    if (!group) return plain(argv);
    const r = await plain(group.wrap(argv));
    if (r.code !== JOIN_FAILED_EXIT) return r;
    limits = { pids: false, memory: false, reason: `the kernel refused to move a process into the command's cgroup: ${r.stderr.trim().split("\n")[0]}` };
    return plain(argv);
  };
  try {
    const probe = await probeBwrap(run, {
      cwd: opts.root,
      env,
      first,
      policy: (disableUserns) =>
        terminalPolicy({
          root: opts.root,
          gitDirs: [],
          homePath,
          network: opts.network,
          cwd: opts.root,
          command: "true",
          hidden: host.hidden,
          keep: host.keep,
          disableUserns,
          hide: opts.hide,
        }),
    });
    return { ...probe, network: opts.network, limits };
  } finally {
    await group?.release();
  }
}
