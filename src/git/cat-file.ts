/**
 * One long-lived `git cat-file --batch-command` per repository (GitRepo.catFile): the line tools read blobs through it
 * instead of starting a git process per call. A start costs the daemon's main thread a fork of its whole heap (tens of
 * milliseconds on a busy machine, measured in issue 23); a request to a running one costs a pipe write.
 *
 * Only names that need no index go through it: a blob id, or `<commit>:<path>` (refs are read again on every request,
 * and a missing object sends git back to the object store, so new commits and packs are seen). `:0:path` would be
 * answered from the index the process read once; the index is read by index-file.ts instead.
 *
 * It is started through the supervisor (a ManagedChild: killed with the daemon, by its watchdog too), started again on
 * the next request when it died, and stopped with its repository. A repository found again elsewhere (its git dir was
 * re-created) gets a new one.
 */
import { ToolError } from "../errors.js";
import type { ManagedChild, Supervisor } from "../platform/supervisor.js";
import type { GitObject } from "./objects.js";
import { type GitHost, gitSpec } from "./run.js";

/** A request to a running cat-file is a pipe round trip; this bound only catches a process that hangs. */
const REQUEST_TIMEOUT_MS = 30_000;

interface Pending {
  /** Objects still to come, in the order asked. */
  left: number;
  /** `info` (header only) or `contents` per object. */
  kinds: ("info" | "contents")[];
  found: (GitObject | null)[];
  maxBytes: number;
  resolve: (found: (GitObject | null)[]) => void;
  reject: (e: Error) => void;
}

type Command = readonly ["info" | "contents", string];

/** The process ended with requests unanswered. */
class Ended extends ToolError {}

export class CatFile {
  private proc?: { managed: ManagedChild; key: string };
  private readonly pending: Pending[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  private stopped = false;

  constructor(private readonly host: GitHost & { readonly processes: Pick<Supervisor, "spawnLong"> }) {}

  /**
   * Headers of these objects (`info`): id, type and size, null for a name that resolves to nothing. `key` names the
   * repository it runs for (its git dir): another key restarts it.
   */
  info(key: string, names: readonly string[]): Promise<(GitObject | null)[]> {
    return this.ask(
      key,
      names.map((n): Command => ["info", n]),
      Infinity,
    );
  }

  /** Objects with their contents (over `maxBytes`: the header only, as readObjects does). */
  contents(key: string, names: readonly string[], maxBytes = Infinity): Promise<(GitObject | null)[]> {
    return this.ask(
      key,
      names.map((n): Command => ["contents", n]),
      maxBytes,
    );
  }

  /** Ends the process; a later request starts none. */
  async stop(): Promise<void> {
    this.stopped = true;
    const proc = this.proc;
    this.proc = undefined;
    await proc?.managed.stop();
  }

  /** A request, asked once more of a new process when the one it went to died meanwhile (killed, or the OOM killer). */
  private async ask(key: string, commands: readonly Command[], maxBytes: number): Promise<(GitObject | null)[]> {
    if (!commands.length) return [];
    // A name with a line break cannot be a line of the protocol; git could not answer it either.
    if (commands.some(([, n]) => /[\n\r]/.test(n))) return commands.map(() => null);
    return this.request(key, commands, maxBytes).catch((e: unknown) => {
      if (e instanceof Ended) return this.request(key, commands, maxBytes);
      throw e;
    });
  }

  private async request(key: string, commands: readonly Command[], maxBytes: number): Promise<(GitObject | null)[]> {
    const managed = await this.running(key);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => void managed.stop({ graceMs: 0 }), REQUEST_TIMEOUT_MS);
      this.pending.push({
        left: commands.length,
        kinds: commands.map(([k]) => k),
        found: [],
        maxBytes,
        resolve: (found) => (clearTimeout(timer), resolve(found)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      managed.child.stdin!.write(commands.map(([k, n]) => `${k} ${n}\n`).join(""));
    });
  }

  private async running(key: string): Promise<ManagedChild> {
    if (this.stopped) throw new ToolError("GIT_FAILED", "the repository's object reader was stopped (the daemon is shutting down).");
    if (this.proc && this.proc.key !== key) {
      void this.proc.managed.stop();
      this.proc = undefined;
    }
    if (this.proc) return this.proc.managed;
    const spec = { ...gitSpec({ repo: this.host }, ["cat-file", "--batch-command"]), stdin: "pipe" as const, label: "git cat-file (line tools)" };
    const managed = await this.host.processes.spawnLong(spec);
    const proc = { managed, key };
    this.proc = proc;
    this.buffer = Buffer.alloc(0);
    managed.child.stdin!.on("error", () => undefined); // it died: exited below fails what waits
    managed.child.stderr.resume();
    managed.child.stdout.on("data", (chunk: Buffer) => this.read(chunk));
    void managed.exited.then(() => {
      if (this.proc === proc) this.proc = undefined;
      const e = new Ended("GIT_FAILED", "git cat-file ended while reading objects; the repository may be damaged or was removed. Try again.");
      for (const p of this.pending.splice(0)) p.reject(e);
    });
    return managed;
  }

  /** Parses what arrived: per object `<sha> <type> <size>\n` (then `<content>\n` for contents), or `<name> missing\n`. */
  private read(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    let at = 0;
    while (this.pending.length) {
      const p = this.pending[0];
      const nl = this.buffer.indexOf(10, at);
      if (nl < 0) break;
      const m = /^([0-9a-f]{40,64}) (\S+) (\d+)$/.exec(this.buffer.toString("utf8", at, nl));
      const kind = p.kinds[p.found.length];
      if (!m) {
        p.found.push(null); // "<name> missing" or "<name> ambiguous"
        at = nl + 1;
      } else {
        const size = Number(m[3]);
        if (kind === "contents") {
          const start = nl + 1;
          if (this.buffer.length < start + size + 1) break; // the content is still coming
          // A copy: the buffer is reused for what comes next.
          p.found.push({ sha: m[1], type: m[2], size, ...(size <= p.maxBytes ? { bytes: Buffer.from(this.buffer.subarray(start, start + size)) } : {}) });
          at = start + size + 1;
        } else {
          p.found.push({ sha: m[1], type: m[2], size });
          at = nl + 1;
        }
      }
      if (--p.left === 0) {
        this.pending.shift();
        p.resolve(p.found);
      }
    }
    this.buffer = this.buffer.subarray(at);
  }
}
