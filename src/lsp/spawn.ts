/**
 * How a language server process is started and killed (supervised-spawn.ts makes one on the process supervisor), and
 * its process tree as /proc has it.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
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
