/** What a watcher engine reports for one path. */
export type RawKind = "create" | "update" | "delete";

/** What `fs.changed` reports (SPEC 7). */
export type ChangeKind = "created" | "modified" | "deleted";

export interface RawChange<P = string> {
  path: P;
  kind: RawKind;
}

export interface CoalescedChange<P = string> {
  path: P;
  kind: ChangeKind;
}

/**
 * Folds a window's raw events into at most one change per path, in order of first appearance (VS Code's
 * coalesceEvents): create then delete cancels out, delete then create is a modification, a modification after a
 * create stays a creation, anything then delete is a deletion. Pure: no IO, no clock.
 */
export function coalesce<P>(events: readonly RawChange<P>[]): CoalescedChange<P>[] {
  const byPath = new Map<P, ChangeKind | null>();
  for (const { path, kind } of events) {
    const prev = byPath.get(path);
    byPath.set(path, merge(prev, kind));
  }
  const out: CoalescedChange<P>[] = [];
  for (const [path, kind] of byPath) if (kind) out.push({ path, kind });
  return out;
}

/** `null`: the events so far cancel out (created and deleted within the window). */
function merge(prev: ChangeKind | null | undefined, next: RawKind): ChangeKind | null {
  if (prev === undefined) return next === "create" ? "created" : next === "update" ? "modified" : "deleted";
  if (prev === null) return next === "delete" ? null : "created"; // it was not there before the window: still new
  switch (next) {
    case "create":
      return prev === "deleted" ? "modified" : prev;
    case "update":
      return prev === "deleted" ? "modified" : prev;
    case "delete":
      return prev === "created" ? null : "deleted";
  }
}
