/**
 * Picks a watch engine by name, loading only its module (each pulls in its watcher library). Apart from engine.ts, the
 * contract the engines import, so no engine imports the module that loads it.
 */
import type { WatchEngine } from "./engine.js";
import type { WatcherEngine } from "./types.js";
import type { Subscriber } from "./watcher-client.js";

/** `host`: where parcel's subscriptions run (the VFS's watcher host). */
export async function createEngine(name: WatcherEngine, host: Subscriber): Promise<WatchEngine> {
  if (name === "chokidar") return new (await import("./chokidar-engine.js")).ChokidarEngine();
  return new (await import("./parcel-engine.js")).ParcelEngine(host);
}
