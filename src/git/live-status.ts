/**
 * git_status kept live, as an IDE keeps its change list: the last `git status` answer stands until something says the
 * repository may have changed, so a repeated git_status with nothing changed answers from memory instead of running git
 * over every file again. What invalidates it:
 * - any fs.changed, git.changed or vfs.state on the bus (every worktree change the watcher sees, HEAD, refs); a
 *   git.changed for the index without refs is left to the stamps below (HEAD's, the index's content key);
 * - a tool about to write a file (touched(): the file tools announce each write before its event comes);
 * - HEAD, info/exclude or config files differing (by stat) from when it was computed, or the index's content (its
 *   entries without their stat data, indexContentKey): what git commands made outside the daemon change, checked on
 *   every answer, before their git.changed arrives. An index rewritten with new stat data only (a plain `git status`,
 *   `update-index --refresh`, the refresh below) leaves the answer standing: touched files whose content is the same
 *   give no fs.changed, and git would answer the same.
 * It is only kept while the watcher is live (else nothing would invalidate it). A change made outside the daemon shows
 * once the watcher has reported it (its fs.changed), as in an IDE.
 *
 * The daemon runs git without optional locks, so `git status` never writes back the stat data it refreshes: after a
 * checkout touched 2,500 files without changing them, every status hashed them again (1.4 s at 100k files). So, after
 * a status git had to run, `git diff-files` (which compares stat data only) is asked in the background at most every
 * REFRESH_CHECK_MS; when it lists files the status found unchanged, `git update-index -q --refresh` runs under the
 * worktree lock, once.
 */
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { EventBus } from "../platform/bus.js";
import type { GitChanged } from "../vfs/events.js";
import { indexContentKey } from "./index-file.js";
import { type GitCtx, NO_SUBMODULE_WORKTREES, git } from "./run.js";
import { parseStatus } from "./status.js";

export const STATUS_ARGS = ["status", "--porcelain=v2", "-z", "--branch", NO_SUBMODULE_WORKTREES] as const;
/** The stat-cache check runs at most this often (it reads every entry's stat data, as a status does). */
const REFRESH_CHECK_MS = 10_000;

export interface LiveStatusHost {
  /** The repository's git dir and common dir (a linked worktree has its own index and HEAD), and the root's prefix. */
  dirs(): Promise<{ gitDir: string; commonDir: string; prefix: string }>;
  /** Runs `work` with the worktree to itself (no file write or git change interleaves). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Whether the watcher is live: only then do events invalidate the answer. */
  watching(): boolean;
  log(message: string): void;
}

export class LiveStatus {
  private generation = 0;
  private following = false;
  /** The watcher's word (vfs.state): down, nothing invalidates the answer. */
  private live = true;
  private cached?: { generation: number; stamp: Stamp; indexKey: string | null; out: string };
  private lastCheck = 0;
  private checking = false;

  constructor(private readonly ctx: GitCtx) {}

  /** Follows the bus from now on; before this, every status runs git. */
  follow(bus: Pick<EventBus, "on">): void {
    if (this.following) return;
    this.following = true;
    const bump = () => void this.generation++;
    bus.on("fs.changed", bump);
    // The index written: whether that matters is the index's content key's to say, and HEAD's stamp's (status()).
    bus.on("git.changed", (data: GitChanged) => void (data.index && !data.refs ? undefined : bump()));
    bus.on("vfs.state", ({ live }) => {
      this.live = live;
      bump();
    });
  }

  /** Something is about to change the worktree (a tool's write): the next status runs git. */
  touched(): void {
    this.generation++;
  }

