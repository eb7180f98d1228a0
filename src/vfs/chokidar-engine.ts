import { type FSWatcher, watch } from "chokidar";
import { ENGINE_BATCH_DELAY_MS, type RawEvent, type WatchEngine, type WatchRequest } from "./engine.js";

/** chokidar@5 (`--watcher chokidar`): the engine the design named; one watch per file and folder, slower to start. */
export class ChokidarEngine implements WatchEngine {
  readonly name = "chokidar" as const;
  readonly batchDelayMs = ENGINE_BATCH_DELAY_MS.chokidar;
  private watcher?: FSWatcher;
  private folders = 0;
  private skip = new Set<string>();
  private request?: WatchRequest;

  async start(request: WatchRequest, onEvents: (events: RawEvent[]) => void, onError: (error: Error, keptWatching?: boolean) => void): Promise<void> {
    this.request = request;
    this.skip = new Set(request.ignoreDirs());
    const w = watch(request.dir, {
      ignoreInitial: true,
      followSymlinks: false,
      // atomic would hold every delete back 100 ms to guess at editors' rename dance; coalesce() does that per window.
      atomic: false,
      ignored: (abs, stats) => abs !== request.dir && (this.skip.has(abs) || request.ignored(abs, stats ? stats.isDirectory() : undefined)),
    });
    this.watcher = w;
    const emit = (kind: RawEvent["kind"]) => (p: string) => onEvents([{ path: p, kind }]);
    w.on("add", emit("create"))
      .on("addDir", (p) => {
        this.folders++;
        emit("create")(p);
      })
      .on("change", emit("update"))
      .on("unlink", emit("delete"))
      .on("unlinkDir", (p) => {
        this.folders--;
        emit("delete")(p);
      })
      // chokidar reports a path it could not watch and goes on with the rest: nothing to restart.
      .on("error", (e) => onError(e instanceof Error ? e : new Error(String(e)), true));
    await new Promise<void>((resolve) => w.once("ready", () => resolve()));
    this.folders = Object.keys(w.getWatched()).length;
  }

  /** chokidar follows moved folders itself; only folders that are no longer ignored need adding. */
  async refresh(): Promise<void> {
    if (!this.watcher || !this.request) return;
    const now = new Set(this.request.ignoreDirs());
    const freed = [...this.skip].filter((d) => !now.has(d));
    this.skip = now;
    if (freed.length) this.watcher.add(freed);
  }

  watchedFolders(): number {
    return this.folders;
  }

  async stop(): Promise<void> {
    const w = this.watcher;
    this.watcher = undefined;
    await w?.close();
  }
}
