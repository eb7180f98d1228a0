/**
 * The root's repository, one per workspace root: where it is (git dir, common dir, prefix), git's version, the caches
 * of what was read from it (the conflicted index's listing, stage merges, parsed file versions) and the changelist
 * tracker (SPEC 8). Everything git keeps per root lives here, so two roots in one process share nothing.
 */
import { stat } from "node:fs/promises";
import type { PathResolver } from "../paths.js";
import type { EventBus } from "../platform/bus.js";
import type { Supervisor } from "../platform/supervisor.js";
import { CatFile } from "./cat-file.js";
import { IndexFiles } from "./index-file.js";
import { Changelists } from "./changelists.js";
import { StageMerges } from "./conflicts-model.js";
import { ConflictListing } from "./conflicts-stages.js";
import { LineFiles } from "./line-versions.js";
import { ConfigFiles } from "./loose-objects.js";
import { LiveStatus } from "./live-status.js";
import { type RepoLocation, discoverRepo } from "./location.js";
import { type GitCtx, git } from "./run.js";

export type { RepoLocation };

/** What a repository is built from: the root and the workspace's services it uses. */
export interface GitRepoOptions {
  root: string;
  processes: Supervisor;
  /** The root's path rules (SPEC 3), for the paths the line tools are given. */
  paths: Pick<PathResolver, "resolve">;
  maxFileBytes: number;
  /** The changelist tracker follows fs.changed and git.changed. */
  bus: Pick<EventBus, "on">;
  log: (message: string) => void;
}

/** The context of git work that needs the repository's state (its git dir, caches, path rules), not only git. */
export interface RepoCtx extends GitCtx {
  repo: GitRepo;
}

/** `git --version` is asked once per repository: it cannot change while the daemon runs. */
const VERSION_TIMEOUT_MS = 10_000;

export class GitRepo {
  readonly root: string;
  readonly processes: Supervisor;
  readonly paths: Pick<PathResolver, "resolve">;
  readonly maxFileBytes: number;
  readonly bus: Pick<EventBus, "on">;
  readonly log: (message: string) => void;
  /** Parsed versions and per-file line tables of the line-level tools. */
  readonly lines: LineFiles;
  readonly changelists: Changelists;
  /** The long-lived `git cat-file` the line tools read blobs through (cat-file.ts). */
  readonly catFile: CatFile;
  /** The index files the line tools read entries from (index-file.ts), parsed once per file identity. */
  readonly indexFiles = new IndexFiles();
  /** The configuration files as last read, kept while they are the same files (the daemon's own blob and index writes ask). */
  readonly configFiles = new ConfigFiles();
  /** The unmerged entries and their attributes, while the index file stays the same one. */
  readonly conflictIndex = new ConflictListing();
  /** Merges of conflicted stages, by their blob ids. */
  readonly merges = new StageMerges();
  /** git_status's last answer, kept while nothing changes (live-status.ts). */
  readonly status = new LiveStatus({ repo: this });
  private found?: Promise<RepoLocation>;
  private known?: RepoLocation;
  private version?: Promise<string | null>;
  private started = false;

  constructor(options: GitRepoOptions) {
    this.root = options.root;
    this.processes = options.processes;
    this.paths = options.paths;
    this.maxFileBytes = options.maxFileBytes;
    this.bus = options.bus;
    this.log = options.log;
    this.catFile = new CatFile(this);
    this.lines = new LineFiles(this);
    this.changelists = new Changelists(this, this.lines);
  }

  /** Follows the bus from now on and loads the stored changelists in the background (a root outside git has none). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.status.follow(this.bus);
    this.changelists.start();
    this.changelists.ready().catch(() => undefined);
  }

  /** Stops following the bus, saves what the tracker has pending and ends the object reader. */
  async stop(): Promise<void> {
    try {
      await this.changelists.stop();
    } finally {
      await this.catFile.stop();
    }
  }

  /**
   * Where the repository is (NOT_A_REPOSITORY when the root is in none). Found once, by one git process however many
   * ask at once, and looked for again once its git dir is gone (the repository was deleted, or re-created elsewhere);
   * a failure is not remembered, so a `git init` in the root is seen by the next call.
   */
  async location(): Promise<RepoLocation> {
    const known = this.known;
    if (known) {
      if (await isDirectory(known.gitDir)) return known;
      if (this.known === known) this.forget(); // only the first to see it gone; the others share its new search
    }
    this.found ??= discoverRepo({ repo: this }).then(
      (location) => (this.known = location),
      (e: unknown) => {
        this.found = undefined;
        throw e;
      },
    );
    return this.found;
  }

  /** location(), or null when the root is in no repository (or git cannot tell): for those that work without one. */
  tryLocation(): Promise<RepoLocation | null> {
    return this.location().catch(() => null);
  }

  async gitDir(): Promise<string> {
    return (await this.location()).gitDir;
  }

  private forget(): void {
    this.known = undefined;
    this.found = undefined;
  }

  /** git's version, or null when git cannot be run. */
  gitVersion(): Promise<string | null> {
    this.version ??= this.processes.run({ cmd: "git", args: ["--version"], cwd: this.root, group: false }, { timeoutMs: VERSION_TIMEOUT_MS }).then(
      (r) => (r.code === 0 ? r.stdout.trim().replace(/^git version /, "") : null),
      () => null,
    );
    return this.version;
  }

  /** What every git tool reports in `info`: git's version and whether the root is a repository. */
  async state(): Promise<Record<string, unknown>> {
    const version = await this.gitVersion();
    if (!version) return { available: false, git: false, reason: "git is not installed or not on PATH" };
    const r = await git({ repo: this }, ["rev-parse", "--is-inside-work-tree"], { ok: "any", timeoutMs: VERSION_TIMEOUT_MS }).catch(() => null);
    const repository = r?.code === 0 && r.stdout.trim() === "true";
    return { available: true, git: true, version, repository, processes: this.processes.state() };
  }

  /** `info` state of the line tools: git's, plus the changelists (loaded when the root is a repository). */
  async lineState(): Promise<Record<string, unknown>> {
    const state = await this.state();
    if (!state.repository) return state;
    const lists = this.changelists;
    const loaded = await lists.ready().then(
      () => true,
      () => false,
    );
    return {
      ...state,
      changelists: loaded
        ? {
            lists: lists.names(),
            active: lists.active,
            files_outside_active: lists.trackedFiles,
            files_followed: lists.followed,
            store: ".git/tool-layer/changelists.json",
          }
        : { loaded: false },
    };
  }
}

function isDirectory(p: string): Promise<boolean> {
  return stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