  /** `git status --porcelain=v2 -z --branch` as it would print now, and whether it came from memory. */
  async status(call: GitCtx, host: LiveStatusHost): Promise<{ out: string; cached: boolean }> {
    const generation = this.generation;
    const dirs = await host.dirs();
    const stamp = await stampOf(dirs);
    const kept = this.cached;
    // A root below the repository's top: the watcher sees none of the changes above it.
    const keepable = this.following && this.live && host.watching() && dirs.prefix === "";
    if (keepable && kept && kept.generation === generation && kept.stamp.rest === stamp.rest) {
      if (kept.stamp.index === stamp.index) return { out: kept.out, cached: true };
      // The index was rewritten: the answer stands if its entries are the same but for their stat data.
      const key = kept.indexKey === null ? null : await indexKeyOf(dirs, stamp.index);
      if (key !== null && key === kept.indexKey && generation === this.generation) {
        kept.stamp = stamp;
        return { out: kept.out, cached: true };
      }
    }
    // The daemon's git runs without optional locks, so the index git reads is the one read here.
    const [r, indexKey] = await Promise.all([git(call, STATUS_ARGS), keepable ? indexKeyOf(dirs, stamp.index) : null]);
    // Kept only if nothing said "changed" while git ran: its answer may be from before that change.
    if (keepable && generation === this.generation && sameStamp(await stampOf(dirs), stamp)) this.cached = { generation, stamp, indexKey, out: r.stdout };
    this.checkStatCache(r.stdout, host);
    return { out: r.stdout, cached: false };
  }

  /** In the background: refreshes the index's stat data when files git found unchanged have stat data that differ. */
  private checkStatCache(out: string, host: LiveStatusHost): void {
    if (this.checking || Date.now() - this.lastCheck < REFRESH_CHECK_MS) return;
    this.checking = true;
    this.lastCheck = Date.now();
    void this.refreshIfStale(out, host)
      .catch((e: unknown) => host.log(`git index stat refresh failed: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => (this.checking = false));
  }

  private async refreshIfStale(out: string, host: LiveStatusHost): Promise<void> {
    const s = parseStatus(out);
    const changed = new Set([...s.unstaged, ...s.conflicted].map((e) => e.path));
    const r = await git(this.ctx, ["diff-files", "--name-only", "-z", NO_SUBMODULE_WORKTREES], { ok: "any" });
    if (r.code !== 0) return;
    const touchedEqual = r.stdout.split("\0").filter((p) => p && !changed.has(p));
    if (!touchedEqual.length) return;
    await host.exclusive(() => git(this.ctx, ["update-index", "-q", "--refresh", "--ignore-submodules"], { ok: "any" }));
  }
}

/**
 * What git commands change outside the daemon, by stat: the index, HEAD and the branch it names (a commit moves it),
 * packed-refs, info/exclude, the config.
 */
async function stampOf(dirs: { gitDir: string; commonDir: string }): Promise<Stamp> {
  const head = await readFile(path.join(dirs.gitDir, "HEAD"), "utf8").catch(() => "");
  const branch = /^ref: (refs\/\S+)/.exec(head)?.[1];
  const files = [path.join(dirs.commonDir, "packed-refs"), path.join(dirs.commonDir, "info", "exclude"), path.join(dirs.commonDir, "config")];
  if (branch) files.push(path.join(dirs.commonDir, branch));
  const [index, ...stats] = await Promise.all([path.join(dirs.gitDir, "index"), ...files].map(statStamp));
  return { index, rest: `${head}|${stats.join("|")}` };
}

/** The index file's identity (git replaces it by a rename, so any write gives another), and all else stampOf reads. */
interface Stamp {
  index: string;
  rest: string;
}

const sameStamp = (a: Stamp, b: Stamp) => a.index === b.index && a.rest === b.rest;

function statStamp(file: string): Promise<string> {
  return stat(file, { bigint: true }).then(
    (s) => `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`,
    () => "-",
  );
}

/** indexContentKey of the index file whose identity is `index`; null when it was replaced meanwhile or is not read here. */
async function indexKeyOf(dirs: { gitDir: string }, index: string): Promise<string | null> {
  const file = path.join(dirs.gitDir, "index");
  if (index === "-") return "no index";
  const bytes = await readFile(file).catch(() => null);
  if (!bytes || (await statStamp(file)) !== index) return null;
  return indexContentKey(bytes);
}
