/**
 * What the daemon and its file watcher host (watcher-host.ts) say to each other, one JSON object a line.
 * Requests (`r` numbers them, `s` names a subscription):
 *   {"r":1,"op":"subscribe","s":1,"dir":"/abs","ignore":["rel",…]}   {"r":2,"op":"unsubscribe","s":1}   {"r":3,"op":"ping"}
 *   {"r":4,"op":"drained"}
 * Lines back: an answer `{"r":1}` or `{"r":1,"error":{message,code?}}` (`{"r":4,"drained":true}`); a batch of events
 * `{"s":1,"e":["cpath",…]}`; a subscription's error `{"s":1,"error":{…}}`. A batch is compact: each event is its kind's letter (c, u, d) and its
 * path relative to the subscription's folder (one parcel batch of a 100,000-file checkout is one line), or absolute
 * (it starts with `/`) when it lies outside.
 */
export type EventKind = "create" | "update" | "delete";

export interface HostEvent {
  path: string;
  type: EventKind;
}

export interface ErrorInfo {
  message: string;
  code?: string;
}

/**
 * `ping` is answered at once, after every batch the host wrote before it: see WatcherHost.ping. `drained` is answered
 * with `drained:true` once parcel's threads were seen asleep, after every batch of the events they had read by then (or
 * `false` when they were not asleep within 50 ms): see WatcherHost.drained.
 */
export type RequestBody = { op: "subscribe"; s: number; dir: string; ignore: string[] } | { op: "unsubscribe"; s: number } | { op: "ping" } | { op: "drained" };
export type HostRequest = RequestBody & { r: number };

export type HostLine = { r: number; error?: ErrorInfo; drained?: boolean } | { s: number; e: string[] } | { s: number; error: ErrorInfo };

const LETTER: Record<EventKind, string> = { create: "c", update: "u", delete: "d" };
const KIND: Record<string, EventKind> = { c: "create", u: "update", d: "delete" };

const prefixOf = (dir: string) => (dir.endsWith("/") ? dir : `${dir}/`);

export function encodeEvents(dir: string, events: readonly HostEvent[]): string[] {
  const prefix = prefixOf(dir);
  return events.map((e) => LETTER[e.type] + (e.path.startsWith(prefix) ? e.path.slice(prefix.length) : e.path));
}

/** The events of a batch; an entry of an unknown kind is left out. */
export function decodeEvents(dir: string, encoded: readonly string[]): HostEvent[] {
  const prefix = prefixOf(dir);
  const events: HostEvent[] = [];
  for (const entry of encoded) {
    const type = KIND[entry[0]];
    if (!type) continue;
    const p = entry.slice(1);
    events.push({ path: p.startsWith("/") ? p : prefix + p, type });
  }
  return events;
}

/** An Error as the other side threw it (message and errno code: isWatchLimitError reads both). */
export function errorFrom(info: ErrorInfo): Error {
  return Object.assign(new Error(info.message), info.code ? { code: info.code } : {});
}
