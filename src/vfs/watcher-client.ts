import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { AttachedChild, ServerChild, Supervisor } from "../platform/supervisor.js";
import { type HostEvent, type HostLine, type RequestBody, decodeEvents, errorFrom } from "./watcher-protocol.js";

/** @parcel/watcher's subscribe, as ParcelEngine uses it: the watcher host's. */
export type SubscribeCallback = (err: Error | null, events: HostEvent[]) => unknown;
export interface Subscription {
  unsubscribe(): Promise<void>;
}
export interface Subscriber {
  subscribe(dir: string, fn: SubscribeCallback, opts: { ignore: string[] }): Promise<Subscription>;
}

/**
 * Past this an unsubscribe is not waited for: parcel's unsubscribe after its poll thread died once deadlocked the thread
 * that called it. The host is killed instead, and its other subscriptions fail and are restarted as after any death.
 */
const UNSUBSCRIBE_TIMEOUT_MS = 5_000;
/** Lines of the host's stderr kept to say why it died. */
const STDERR_LINES_KEPT = 5;

/** The host's script: built beside this module; vitest runs the sources, where only the build (dist/) has it. */
function hostScript(): string {
  const beside = fileURLToPath(new URL("./watcher-host.js", import.meta.url));
  return existsSync(beside) ? beside : fileURLToPath(new URL("../../dist/src/vfs/watcher-host.js", import.meta.url));
}

/** The host's answer to a request. */
type Answer = Extract<HostLine, { r: number }>;

interface Host {
  child: ServerChild;
  /** The supervisor's stop of it. */
  stop: AttachedChild["stop"];
  pending: Map<number, { resolve: (answer: Answer) => void; reject: (e: Error) => void }>;
  stderr: string[];
  gone: boolean;
}

/**
 * The daemon's side of the file watcher host (watcher-host.ts): one child process, started through the supervisor when
 * the first subscription needs it and again after it died, holding every parcel subscription of the VFS. When it dies
 * each of its subscriptions gets an error, so the VFS restarts its engines (a fresh host) and reports what changed
 * meanwhile, as after any lost watcher.
 */
export class WatcherHost implements Subscriber {
  private host?: Host;
  private requests = 0;
  private subscriptions = 0;
  private readonly callbacks = new Map<number, { dir: string; fn: SubscribeCallback; host: Host }>();
  private closed = false;

  constructor(
    private readonly processes: Pick<Supervisor, "attach">,
    private readonly cwd: string,
    private readonly log: (message: string) => void,
  ) {}

  /** The host's pid while it runs. */
  get pid(): number | undefined {
    return this.host && !this.host.gone ? this.host.child.pid : undefined;
  }

  /** Starts the host ahead of the first subscription (its start overlaps the VFS's listing). */
  warm(): void {
    if (!this.closed) this.running();
  }

  async subscribe(dir: string, fn: SubscribeCallback, opts: { ignore: string[] }): Promise<Subscription> {
    const host = this.running();
    const s = ++this.subscriptions;
    this.callbacks.set(s, { dir, fn, host });
    try {
      await this.request(host, { op: "subscribe", s, dir, ignore: opts.ignore });
    } catch (e) {
      this.callbacks.delete(s);
      throw e;
    }
    return { unsubscribe: () => this.unsubscribe(s) };
  }

  /**
   * Resolves once the host has answered: its answer comes after every batch it wrote before, so those are in. Resolves
   * at once without a running host.
   */
  ping(): Promise<void> {
    if (!this.host || this.host.gone) return Promise.resolve();
    return this.request(this.host, { op: "ping" }).then(
      () => undefined,
      () => undefined,
    );
  }

  /**
   * True once the host saw parcel's threads asleep after this call: every event the kernel queued before it is then in
   * (its batch came before the answer), or held in parcel's batch, which only follows a batch that came within its last
   * half second. False without a running host, or when its threads were busy for a while (the caller waits as before).
   */
  drained(): Promise<boolean> {
    if (!this.host || this.host.gone) return Promise.resolve(false);
    return this.request(this.host, { op: "drained" }).then(
      (answer) => answer.drained === true,
      () => false,
    );
  }

