import { ensureExcluded } from "../git/info-exclude.js";
import { CODEGRAPH_DIR, codegraphIndexed, initCommand, syncCommand } from "./codegraph.js";
import type { GitRepo } from "../git/repo.js";
import type { EventBus } from "../platform/bus.js";
import type { Supervisor } from "../platform/supervisor.js";

/** After the last file change, CodeGraph's sync waits this long: a save burst (a checkout, a build) is one sync of ~2.5 s. */
export const CODEGRAPH_SYNC_DEBOUNCE_MS = 1_000;

/** What the sync needs from the workspace around it (the passthrough's host is one). */
export interface CodegraphHost {
  readonly root: string;
  readonly bus: EventBus;
  readonly processes: Supervisor;
  /** The root's repository (CodeGraph's folder is kept out of git through it). */
  readonly git: GitRepo;
  /** Resolves once the watcher has reported every change made on disk before the call. */
  settle(): Promise<void>;
  log(message: string): void;
}

/**
 * Keeps CodeGraph's index fresh from the bus (SPEC 12): after files change (outside `.codegraph/`), its own incremental
 * sync runs, debounced and one at a time; a query first waits until what the disk has is in the index.
 */
export class CodegraphSync {
  private dirty = false;
  private timer?: NodeJS.Timeout;
  private running: Promise<void> = Promise.resolve();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly ws: CodegraphHost,
    private readonly stateDir: string,
  ) {
    this.unsubscribe = ws.bus.on("fs.changed", ({ changes }) => {
      if (!changes.some((c) => !c.path.startsWith(`${CODEGRAPH_DIR}/`))) return;
      this.dirty = true;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.sync(), CODEGRAPH_SYNC_DEBOUNCE_MS);
      this.timer.unref();
    });
  }

  /** The first index of the root, when `--codegraph on` asked for one; its folder kept out of git either way. */
  async ensureIndexed(): Promise<void> {
    await ensureExcluded({ repo: this.ws.git }, `/${CODEGRAPH_DIR}/`).catch((e: Error) =>
      this.ws.log(`could not keep ${CODEGRAPH_DIR}/ out of git: ${e.message}`),
    );
    if (codegraphIndexed(this.ws.root)) return;
    const cmd = initCommand(this.ws.root, this.stateDir);
    if (cmd) await this.run(cmd, "init");
  }

  /** Resolves once every change the disk has is in the index. */
  async fresh(): Promise<void> {
    await this.ws.settle();
    if (this.dirty) {
      clearTimeout(this.timer);
      await this.sync();
    }
    await this.running;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.unsubscribe();
  }

  private sync(): Promise<void> {
    this.running = this.running.then(async () => {
      if (!this.dirty) return;
      this.dirty = false;
      const cmd = syncCommand(this.ws.root, this.stateDir);
      if (cmd) await this.run(cmd, "sync");
    });
    return this.running;
  }

  private async run(cmd: { argv: string[]; env: Record<string, string>; cwd: string }, what: string): Promise<void> {
    const [bin, ...args] = cmd.argv;
    const r = await this.ws.processes
      .run({ cmd: bin, args, cwd: cmd.cwd, env: cmd.env, label: `codegraph ${what}` }, { timeoutMs: 600_000 })
      .catch((e: Error) => ({ code: null, stderr: e.message, timedOut: false }));
    if (r.code !== 0) this.ws.log(`codegraph ${what} failed (exit ${r.code}): ${r.stderr.trim().slice(-500)}`);
  }
}
