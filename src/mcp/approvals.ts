import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { atomicWrite } from "../fs/atomic-write.js";
import { isNodeError } from "../errors.js";
import { isInside } from "../paths.js";

/**
 * Approvals of the workspace's `.mcp.json` entries (SPEC 12). They live in the daemon's state folder, outside the
 * workspace, so a repository cannot arrive with approvals of its own. One file per root; each approved server records
 * the digest of its entry as written, so a changed entry is no longer approved while the others stay approved.
 */

export interface Approval {
  digest: string;
  /** ISO time, for a person reading the file. */
  approved_at: string;
}

interface ApprovalFile {
  /** The root's real path, so a person can tell the files apart. */
  root: string;
  servers: Record<string, Approval>;
}

/** The state folder: `$XDG_STATE_HOME/tool-layer`, else `~/.local/state/tool-layer` (the XDG default). */
export function defaultStateDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const base = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(os.homedir(), ".local", "state");
  return path.join(base, "tool-layer");
}

/** The approvals file of one root, keyed by its real path so two spellings of one folder share their approvals. */
export function approvalsFile(stateDir: string, rootRealPath: string): string {
  const key = createHash("sha256").update(rootRealPath).digest("hex").slice(0, 32);
  return path.join(stateDir, "roots", key, "mcp-approvals.json");
}

/** Only the daemon's user reads or writes its state. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

export class ApprovalStore {
  /** Writes run one after another, so two approvals at once cannot lose one. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly file: string,
    readonly root: string,
  ) {}

  /** Whether `server` is approved with exactly this entry: a different digest is a changed entry, not approved. */
  async isApproved(server: string, digest: string): Promise<boolean> {
    const a = (await this.read()).servers[server];
    return a !== undefined && a.digest === digest;
  }

  async list(): Promise<Record<string, Approval>> {
    return (await this.read()).servers;
  }

  async approve(server: string, digest: string): Promise<void> {
    await this.update((f) => {
      f.servers[server] = { digest, approved_at: new Date().toISOString() };
    });
  }

  /** Withdraws one server's approval; false when it had none. */
  async revoke(server: string): Promise<boolean> {
    let had = false;
    await this.update((f) => {
      had = Object.hasOwn(f.servers, server);
      delete f.servers[server];
    });
    return had;
  }

  /**
   * Read fresh each time (the file is small): a second daemon on the same root, or a person deleting the file, is
   * seen at once. A file that cannot be parsed approves nothing rather than stopping the daemon.
   */
  private async read(): Promise<ApprovalFile> {
    if (this.insideRoot()) return { root: this.root, servers: {} };
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (e) {
      if (isNodeError(e, "ENOENT")) return { root: this.root, servers: {} };
      throw e;
    }
    try {
      const json = JSON.parse(text) as Partial<ApprovalFile>;
      const servers: Record<string, Approval> = {};
      for (const [name, a] of Object.entries(json.servers ?? {})) {
        if (a && typeof a.digest === "string") servers[name] = { digest: a.digest, approved_at: String(a.approved_at ?? "") };
      }
      return { root: this.root, servers };
    } catch {
      return { root: this.root, servers: {} };
    }
  }

  /**
   * Whether the file's folder has come to lie in the workspace (the daemon refuses a state folder there, so only a link
   * made since leads in): a repository could have brought what it holds, so it approves nothing.
   */
  private insideRoot(): boolean {
    try {
      return isInside(this.root, realpathSync.native(path.dirname(this.file)));
    } catch {
      return false; // not there yet: nothing to read
    }
  }

  private update(change: (f: ApprovalFile) => void): Promise<void> {
    const run = this.queue.then(async () => {
      if (this.insideRoot())
        throw new Error(
          `the approvals file ${this.file} lies inside the workspace ${this.root} (through a link); remove the link from the daemon's state folder`,
        );
      const f = await this.read();
      change(f);
      await mkdir(path.dirname(this.file), { recursive: true, mode: DIR_MODE });
      await atomicWrite(this.file, Buffer.from(`${JSON.stringify(f, null, 2)}\n`), FILE_MODE);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
