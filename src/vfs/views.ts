/** Which session last saw which version of which file (read or written), by root-relative path. */
export class SessionViews {
  private readonly byPath = new Map<string, Map<string, string | null>>();

  /** `hash` null: the session saw the file deleted (its own delete). */
  record(session: string, rel: string, hash: string | null): void {
    let sessions = this.byPath.get(rel);
    if (!sessions) this.byPath.set(rel, (sessions = new Map()));
    sessions.set(session, hash);
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
}
