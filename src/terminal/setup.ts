import type { RepoLocation } from "../git/location.js";
import type { PathResolver } from "../paths.js";
import { type HostSandboxPaths, hostSandboxPaths } from "../platform/sandbox/host.js";
import { supervisedRun } from "../platform/sandbox/probe.js";
import type { Supervisor } from "../platform/supervisor.js";
import { type CgroupParents, type Limits, createCommandCgroup, defaultLimits, hostCgroupParents, sweepStaleCgroups } from "./cgroup-limits.js";
import { type SandboxProbe, probeSandbox } from "./sandbox-probe.js";

/** What the terminal learns about the machine once, when the daemon starts. */
export interface Setup {
  probe: SandboxProbe;
  host: HostSandboxPaths;
  parents: CgroupParents;
  limits: Limits;
  /** Which limits each command gets. */
  held: { pids: boolean; memory: boolean; reason?: string };
  /** The root's git dir and common dir when they lie outside it (the root is a subfolder or a linked worktree). */
  outerGitDirs: string[];
}

/** What the terminal's setup needs from the workspace around it. */
export interface SetupHost {
  readonly root: string;
  readonly paths: PathResolver;
  readonly processes: Supervisor;
  readonly git: { tryLocation(): Promise<RepoLocation | null> };
  log(message: string): void;
}

/** A command's cgroups without the sandbox (--terminal-sandbox off, or no bwrap): whether one can be made here. */
async function tryLimits(parents: CgroupParents, limits: Limits): Promise<Setup["held"]> {
  try {
    const group = await createCommandCgroup(parents, limits);
    await group.release();
    return { pids: !!parents.pids, memory: !!parents.memory };
  } catch (e) {
    return { pids: false, memory: false, reason: `cannot create a cgroup for a command: ${(e as Error).message}` };
  }
}

async function outerGitDirs(ws: SetupHost): Promise<string[]> {
  const repo = await ws.git.tryLocation();
  return repo ? [repo.gitDir, repo.commonDir].filter((d) => !ws.paths.isInside(d)) : [];
}

/** Probes the sandbox (the daemon's real argv on `true`), the host's paths and cgroups; sweeps a dead daemon's cgroups. */
export async function prepareSetup(ws: SetupHost, opts: { network: boolean; limits?: Limits; hide?: readonly string[] }): Promise<Setup> {
  const limits = opts.limits ?? defaultLimits();
  const [host, parents] = await Promise.all([hostSandboxPaths(), hostCgroupParents()]);
  if (!parents.reason) await sweepStaleCgroups(parents);
  const probe = await probeSandbox(supervisedRun(ws.processes, "terminal probe"), {
    root: ws.root,
    network: opts.network,
    limits,
    parents,
    host,
    hide: opts.hide,
  });
  let held = probe.limits;
  if (!probe.available && !parents.reason) held = await tryLimits(parents, limits); // unsandboxed commands get them too
  return { probe, host, parents, limits, held, outerGitDirs: await outerGitDirs(ws) };
}
