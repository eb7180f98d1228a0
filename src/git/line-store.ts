/**
 * Where changelists persist (SPEC 8): `<git dir>/tool-layer/changelists.json`, beside the repository's own state and
 * never in the worktree. Marks are in the coordinates of one worktree version of each file (changelist-marks.ts), so
 * that version is kept too, as `changelist-bases/<file hash>` (its bytes): after a restart the tracker diffs it against
 * the file on disk and carries the marks over, whatever happened to the file meanwhile.
 *
 * Every write is atomic (a temp file renamed over the old one): the bases a state names are written before the state,
 * and bases no state names any more are removed after it, so a crash at any point leaves a state whose bases exist.
 */
import { open, readFile, readdir, unlink } from "node:fs/promises";
import path from "node:path";
import type { CrPolicy } from "../core/line-diff.js";
import type { MarksJson } from "../core/changelist-marks.js";
import { ToolError, isNodeError } from "../errors.js";
import { atomicWrite } from "../fs/atomic-write.js";

export const STORE_DIR = "tool-layer";
export const STORE_FILE = "changelists.json";
const BASES_DIR = "changelist-bases";
/** The format of changelists.json; a file of another version is set aside, not misread. */
export const STORE_VERSION = 1;
/**
 * changelists.json above this is not read (TOO_LARGE, naming it). Real ones are kilobytes: an entry is ~150 bytes plus
 * ~15 per run of marked lines, so 32 MiB holds 10,000 files of 200 runs each, and parses in well under a second. Read
 * whole, a 1 GB file took 1.2 GB of memory and made every changelist call INTERNAL: that is damage, not a state.
 */
export const CHANGELIST_STATE_MAX_BYTES = 32 * 1024 * 1024;

export interface StoredFile {
  /** The hash (SPEC 4) of the worktree version the marks are in; null: the file did not exist then. */
  base: string | null;
  /** The HEAD blob the marks were settled on. */
  head: string | null;
  cr: CrPolicy;
  marks: MarksJson;
}

export interface StoredState {
  version: number;
  active: string;
  /** In the order they were made; `default` first. */
  lists: string[];
  files: Record<string, StoredFile>;
}

export function emptyState(): StoredState {
  return { version: STORE_VERSION, active: "default", lists: ["default"], files: {} };
}

export class ChangelistStore {
  readonly dir: string;
  /** Bases known to be on disk, so a save writes only new ones. */
  private readonly saved = new Set<string>();

  constructor(
    gitDir: string,
    private readonly log: (message: string) => void,
  ) {
    this.dir = path.join(gitDir, STORE_DIR);
  }

  get file(): string {
    return path.join(this.dir, STORE_FILE);
  }

  /** The stored state and the bases it names (an entry whose base is gone is dropped with a note). */
  async load(): Promise<{ state: StoredState; bases: Map<string, Buffer> }> {
    const bases = new Map<string, Buffer>();
    let text: string;
    try {
      text = await this.readState();
    } catch (e) {
      if (isNodeError(e, "ENOENT")) return { state: emptyState(), bases };
      throw e;
    }
    let state: StoredState;
    try {
      state = JSON.parse(text) as StoredState;
      if (state.version !== STORE_VERSION || !Array.isArray(state.lists) || typeof state.files !== "object")
        throw new Error(`unknown format (version ${state.version})`);
    } catch (e) {
      // Kept for a person to look at; the lists start over rather than the daemon refusing to start.
      const aside = `${this.file}.unreadable`;
      await atomicWrite(aside, Buffer.from(text)).catch(() => undefined);
      this.log(`changelists: ${this.file} is unreadable (${e instanceof Error ? e.message : String(e)}); set aside as ${aside}, starting with no changelists`);
      return { state: emptyState(), bases };
    }
    if (!state.lists.includes("default")) state.lists.unshift("default");
    if (!state.lists.includes(state.active)) state.active = "default";
    for (const [rel, f] of Object.entries(state.files)) {
      if (f.base === null) continue;
      try {
        bases.set(f.base, await readFile(path.join(this.dir, BASES_DIR, f.base)));
        this.saved.add(f.base);
      } catch {
        this.log(`changelists: the saved version of ${rel} is missing; its marks are dropped (its changes join the active list)`);
        delete state.files[rel];
      }
    }
    return { state, bases };
  }

  /** The state's text, measured on the descriptor it is read from: TOO_LARGE above the bound, before any of it is read. */
  private async readState(): Promise<string> {
    const handle = await open(this.file, "r");
    try {
      const { size } = await handle.stat();
      if (size > CHANGELIST_STATE_MAX_BYTES) throw this.tooLarge(size, "is");
      return await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  }

  private tooLarge(size: number, verb: "is" | "would be"): ToolError {
    return new ToolError(
      "TOO_LARGE",
      `The changelist state ${this.file} ${verb} ${size} bytes, over the ${CHANGELIST_STATE_MAX_BYTES} bytes it may have, so it is not ${verb === "is" ? "read" : "written"}. ` +
        "To start the changelists afresh (every change then joins default), move it aside or delete it; its folder's changelist-bases/ may go with it.",
      { file: this.file, size, max_bytes: CHANGELIST_STATE_MAX_BYTES },
    );
  }

  /** Writes the state; `bases` has the bytes of every base it names that may not be on disk yet. */
  async save(state: StoredState, bases: ReadonlyMap<string, Buffer>): Promise<void> {
    const text = Buffer.from(`${JSON.stringify(state)}\n`);
    // One the next load would refuse is not written: the file keeps the last state that can be read.
    if (text.length > CHANGELIST_STATE_MAX_BYTES) throw this.tooLarge(text.length, "would be");
    const named = new Set(
      Object.values(state.files)
        .map((f) => f.base)
        .filter((b): b is string => b !== null),
    );
    for (const hash of named) {
      if (this.saved.has(hash)) continue;
      const bytes = bases.get(hash);
      if (!bytes) continue; // named but not given: already on disk from an earlier save
      await atomicWrite(path.join(this.dir, BASES_DIR, hash), bytes);
      this.saved.add(hash);
    }
    await atomicWrite(this.file, text);
    const dir = path.join(this.dir, BASES_DIR);
    const present = await readdir(dir).catch(() => [] as string[]);
    for (const name of present) {
      if (named.has(name) || !/^[0-9a-f]{16}$/.test(name)) continue;
      await unlink(path.join(dir, name)).catch(() => undefined);
      this.saved.delete(name);
    }
  }
}