  /** Ends the host (the VFS has stopped every engine): it exits when its stdin ends. */
  close(): void {
    this.closed = true;
    this.host?.child.stdin.end();
  }

  private async unsubscribe(s: number): Promise<void> {
    const sub = this.callbacks.get(s);
    this.callbacks.delete(s);
    if (!sub || sub.host.gone) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), UNSUBSCRIBE_TIMEOUT_MS)));
    const answered = this.request(sub.host, { op: "unsubscribe", s }).catch(() => undefined);
    const outcome = await Promise.race([answered, late]);
    clearTimeout(timer);
    if (outcome === "late" && !sub.host.gone) {
      this.log(`the file watcher host did not unsubscribe within ${UNSUBSCRIBE_TIMEOUT_MS} ms; killing it`);
      void sub.host.stop({ graceMs: 0 });
    }
  }

  private request(host: Host, req: RequestBody): Promise<Answer> {
    if (host.gone) return Promise.reject(new Error("the file watcher host is gone"));
    const r = ++this.requests;
    return new Promise((resolve, reject) => {
      host.pending.set(r, { resolve, reject });
      host.child.stdin.write(`${JSON.stringify({ r, ...req })}\n`);
    });
  }

  private running(): Host {
    if (this.closed) throw new Error("the file watcher is stopped");
    if (this.host && !this.host.gone) return this.host;
    const { child, stop } = this.processes.attach({ cmd: process.execPath, args: [hostScript()], cwd: this.cwd, stdin: "pipe", label: "file watcher host" });
    const host: Host = { child, stop, pending: new Map(), stderr: [], gone: false };
    this.host = host;
    child.stdin.on("error", () => undefined); // it died: its exit says so
    createInterface({ input: child.stdout }).on("line", (line) => this.onLine(host, line));
    createInterface({ input: child.stderr }).on("line", (line) => {
      host.stderr.push(line.slice(0, 300));
      if (host.stderr.length > STDERR_LINES_KEPT) host.stderr.shift();
    });
    child.once("error", (e) => this.gone(host, `could not start: ${e.message}`));
    // 'close', not 'exit': the batches it wrote before it died are read first.
    child.once("close", (code, signal) => this.gone(host, signal ? `was killed by ${signal}` : `exited with code ${code}`));
    return host;
  }

  private onLine(host: Host, line: string): void {
    let msg: HostLine;
    try {
      msg = JSON.parse(line) as HostLine;
    } catch {
      return; // not ours (a warning on stdout): the protocol's lines are JSON
    }
    if ("r" in msg) {
      const waiter = host.pending.get(msg.r);
      host.pending.delete(msg.r);
      if (msg.error) waiter?.reject(errorFrom(msg.error));
      else waiter?.resolve(msg);
      return;
    }
    const sub = this.callbacks.get(msg.s);
    if (!sub || sub.host !== host) return;
    if ("error" in msg) sub.fn(errorFrom(msg.error), []);
    else sub.fn(null, decodeEvents(sub.dir, msg.e));
  }

  /** The host is gone: what waited on it fails, and so does every subscription it held (the VFS restarts them). */
  private gone(host: Host, how: string): void {
    if (host.gone) return;
    host.gone = true;
    const said = host.stderr.length ? `; it said: ${host.stderr.join(" | ")}` : "";
    const error = new Error(`the file watcher host ${how}${said}`);
    for (const waiter of host.pending.values()) waiter.reject(error);
    host.pending.clear();
    if (this.closed) return;
    for (const [s, sub] of [...this.callbacks]) {
      if (sub.host !== host) continue;
      this.callbacks.delete(s);
      sub.fn(error, []);
    }
  }
}
