import { existsSync, readFileSync, readdirSync } from "node:fs";

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls a condition that has no event to wait on (a process ending, a file another process writes), within a bound. */
export async function until(test: () => boolean, what: string, boundMs = 10_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const waitDead = (pid: number, boundMs?: number) => until(() => !alive(pid), `process ${pid} to end`, boundMs);

/** The trimmed content of a file a child process writes, once it ends with a newline. */
export async function waitForFile(file: string, boundMs?: number): Promise<string> {
  await until(() => existsSync(file) && readFileSync(file, "utf8").endsWith("\n"), `${file} to be written`, boundMs);
  return readFileSync(file, "utf8").trim();
}

/** Every process (pid, parent, process group, command line) from /proc. */
export function processes(): { pid: number; ppid: number; pgid: number; cmd: string }[] {
  const out: { pid: number; ppid: number; pgid: number; cmd: string }[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      out.push({ pid: Number(name), ppid: Number(fields[1]), pgid: Number(fields[2]), cmd });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The pids of `root` and every descendant of it, from /proc. */
export function descendants(root: number): number[] {
  const all = processes();
  const found = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) if (found.has(p.ppid) && !found.has(p.pid)) found.add(p.pid), (grew = true);
  }
  found.delete(root);
  return [...found];
}

/** Resident memory of a process in MB (VmRSS), or 0 once it is gone. */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}
