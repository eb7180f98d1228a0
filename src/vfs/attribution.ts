import type { FsChange } from "./events.js";
import type { Actor, ToolWrite } from "./types.js";
import type { SessionViews } from "./views.js";

/**
 * How long after an attributed operation ends its changes may still arrive: the engine's own batch (parcel: 50 ms)
 * plus chokidar's stat of each path, with room for a loaded machine. Writes wait for the operation (WorktreeLock), so
 * what arrives meanwhile is the operation's unless a process outside the daemon wrote at that very moment.
 */
export const ATTRIBUTION_GRACE_MS = 300;
/** A tool write whose change never arrives (the file was changed again before the window) is forgotten after this. */
const TOOL_WRITE_TTL_MS = 30_000;
/** A closed window no change was seen in is dropped after this even if no window is processed (no events at all). */
const WINDOW_TTL_MS = 60_000;
/**
 * `stale_sessions` names at most this many sessions per change (sorted), and `stale_sessions_omitted` counts the rest: a
 * Gateway runs a handful of sessions per workspace, and with 1,000 changes a line this keeps the worst line near 1 MB
 * (50,000 sessions that once read a file made each save an 830 KB line).
 */
export const STALE_SESSIONS_MAX = 32;

/** Who made a change and who had not seen it: the attribution half of an `fs.changed` change (SPEC 7). */
export type Attributed = Pick<FsChange, "origin" | "by" | "tool" | "stale_sessions" | "stale_sessions_omitted">;

/** An operation whose changes are its actor's (a git checkout, a terminal command): open, or closed at `closedAt`. */
interface Window extends Actor {
  openedAt: number;
  closedAt?: number;
}

interface Expected extends ToolWrite {
  at: number;
}

/**
 * Who made a change, and who has not seen it. A tool write is announced (expect) with the hash it brings: the change
 * with that path and hash is the writer's, and the writer is not stale. Otherwise a change seen while an operation's
 * window is open, or within ATTRIBUTION_GRACE_MS after it closed, is the operation's actor's (who stays stale: an
 * operation such as a checkout writes content its session never saw). Anything else is external. No IO.
 */
export class Attribution {
  private readonly expected = new Map<string, Expected[]>();
  private readonly windows = new Set<Window>();

  constructor(private readonly views: Pick<SessionViews, "staleSessions">) {}

  /** A tool is about to write `rel` (root-relative real path): the change that brings `hash` is its own. */
  expect(write: ToolWrite): void {
    const list = this.expected.get(write.rel) ?? [];
    list.push({ ...write, at: Date.now() });
    this.expected.set(write.rel, list);
  }

  /** Changes seen from now until close() and ATTRIBUTION_GRACE_MS after are `actor`'s. */
  openWindow(actor: Actor): { close(): void } {
    const now = Date.now();
    for (const w of this.windows) if (w.closedAt !== undefined && now - w.closedAt > WINDOW_TTL_MS) this.windows.delete(w);
    const window: Window = { session: actor.session, tool: actor.tool, openedAt: now };
    this.windows.add(window);
    return {
      close: () => {
        window.closedAt ??= Date.now();
      },
    };
  }

  /**
   * `rel`: the path the change is reported under; `real`: the file it is (a link's target), whose views decide who is
   * stale; `seenAt`: when its event (or its folder's) came, undefined when it has none.
   */
  attribute(rel: string, real: string, hash: string | null, seenAt: number | undefined): Attributed {
    const list = this.expected.get(rel);
    const i = list ? list.findIndex((w) => w.hash === hash) : -1;
    if (list && i >= 0) {
      const writer = list[i];
      list.splice(0, i + 1); // this write and any older one the same window overtook
      if (!list.length) this.expected.delete(rel);
      return { origin: "tool", by: writer.session, tool: writer.tool, ...this.stale(real, hash, writer.session) };
    }
    const window = this.windowAt(seenAt);
    if (window) return { origin: "tool", by: window.session, tool: window.tool, ...this.stale(real, hash) };
    return { origin: "external", by: null, tool: null, ...this.stale(real, hash) };
  }

  /** Whether a change of `rel` may turn out a tool's (its content is then worth keeping for the history). */
  mayBeTools(rel: string): boolean {
    return this.windows.size > 0 || this.expected.has(rel);
  }

  /**
   * After a window processed at `flushedAt`: every later event is seen after it, so a window closed longer than the
   * grace before it can take no more changes; announced writes past their TTL are dropped.
   */
  prune(flushedAt: number): void {
    for (const w of this.windows) if (w.closedAt !== undefined && w.closedAt + ATTRIBUTION_GRACE_MS < flushedAt) this.windows.delete(w);
    const cutoff = Date.now() - TOOL_WRITE_TTL_MS;
    for (const [rel, list] of this.expected) {
      const kept = list.filter((w) => w.at >= cutoff);
      if (kept.length) this.expected.set(rel, kept);
      else this.expected.delete(rel);
    }
  }

  /** The open (or just closed) window a change seen at `at` falls in; the oldest first. */
  /**
   * The window a change seen at `at` belongs to: one that was open then (the latest opened, if several), else the one
   * that closed last before it, within the grace (the watcher trails the disk). An operation that just ended must not
   * take the changes of the one that started after it.
   */
  private windowAt(at: number | undefined): Window | undefined {
    if (at === undefined) return undefined;
    let open: Window | undefined;
    let trailing: Window | undefined;
    for (const w of this.windows) {
      if (at < w.openedAt) continue;
      if (w.closedAt === undefined || at <= w.closedAt) {
        if (!open || w.openedAt >= open.openedAt) open = w;
      } else if (at <= w.closedAt + ATTRIBUTION_GRACE_MS && (!trailing || w.closedAt > trailing.closedAt!)) {
        trailing = w;
      }
    }
    return open ?? trailing;
  }

  private stale(real: string, hash: string | null, writer?: string): Pick<Attributed, "stale_sessions" | "stale_sessions_omitted"> {
    const all = this.views.staleSessions(real, hash, writer);
    if (all.length <= STALE_SESSIONS_MAX) return { stale_sessions: all };
    return { stale_sessions: all.slice(0, STALE_SESSIONS_MAX), stale_sessions_omitted: all.length - STALE_SESSIONS_MAX };
  }
}
