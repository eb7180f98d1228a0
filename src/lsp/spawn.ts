/**
 * How a language server process is started and killed. The daemon's process supervisor supplies its own SpawnServer
 * (its group, its env policy, killed with the daemon); spawnInGroup is the stand-in until then and in tests.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface SpawnedServer {
  process: ChildProcessWithoutNullStreams;
  /** Kills the server and everything it started (tsserver under typescript-language-server), at once. */
  kill(): void;
  /** In a PID namespace of its own (the sandbox): the daemon's pid means nothing there, so initialize sends none. */
  isolated?: boolean;
}

export type SpawnServer = (command: string, args: readonly string[], options: SpawnOptions) => SpawnedServer;

/** A process group of its own, killed as a whole, so tsserver dies with its typescript-language-server. */
export const spawnInGroup: SpawnServer = (command, args, options) => {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: "pipe", detached: true });
  return {
    process: child,
    kill() {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone; the leader may still need its own signal if it was never a group leader.
        try {
          child.kill("SIGKILL");
        } catch {
          /* already gone */
        }
      }
    },
  };
};

/** `/proc/PID/stat`'s fields after the command name (which may hold spaces and parentheses). */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Running, not a zombie: a reaped-late child of a dead server is gone for every purpose here. */
export function isAlive(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== undefined && fields[0] !== "Z" && fields[0] !== "X";
}

/** A process and all its descendants (Linux /proc), for memory figures and for checking that nothing outlived a stop. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [root];
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = Number(statFields(Number(name))?.[1]);
    if (!Number.isNaN(ppid)) children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Resident memory of a process tree in bytes, from VmRSS (a process that exited meanwhile counts 0). */
export function treeRss(root: number): number {
  let total = 0;
  for (const pid of processTree(root)) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      /* exited */
    }
  }
  return total;
}
