/**
 * Keeps one language server running: started on first need, restarted on the next need after a crash, within a cap
 * (SPEC 10: "restarted (capped)"), then failed for good. Its state is what `info` shows.
 */
import type { PublishDiagnosticsParams } from "vscode-languageserver-protocol";
import { ToolError } from "../errors.js";
import { Supervisor } from "../platform/supervisor.js";
import { type ServerSpec, serverEnv } from "./servers.js";
import { type ProgressValue, ServerSession } from "./session.js";
import type { SpawnServer } from "./spawn.js";
import { supervisedSpawn } from "./supervised-spawn.js";

/** SPEC 10's cap: a server that crashes more often than this within RESTART_WINDOW_MS is left failed. */
export const MAX_RESTARTS = 3;
export const RESTART_WINDOW_MS = 60_000;
/** Both servers answer initialize in under a second here; this is for a machine under heavy load, then failed. */
export const INITIALIZE_TIMEOUT_MS = 30_000;

export type ClientState =
  | { kind: "idle" }
  | { kind: "starting" }
  | { kind: "ready" }
  | { kind: "crashed"; restarts: number; reason: string }
  | { kind: "failed"; reason: string }
  | { kind: "stopped" };

export function stateText(state: ClientState): string {
  switch (state.kind) {
    case "idle":
      return "not started";
    case "crashed":
      return `crashed (restarts ${state.restarts})`;
    case "failed":
      return `failed: ${state.reason}`;
    default:
      return state.kind;
  }
}

export interface KeeperOptions {
  root: string;
  spawn?: SpawnServer;
  env?: NodeJS.ProcessEnv;
  maxRestarts?: number;
  restartWindowMs?: number;
  /** The daemon's log: a server's processes still running after its stop are named there. */
  log?: (message: string) => void;
}

export interface KeeperHooks {
  /** A new server is up: give it every open document. */
  onReady(session: ServerSession): void;
  /** The server died (not stopped): nothing it said holds any more. */
  onExit(): void;
  onPublish(params: PublishDiagnosticsParams): void;
  onDiagnosticsRefresh(): void;
  onProgress(value: ProgressValue): void;
}

export class ServerKeeper {
  private session?: ServerSession;
  private starting?: Promise<ServerSession>;
  private current: ClientState = { kind: "idle" };
  private restarts = 0;
  private readonly crashes: number[] = [];
  private readonly spawn: SpawnServer;

  constructor(
    private readonly spec: ServerSpec,
    private readonly options: KeeperOptions,
    private readonly hooks: KeeperHooks,
  ) {
    // Without the daemon's (tests, benches): a supervisor of its own, which starts and kills the server the same way.
    this.spawn = options.spawn ?? supervisedSpawn(new Supervisor());
  }

  get state(): ClientState {
    return this.current;
  }

  /** Restarts after crashes so far (for info, also once the server is ready again). */
  get restartCount(): number {
    return this.restarts;
  }

  /** The running session, if it is up. */
  ready(): ServerSession | undefined {
    return this.current.kind === "ready" && this.session && !this.session.dead ? this.session : undefined;
  }

  /** The last session, up or not (its version, its pid until it is gone). */
  last(): ServerSession | undefined {
    return this.session;
  }

  /** The session, started or restarted as needed; LSP_UNAVAILABLE when it cannot be. */
  running(): Promise<ServerSession> {
    const ready = this.ready();
    if (ready) return Promise.resolve(ready);
    if (this.starting) return this.starting;
    if (this.current.kind === "ready" && this.session?.dead) {
      // Dead before its exit was reported (that waits for the last of stderr): a crash all the same, counted as one.
      this.crashes.push(Date.now());
      this.current = { kind: "crashed", restarts: this.restarts, reason: "it exited" };
      this.hooks.onExit();
    }
    const state = this.current;
    if (state.kind === "failed" || state.kind === "stopped") return Promise.reject(this.unavailable());
    if (state.kind === "crashed") {
      const window = this.options.restartWindowMs ?? RESTART_WINDOW_MS;
      const recent = this.crashes.filter((t) => t >= Date.now() - window).length;
      if (recent > (this.options.maxRestarts ?? MAX_RESTARTS)) {
        this.current = { kind: "failed", reason: `crashed ${recent} times within ${Math.round(window / 1000)} s; last: ${state.reason}` };
        return Promise.reject(this.unavailable());
      }
      this.restarts++;
    }
    this.starting = this.launch().finally(() => (this.starting = undefined));
    return this.starting;
  }

