import {
  type JSONRPCMessage,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  SdkError,
  SdkErrorCode,
  type Transport,
  deserializeMessage,
  serializeMessage,
} from "@modelcontextprotocol/client";
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import type { AttachedChild, Exit, ServerChild, Supervisor } from "../platform/supervisor.js";

/**
 * The SDK's stdio transport over a child process that the daemon's supervisor starts: the SDK's StdioClientTransport
 * spawns by itself, which would put MCP servers outside the daemon's process supervision (groups, cgroups, environment,
 * death with the daemon). This one is handed a spawn function and uses the SDK's own message framing (one JSON-RPC
 * message a line); it ends the server through the supervisor's stop, the one way a child is ended.
 */

export interface SpawnSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  /** The entry's own variables; the spawner puts them over its base environment. */
  env: Readonly<Record<string, string>>;
}

/** Starts a server process with its three streams piped, as a child of the daemon's supervisor (supervisedSpawn). */
export type SpawnServer = (spec: SpawnSpec) => AttachedChild;

/**
 * Servers as children of `processes`, in a process group (and cgroup) of their own, so `close()` reaches the servers
 * that `npx` or a shell start in turn; with the SDK's default inherited variables (HOME, LOGNAME, PATH, SHELL, TERM,
 * USER) under the entry's, so a server sees no secret it was not given.
 */
export function supervisedSpawn(processes: Pick<Supervisor, "attach">, label: string): SpawnServer {
  return (spec) =>
    processes.attach({ cmd: spec.command, args: spec.args, cwd: spec.cwd, exactEnv: { ...getDefaultEnvironment(), ...spec.env }, stdin: "pipe", label });
}

/** Kept of a server's stderr for errors and `mcp_servers`: the last lines say why it died, the rest is noise. */
export const STDERR_TAIL_CHARS = 8 * 1024;
/**
 * After stdin is closed, this long to exit by itself (an MCP server's clean shutdown) before the supervisor's stop
 * (SIGTERM, then SIGKILL after its grace).
 */
const EXIT_GRACE_MS = 1_000;
/**
 * After the server process exited, this long for its pipes to close. A grandchild that inherited stdout keeps them
 * open; the connection must still be reported closed, so the rest of the tree is killed and the close is taken as done.
 */
const PIPE_CLOSE_GRACE_MS = 250;
/** A line of stdout longer than this is no MCP message the daemon wants in memory (the SDK's own bound, 10 MB). */
export const MAX_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;
/** Garbage lines are quoted in warnings up to this length. */
const GARBAGE_QUOTE_CHARS = 200;

export interface ChildTransportOptions {
  /** A stdout line that is not a JSON-RPC message: reported, skipped; the connection goes on. */
  onGarbage?: (line: string) => void;
}

