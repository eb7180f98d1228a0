/**
 * Processes as Linux /proc has them: a process tree, whether a process still runs, whether a process group still has
 * a member that runs, and a tree's memory. A zombie counts as gone: it runs nothing, and a reaper that is slow (or a
 * PID 1 that never reaps) must not make a stopped child look alive.
 */
import { readFileSync, readdirSync } from "node:fs";

/** `/proc/PID/stat`'s fields after the command name (which may hold spaces and parentheses): state, ppid, pgrp, … */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

const running = (fields: string[] | undefined): fields is string[] => fields !== undefined && fields[0] !== "Z" && fields[0] !== "X";

function pids(): number[] {
  try {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

/** Running, not a zombie: a reaped-late child of a dead server is gone for every purpose here. */
export function isAlive(pid: number): boolean {
  return running(statFields(pid));
}

/** A process and all its descendants, for memory figures and for what a stop must see gone. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of pids()) {
    const ppid = Number(statFields(pid)?.[1]);
    if (!Number.isNaN(ppid)) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
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

/** Whether a process of group `pgid` still runs (its leader gone or not). */
export function groupAlive(pgid: number): boolean {
  return pids().some((pid) => {
    const fields = statFields(pid);
    return running(fields) && Number(fields[2]) === pgid;
  });
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