  async stop(): Promise<void> {
    this.current = { kind: "stopped" };
    await this.starting?.catch(() => {});
    const session = this.session;
    this.session = undefined;
    if (session) await this.stopSession(session);
  }

  /** Stops a session; what outlived its bounded wait is logged (see GONE_WAIT_MS). */
  private async stopSession(session: ServerSession): Promise<void> {
    const left = await session.stop();
    if (left.length) this.options.log?.(`${this.spec.name}: still running after its stop: pid ${left.join(", ")}; shutdown goes on without waiting for it`);
  }

  private unavailable(): ToolError {
    return new ToolError("LSP_UNAVAILABLE", `${this.spec.name} is ${stateText(this.current)}.`, { language: this.spec.language });
  }

  private async launch(): Promise<ServerSession> {
    this.current = { kind: "starting" };
    const env = serverEnv(this.spec, this.options.env ?? process.env, this.options.root);
    const session: ServerSession = new ServerSession(this.spec, this.options.root, this.spawn, env, {
      onExit: (reason) => this.onExit(session, reason),
      onPublish: (params) => this.hooks.onPublish(params),
      onDiagnosticsRefresh: () => this.hooks.onDiagnosticsRefresh(),
      onProgress: (value) => this.hooks.onProgress(value),
    });
    this.session = session;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        session.initialize(),
        new Promise(
          (_, reject) => (timer = setTimeout(() => reject(new Error(`no initialize answer within ${INITIALIZE_TIMEOUT_MS} ms`)), INITIALIZE_TIMEOUT_MS)),
        ),
        // A death can leave initialize pending for good (see ServerSession.whenDead).
        session.exited.then((reason) => Promise.reject(new Error(reason))),
      ]);
    } catch (e) {
      // A dead server fails initialize by the disposed connection; its exit says more.
      const exit = session.dead ? await session.exited : undefined;
      const said = session.lastLog() ? `; it said: ${session.lastLog()}` : "";
      const reason = session.fatal ?? (exit ? `it ${exit} while starting${said}` : `${e instanceof Error ? e.message : String(e)}${said}`);
      const crashed = session.dead && !session.fatal;
      await this.stopSession(session);
      if (this.current.kind === "starting") {
        this.current = crashed ? { kind: "crashed", restarts: this.restarts, reason } : { kind: "failed", reason };
      }
      throw new ToolError("LSP_UNAVAILABLE", `${this.spec.name} could not start: ${reason}`, { language: this.spec.language });
    } finally {
      clearTimeout(timer);
    }
    if (this.current.kind !== "starting") {
      await this.stopSession(session);
      throw this.unavailable();
    }
    this.current = { kind: "ready" };
    this.hooks.onReady(session);
    return session;
  }

  private onExit(session: ServerSession, reason: string): void {
    if (session !== this.session) return;
    if (this.current.kind === "crashed") {
      // Counted when a call found it dead first (running): the reason is the exit's.
      this.current = { ...this.current, reason };
      return;
    }
    if (session.fatal) this.current = { kind: "failed", reason: session.fatal };
    else if (this.current.kind === "ready") {
      this.crashes.push(Date.now());
      this.current = { kind: "crashed", restarts: this.restarts, reason };
    } else if (this.current.kind === "starting") this.crashes.push(Date.now());
    this.hooks.onExit();
  }
}
