import { isNodeError } from "../errors.js";

/**
 * Whether a process with this pid exists (signal 0 probes without sending): what decides that the owner of a leftover
 * (a temp file, an output folder, a cgroup) is gone.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return isNodeError(e, "EPERM"); // not ours, but there; no such process (or no such pid at all) is gone
  }
}
