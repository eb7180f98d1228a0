import type { RawEvent } from "./engine.js";

/**
 * Raw events are gathered this long before one `fs.changed` line goes out (VS Code's FILE_CHANGES_HANDLER_DELAY),
 * counting the time the engine itself held them (parcel: 50 ms), so the window's own timer waits only the rest.
 */
export const WINDOW_MS = 75;
/**
 * A window with this many raw events (over 650 a second) is a flood (a checkout, a build, an unpacked archive): the
 * next window is longer, so a flood that trickles in over seconds (chokidar stats each file) is still a few lines.
 */
export const FLOOD_EVENTS = 50;
/** The window while flooding: a 10,000-file checkout lands in a handful of lines instead of one per 75 ms. */
export const FLOOD_WINDOW_MS = 250;

/** One window's events, handed over together. */
export interface Batch {
  events: RawEvent[];
  /** When each absolute path last had a raw event: matched against attribution windows. */
  seenAt: Map<string, number>;
  /** The window had FLOOD_EVENTS or more events from an engine. */
  flooding: boolean;
  /** When the first engine event of this window came (a flood began then). */
  firstEventAt: number;
}

export interface EventWindowOptions {
  /** How long the engine held events before it handed them over (see WINDOW_MS). */
  engineDelayMs?: number;
  /** Whether a window must run even with no events (a flood in progress: the kernel may have dropped the rest). */
  again?: () => boolean;
  log?: (message: string) => void;
}

/**
 * Gathers raw events into windows and hands each to `run`, one at a time: events that come while a window is being
 * processed wait for a window of their own, so a slow window never turns into a line per event. Counts engine events
 * (not the VFS's own rescans) to tell a flood, and lengthens the next window while one lasts. No IO: tested with fake timers.
 */
export class EventWindow {
  private pending: RawEvent[] = [];
  /** Events in `pending` that came from an engine (not from a rescan): what flood detection counts. */
  private pendingFromEngine = 0;
  private seenAt = new Map<string, number>();
  private firstEventAt = 0;
  private timer?: NodeJS.Timeout;
  private busy = false;
  private flooding = false;
  private held = true;
  private stopped = false;
  private readonly idleWaiters: (() => void)[] = [];
  /** Settles when the window being processed is done. */
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly run: (batch: Batch) => Promise<void>,
    private readonly options: EventWindowOptions = {},
  ) {}

  /** Starts handing windows over; events pushed before (while the index was being listed) are kept and go now. */
  open(): void {
    this.held = false;
    if (this.pending.length) this.schedule();
  }

  /** `rescan`: events the VFS found itself (after a flood, a checkout); they do not count towards a flood. */
  push(events: readonly RawEvent[], rescan = false): void {
    if (this.stopped || !events.length) return;
    const now = Date.now();
    for (const e of events) {
      this.pending.push(e);
      this.seenAt.set(e.path, now);
    }
    if (!rescan) {
      if (this.pendingFromEngine === 0) this.firstEventAt = now;
      this.pendingFromEngine += events.length;
    }
    if (!this.held) this.schedule();
  }

  /** Resolves once every event pushed so far has been processed (and what that processing pushed, too). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const w of this.idleWaiters.splice(0)) w();
    await this.running;
  }

  private isIdle(): boolean {
    return this.stopped || (!this.pending.length && !this.busy && !this.timer);
  }

  private schedule(): void {
    if (this.timer || this.busy || this.stopped) return;
    const delay = this.flooding ? FLOOD_WINDOW_MS : Math.max(0, WINDOW_MS - (this.options.engineDelayMs ?? 0));
    this.timer = setTimeout(() => this.flush(), delay);
  }

  private flush(): void {
    this.timer = undefined;
    const batch: Batch = { events: this.pending, seenAt: this.seenAt, flooding: this.pendingFromEngine >= FLOOD_EVENTS, firstEventAt: this.firstEventAt };
    this.pending = [];
    this.seenAt = new Map();
    this.flooding = batch.flooding;
    this.pendingFromEngine = 0;
    this.busy = true;
    this.running = this.run(batch)
      .catch((e) => this.options.log?.(`file events lost a window: ${e instanceof Error ? e.stack : String(e)}`))
      .finally(() => {
        this.busy = false;
        // During a flood a window runs even when nothing came: the one that finds the flood over reads its folders again.
        if (this.pending.length || this.options.again?.()) this.schedule();
        if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
      });
  }
}
