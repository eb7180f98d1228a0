/**
 * The daemon's watchdog: a tiny process of its own that outlives a SIGKILL of the daemon long enough to kill every child
 * the daemon left (Node has no prctl(PR_SET_PDEATHSIG)). The daemon holds the write end of this process's stdin and
 * announces each child as it starts and ends:
 *   `+g PID`  a process group led by PID      `+p PID`  a single process      `- PID`  gone, forget it
 * When stdin ends (the daemon exited, cleanly or not) or the daemon is no longer its parent, every group and process
 * still listed gets SIGTERM, then SIGKILL, and so does the supervisor's cgroup tree (`--cgroup DIR`, cgroup-tree.ts):
 * what left its group with setsid() is still in it. Then the watchdog removes the tree and exits. It ignores SIGINT and
 * SIGTERM: a Ctrl-C meant for the daemon must not take away the one thing that cleans up after it.
 */
import { killCgroupTree } from "./cgroup-tree.js";

/** Between SIGTERM and SIGKILL: git removes its index.lock on SIGTERM, never on SIGKILL. */
const TERM_GRACE_MS = 300;
/** How often the parent is checked, in case stdin stays open (a pipe leaked to a grandchild). */
const PARENT_CHECK_MS = 500;

/** Its state lives in this run, not in the module: the watchdog is one process per daemon, started with its argv. */
function watch(): void {
  const tracked = new Map<number, "g" | "p">();
  const treeAt = process.argv.indexOf("--cgroup");
  const tree = treeAt > 0 ? process.argv[treeAt + 1] : undefined;
  const parent = process.ppid;
  let buffered = "";
  let ending = false;

  function signalAll(signal: NodeJS.Signals): void {
    for (const [pid, kind] of tracked) {
      try {
        process.kill(kind === "g" ? -pid : pid, signal);
      } catch {
        tracked.delete(pid); // already gone
      }
    }
  }

  function end(): void {
    if (ending) return;
    ending = true;
    signalAll("SIGTERM");
    setTimeout(
      () => {
        signalAll("SIGKILL");
        if (!tree) process.exit(0);
        void killCgroupTree(tree).finally(() => process.exit(0));
      },
      tracked.size ? TERM_GRACE_MS : 0,
    );
  }

  process.on("SIGINT", () => undefined);
  process.on("SIGTERM", () => undefined);
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const m = /^([+-])([gp]?) (\d+)$/.exec(line);
      if (!m) continue;
      const pid = Number(m[3]);
      if (m[1] === "+") tracked.set(pid, m[2] === "g" ? "g" : "p");
      else tracked.delete(pid);
    }
  });
  process.stdin.on("end", end);
  process.stdin.on("error", end);
  setInterval(() => {
    if (process.ppid !== parent) end();
  }, PARENT_CHECK_MS).unref();
}

watch(); // stdin keeps the process alive until it ends.
