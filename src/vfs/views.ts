/** A session that made no call for this long is forgotten (SPEC 2), so stale_sessions stays bounded. */
export const SESSION_IDLE_MS = 60 * 60 * 1000;
/** Idle sessions are looked for at most this often (a sweep walks every view). */
const SWEEP_EVERY_MS = 60 * 1000;

/**
 * Which session last saw which version of which file (read or written), by root-relative real path (SPEC 3: a file
 * reached through a symlink is one file), and when each session last made a call.
 */
export class SessionViews {
  private readonly byPath = new Map<string, Map<string, string | null>>();
  private readonly lastActive = new Map<string, number>();
  private lastSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** The session made a call: it is not idle. */
  touch(session: string): void {
    const now = this.now();
    this.lastActive.set(session, now);
    if (now - this.lastSweep >= SWEEP_EVERY_MS) this.sweep(now);
  }

  /** `hash` null: the session saw the file deleted (its own delete). */
  record(session: string, rel: string, hash: string | null): void {
    let sessions = this.byPath.get(rel);
    if (!sessions) this.byPath.set(rel, (sessions = new Map()));
    sessions.set(session, hash);
    if (!this.lastActive.has(session)) this.lastActive.set(session, this.now());
  }

  seen(session: string, rel: string): string | null | undefined {
    return this.byPath.get(rel)?.get(session);
  }

  /** Sessions whose last seen version differs from `newHash`, except `exclude` (the writer). */
  staleSessions(rel: string, newHash: string | null, exclude?: string | null): string[] {
    const sessions = this.byPath.get(rel);
    if (!sessions) return [];
    const stale: string[] = [];
    for (const [session, hash] of sessions) if (session !== exclude && hash !== newHash) stale.push(session);
    return stale.sort();
  }

  /** Forgets a path's views once every session has been told (keeps the map from growing with deleted files). */
  forget(rel: string): void {
    this.byPath.delete(rel);
  }

  /** Forgets everything a session saw (session_end, or idle expiry); returns how many files it had seen. */
  forgetSession(session: string): number {
    let files = 0;
    for (const [rel, sessions] of this.byPath) {
      if (sessions.delete(session)) files++;
      if (!sessions.size) this.byPath.delete(rel);
    }
    this.lastActive.delete(session);
    return files;
  }

  get sessions(): number {
    return this.lastActive.size;
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [session, at] of this.lastActive) if (now - at > SESSION_IDLE_MS) this.forgetSession(session);
  }
}
