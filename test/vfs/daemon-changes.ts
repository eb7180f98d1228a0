import { afterEach } from "vitest";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";

/** Every change of every fs.changed line so far. */
export function changes(d: DaemonClient): any[] {
  return d.events.filter((e) => e.event === "fs.changed").flatMap((e) => e.data.changes);
}

/** Resolves with the first change (seen or future) that passes `test`; on a timeout, says which changes were seen. */
export async function waitChange(d: DaemonClient, test: (c: any) => boolean, timeoutMs = 20_000): Promise<any> {
  try {
    const line = await d.waitFor((l) => l.event === "fs.changed" && l.data.changes.some(test), timeoutMs);
    return line.data.changes.find(test);
  } catch (e) {
    const seen = changes(d)
      .map((c) => `${c.kind}:${c.path}`)
      .slice(-20);
    throw new Error(`${(e as Error).message}\nlast changes seen: ${seen.join(" ")}`);
  }
}

/** Like waitChange, but only lines that come after this call. */
export async function nextChange(d: DaemonClient, test: (c: any) => boolean, timeoutMs = 20_000): Promise<any> {
  const old = new Set(d.lines);
  const line = await d.waitFor((l) => !old.has(l) && l.event === "fs.changed" && l.data.changes.some(test), timeoutMs);
  return line.data.changes.find(test);
}

/** A change of path `p` (of that kind, when given). */
export const at = (p: string, kind?: string) => (c: any) => c.path === p && (kind === undefined || c.kind === kind);

/**
 * A suite's daemons on committed temp repos (of `defaultFiles` unless a test names others) with one watcher engine,
 * closed (and their repos removed) after each test, started with `env` on top of the test's;
 * `cleanups` takes what else a test must undo, run newest first.
 */
export function committedDaemons(engine: string, defaultFiles: Record<string, string>, env: NodeJS.ProcessEnv = {}) {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  /** A daemon on a repo of `files`, committed after `commit` changed it. */
  async function setup(files = defaultFiles, commit?: (dir: string) => void) {
    const ws = tmpWorkspace({ git: true, files });
    cleanups.push(ws.cleanup);
    commit?.(ws.dir);
    git(ws.dir, "add", "-A");
    git(ws.dir, "commit", "-qm", "init");
    const d = await startDaemon(ws.dir, ["--watcher", engine], env);
    cleanups.push(() => d.close());
    return { dir: ws.dir, d };
  }
  return { cleanups, setup };
}
