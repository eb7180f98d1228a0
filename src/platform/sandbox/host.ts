/**
 * The host side of a sandbox: what the policies need to know about this machine (read once when the daemon starts),
 * and the folders a sandbox pins, opened as themselves just before it starts.
 */
import { closeSync, constants, openSync, readlinkSync } from "node:fs";
import { lstat, realpath } from "node:fs/promises";
import os from "node:os";
import { ToolError } from "../../errors.js";

/** Directories hidden behind an empty tmpfs: unix sockets on a read-only mount still accept connections (a Docker or
 * D-Bus socket under /run would be a way out of the sandbox). /var/run is a link to /run on most systems; where it is a
 * directory of its own the host side adds it (hostSandboxPaths), since bwrap cannot mount over a path that is missing. */
export const HIDDEN_DIRS = ["/run", "/var/run"];
/** HOME inside the sandbox when the daemon's own home is the workspace or inside it (then an empty tmpfs would hide it). */
export const FALLBACK_HOME = "/tmp/home";

export interface HostSandboxPaths {
  /** The HIDDEN_DIRS that are directories here (not links to one another, not missing). */
  hidden: string[];
  /** /etc/resolv.conf's target when it lies under a hidden dir (systemd-resolved), so DNS works with network on. */
  keep: string[];
  /** The daemon's home when it is a directory, else FALLBACK_HOME. */
  homePath: string;
}

async function isRealDir(p: string): Promise<boolean> {
  return (await lstat(p).catch(() => null))?.isDirectory() ?? false;
}

/** What the sandbox policies need to know about this host. */
export async function hostSandboxPaths(): Promise<HostSandboxPaths> {
  const hidden: string[] = [];
  for (const d of HIDDEN_DIRS) if (await isRealDir(d)) hidden.push(d);
  const target = await realpath("/etc/resolv.conf").catch(() => "");
  const keep = hidden.some((d) => target.startsWith(d + "/")) ? [target] : [];
  const home = os.homedir();
  return { hidden, keep, homePath: (await isRealDir(home)) ? home : FALLBACK_HOME };
}

/**
 * Opens the folders a sandbox pins (BwrapCommand.pins), each as itself: O_NOFOLLOW refuses a symlink at the end, and
 * the descriptor's own path must be the one asked for, so no symlink swapped in above it since the walk leads
 * elsewhere. A folder that moved or went since the walk (a background job) fails the launch: the sandbox would not hold
 * what the preview showed.
 */
export function openPins(folders: readonly string[]): number[] {
  const fds: number[] = [];
  let folder = "";
  try {
    for (folder of folders) {
      fds.push(openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW));
      if (readlinkSync(`/proc/self/fd/${fds.at(-1)}`) !== folder) throw new Error("moved");
    }
    return fds;
  } catch {
    for (const fd of fds) closeSync(fd);
    throw new ToolError(
      "BUSY",
      `${folder} changed while the sandbox was being set up (moved, removed or replaced by a link); nothing ran. Run the command again.`,
    );
  }
}