export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ServerChild | null = null;
  private handle: AttachedChild | null = null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private stderr = "";
  private closedFired = false;
  private closing: Promise<void> | null = null;
  private exitInfo: Exit | null = null;
  private readonly exited: Promise<void>;
  private markExited!: () => void;
  /** Set when the transport itself ended the connection (a line over the bound), for the error it reports. */
  private fatal: string | null = null;

  constructor(
    private readonly spec: SpawnSpec,
    private readonly spawnServer: SpawnServer,
    private readonly opts: ChildTransportOptions = {},
  ) {
    this.exited = new Promise((resolve) => (this.markExited = resolve));
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** How the process ended, once it has. */
  get exit(): Exit | null {
    return this.exitInfo;
  }

  /** The last STDERR_TAIL_CHARS characters of stderr, from a line start where one is in reach. */
  stderrTail(): string {
    return this.stderr;
  }

  /** Why the transport ended the connection itself, if it did. */
  get fatalReason(): string | null {
    return this.fatal;
  }

  start(): Promise<void> {
    if (this.child) throw new Error("ChildProcessTransport already started");
    return new Promise((resolve, reject) => {
      let handle: AttachedChild;
      try {
        handle = this.spawnServer(this.spec);
      } catch (e) {
        reject(e);
        return;
      }
      const child = handle.child;
      [this.child, this.handle] = [child, handle];
      let started = false;
      child.once("spawn", () => {
        started = true;
        resolve();
      });
      child.once("error", (e) => {
        // ENOENT and the like: the process never ran, so no exit or close follows.
        if (!started) {
          this.exitInfo = { code: null, signal: null };
          this.markExited();
          reject(e);
          this.fireClose();
        } else this.onerror?.(e);
      });
      child.stdout.on("data", (chunk: Buffer) => this.onStdout(chunk));
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (s: string) => this.onStderr(s));
      // Writes after the server died fail with EPIPE: that is the exit, reported through close, not a crash of ours.
      child.stdin.on("error", (e) => this.onerror?.(e));
      child.stdout.on("error", (e) => this.onerror?.(e));
      child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        this.markExited();
        const t = setTimeout(() => {
          void handle.stop({ graceMs: 0 });
          this.fireClose();
        }, PIPE_CLOSE_GRACE_MS);
        t.unref();
        child.once("close", () => clearTimeout(t));
      });
      child.once("close", () => this.fireClose());
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || !stdin.writable || this.exitInfo) throw new SdkError(SdkErrorCode.NotConnected, "Not connected");
    if (!stdin.write(serializeMessage(message))) {
      await new Promise<void>((resolve) => {
        const done = () => {
          stdin.off("drain", done);
          stdin.off("close", done);
          resolve();
        };
        stdin.on("drain", done);
        stdin.on("close", done);
      });
    }
  }

  /**
   * Ends the server: stdin closed, a grace to exit, then the supervisor's stop (SIGTERM and SIGKILL to its tree).
   * Resolves once it exited.
   */
  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    const child = this.child;
    if (child && !this.exitInfo) {
      child.stdin.end();
      if (!(await this.exitWithin(EXIT_GRACE_MS))) void this.handle?.stop();
      await this.exited;
    }
    // The leader is gone; whatever it left in its group or cgroup goes with it (not awaited: a grandchild that left
    // both could hold the pipes open, and the connection is closed all the same).
    void this.handle?.stop({ graceMs: 0 });
    this.fireClose();
  }

  private exitWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), ms);
      void this.exited.then(() => {
        clearTimeout(t);
        resolve(true);
      });
    });
  }

  private fireClose(): void {
    if (this.closedFired) return;
    this.closedFired = true;
    this.pending = [];
    this.onclose?.();
  }

  private onStderr(s: string): void {
    const all = this.stderr + s;
    if (all.length <= STDERR_TAIL_CHARS) {
      this.stderr = all;
      return;
    }
    const cut = all.slice(-STDERR_TAIL_CHARS);
    const nl = cut.indexOf("\n");
    this.stderr = nl >= 0 && nl < cut.length - 1 ? cut.slice(nl + 1) : cut;
  }

  private onStdout(chunk: Buffer): void {
    if (this.fatal) return; // the connection is being closed; the rest of the flood is not read into memory
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      const line = this.pending.length ? Buffer.concat([...this.pending, piece]) : piece;
      this.pending = [];
      this.pendingBytes = 0;
      start = nl + 1;
      this.onLine(line.toString("utf8"));
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > MAX_LINE_BYTES) {
        this.fatal = `the server wrote a line over ${MAX_LINE_BYTES} bytes on stdout`;
        this.pending = [];
        this.onerror?.(new Error(this.fatal));
        void this.close();
        return;
      }
      this.pending.push(rest);
    }
  }

  private onLine(raw: string): void {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch {
      this.opts.onGarbage?.(line.length > GARBAGE_QUOTE_CHARS ? `${line.slice(0, GARBAGE_QUOTE_CHARS)}…` : line);
      return;
    }
    try {
      this.onmessage?.(message);
    } catch (e) {
      this.onerror?.(e as Error);
    }
  }
}
