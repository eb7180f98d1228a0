import path from "node:path";
import { ENGINE_BATCH_DELAY_MS, type RawEvent, type WatchEngine, type WatchRequest } from "./engine.js";
import type { Subscriber, Subscription } from "./watcher-client.js";

/** How long a replaced subscription keeps reporting after its successor is live: several of parcel's 50 ms batches. */
const REFRESH_OVERLAP_MS = 500;

/**
 * @parcel/watcher: one inotify watch per folder, its tree crawled natively; the default engine. It runs in the file
 * watcher host (watcher-client.ts), a process of its own, never in the daemon: see watcher-host.ts for why.
 */
export class ParcelEngine implements WatchEngine {
  readonly name = "parcel" as const;
  readonly batchDelayMs = ENGINE_BATCH_DELAY_MS.parcel;
  private sub?: Subscription;
  private request?: WatchRequest;
  private onEvents?: (events: RawEvent[]) => void;
  private onError?: (error: Error) => void;
  /**
   * parcel shares one native watcher per (folder, options): a refresh must differ in its options to get a fresh crawl,
   * so it adds a never-matching ignore entry numbered by generation.
   */
  private generation = 0;
  /** Subscriptions replaced by a refresh, kept for REFRESH_OVERLAP_MS. */
  private readonly retiring = new Set<Subscription>();

  constructor(private readonly watcher: Subscriber) {}

  async start(request: WatchRequest, onEvents: (events: RawEvent[]) => void, onError: (error: Error) => void): Promise<void> {
    this.request = request;
    this.onEvents = onEvents;
    this.onError = onError;
    this.sub = await this.subscribe();
  }

  /**
   * After a folder is moved into the tree, parcel watches only its top and reports later changes under a moved folder by
   * its old path: a fresh subscription (taken before the old one is dropped, so nothing is missed) re-reads the tree.
   */
  async refresh(): Promise<void> {
    if (!this.sub) return;
    const old = this.sub;
    this.sub = await this.subscribe();
    // The new subscription's crawl takes in silently what appeared while it ran, and the old one drops the batch it was
    // still gathering if unsubscribed now: kept a while, it reports those (twice-seen changes drop out by hash).
    this.retiring.add(old);
    const timer = setTimeout(() => void this.retire(old), REFRESH_OVERLAP_MS);
    timer.unref();
  }

  private async retire(sub: Subscription): Promise<void> {
    if (!this.retiring.delete(sub)) return;
    await sub.unsubscribe().catch(() => undefined);
  }

  watchedFolders(): undefined {
    return undefined;
  }

  async stop(): Promise<void> {
    const sub = this.sub;
    this.sub = undefined;
    await Promise.all([...this.retiring].map((old) => this.retire(old)));
    await sub?.unsubscribe();
  }

  private subscribe(): Promise<Subscription> {
    const req = this.request!;
    const ignore = req
      .ignoreDirs()
      .map((d) => path.relative(req.dir, d))
      .filter((d) => d && !d.startsWith(".."));
    if (this.generation > 0) ignore.push(`.tool-layer-refresh-${this.generation}-never-matches`);
    this.generation++;
    return this.watcher.subscribe(
      req.dir,
      (err, events) => {
        if (err) this.onError?.(err);
        else if (events.length) this.onEvents?.(events.map((e) => ({ path: e.path, kind: e.type })));
      },
      { ignore },
    );
  }
}
