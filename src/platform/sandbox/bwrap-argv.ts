/**
 * Every bubblewrap command line the daemon runs, built from a policy by one pure function: the terminal's commands,
 * the custom checks (a terminal command given as an argv) and the language servers differ only in their policies.
 *
 * What every sandbox gets, whatever its policy: the host's `/` read-only, a fresh /dev and /proc (the parts of /proc
 * that reach the host read-only), every namespace unshared (the network kept only on request), no nested user
 * namespaces where bwrap can block them, no capabilities, a session of its own, and death with its parent.
 * Then the policy's mounts, in order; then the guard (guardMounts): its read-only folders bound on themselves and its
 * hidden folders covered, wherever a mount shows them, with the folders above them pinned against renames.
 */
import path from "node:path";

/**
 * Parts of the sandbox's /proc bound read-only from the host's, as Docker does: root without capabilities still passes
 * file permission checks, and bwrap 0.8 left /proc/sys writable, where `kernel.core_pattern` names a program the kernel
 * runs as root outside any sandbox. `--ro-bind-try`: a kernel without one of them is fine.
 */
export const PROC_READONLY = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", "/proc/acpi", "/proc/scsi"];

/** The descriptor of the first pinned folder: after stdin, stdout and stderr. */
export const FIRST_PIN_FD = 3;

/** One mount over the read-only host, in the order bwrap makes them (a later one shows over an earlier one). */
export type Mount =
  /** A host folder: `--bind` when writable, else `--ro-bind`. */
  | { kind: "bind"; src: string; dest: string; writable: boolean }
  /** An empty tmpfs of the sandbox's own (`perms`: its mode, such as 1777 for /tmp). */
  | { kind: "tmpfs"; dest: string; perms?: string }
  /** An empty folder made inside a tmpfs mounted above it. */
  | { kind: "dir"; dest: string };

export interface SandboxPolicy {
  /** What the file system shows, over the host's read-only `/`, in this order. */
  mounts: readonly Mount[];
  /**
   * Host folders bound read-only on themselves after the mounts, even where a mount hides them (git dirs: history and
   * refs change only through the git tools); one gone meanwhile is skipped (`--ro-bind-try`).
   */
  readOnly: readonly string[];
  /** Host folders no one inside may see: an empty read-only tmpfs wherever a mount shows one. Each must exist. */
  hide: readonly string[];
  /** The working directory (absolute). */
  cwd: string;
  /** Keep the host's network; otherwise a private loopback only. */
  network: boolean;
  /** `--unshare-user --disable-userns` (bwrap 0.8 and later; the probe says whether it works here). */
  disableUserns: boolean;
  /** `--json-status-fd`: bwrap writes `{"child-pid":…}` then `{"exit-code":…}` there (one after the pins' descriptors). */
  statusFd?: number;
  /** What runs inside, as an argv. */
  command: readonly string[];
}

/** What a sandbox's file system shows at `dest`, in the order bwrap mounts it: a host folder (`src`), or something of
 * the sandbox's own (`src` undefined: a tmpfs, or a folder in one) that holds nothing of the host's. */
export interface View {
  dest: string;
  src?: string;
  writable: boolean;
}

/** The mounts that keep read-only folders read-only and hidden folders hidden, and the folders they pin. */
export interface Guard {
  /** bwrap arguments, after every mount in `views`. */
  args: string[];
  /** Folders the host opens (O_DIRECTORY, no symlink anywhere in the path) and hands to bwrap as descriptors
   * `firstFd`, `firstFd + 1`, … in this order: `--bind-fd` takes the folder itself, where a path would follow a symlink
   * swapped in meanwhile (a relative one out of the workspace would bind a host folder such as /etc read-write). */
  pins: string[];
}

/** A policy's bubblewrap command line (argv[0] is `bwrap`), the folders to hand it as descriptors, and what it shows where. */
export interface BwrapCommand {
  argv: string[];
  /** Guard.pins: opened by the host (openPins) and passed as descriptors FIRST_PIN_FD, FIRST_PIN_FD + 1, … */
  pins: string[];
  /** The host's `/` and every mount of the policy, in order (for a hint on what the sandbox hides). */
  views: View[];
}

export function inside(p: string, dir: string): boolean {
  const rel = path.posix.relative(dir, p);
  return rel === "" || (rel !== ".." && !rel.startsWith("../") && !path.posix.isAbsolute(rel));
}

const depth = (p: string) => (p === "/" ? 0 : p.split("/").length - 1);

/** The last view that holds `p`: what the sandbox shows there. */
export function viewOf(views: readonly View[], p: string): View | undefined {
  for (let i = views.length - 1; i >= 0; i--) if (inside(p, views[i].dest)) return views[i];
  return undefined;
}

/** Where host path `h` shows through `v`, if it does: under it, or the whole view when `v` shows a part of `h`. */
function sightThrough(v: View, h: string): string | undefined {
  if (v.src === undefined) return undefined;
  if (inside(h, v.src)) return path.posix.join(v.dest, path.posix.relative(v.src, h));
  return inside(v.src, h) ? v.dest : undefined;
}

/**
 * The folders between a writable view's top and `p`, each to be a mount point of its own: the kernel refuses to rename
 * a mount point (EBUSY) but moves a folder that merely holds one, so without them `mv build b2` would carry
 * `build/inner/.git` away with its read-only mount and leave `build/inner/.git` free to be made anew.
 */
function chainTo(v: View, p: string): { dest: string; src: string }[] {
  const out: { dest: string; src: string }[] = [];
  for (let d = path.posix.dirname(p); d !== v.dest && inside(d, v.dest); d = path.posix.dirname(d)) {
    out.push({ dest: d, src: path.posix.join(v.src!, path.posix.relative(v.dest, d)) });
  }
  return out;
}

/**
 * After the mounts in `views`: every path of `readOnly` bound read-only on itself (git dirs: shown even where the
 * view above hides them, so git in the sandbox still reads a linked worktree's dir), every place where a folder of
 * `hide` shows covered by an empty read-only tmpfs, and the folders above both in a writable view pinned as mount points
 * (see chainTo). Parents before children, each place once; nothing inside a hidden or read-only place. Pure.
 */
export function guardMounts(views: readonly View[], readOnly: readonly string[], hide: readonly string[], firstFd = FIRST_PIN_FD): Guard {
  type Entry = { dest: string; kind: "ro" | "hide" | "pin"; src: string };
  const entries: Entry[] = [];
  const protect = (v: View | undefined, dest: string, kind: "ro" | "hide", src: string) => {
    if (v?.writable && v.src !== undefined) for (const c of chainTo(v, dest)) entries.push({ ...c, kind: "pin" });
    entries.push({ dest, kind, src });
  };
  for (const g of readOnly) {
    const v = viewOf(views, g);
    // Pinned only where the sandbox shows the host's own folders above it (not a home bound from elsewhere).
    protect(v && sightThrough(v, g) === g ? v : undefined, g, "ro", g);
  }
  for (const h of hide) {
    for (const v of views) {
      const at = sightThrough(v, h);
      if (at !== undefined && viewOf(views, at) === v) protect(v, at, "hide", h);
    }
  }
  const hidden = entries.filter((e) => e.kind === "hide").map((e) => e.dest);
  const ro = entries.filter((e) => e.kind === "ro").map((e) => e.dest);
  const covered = (e: Entry) =>
    hidden.some((d) => d !== e.dest && inside(e.dest, d)) ||
    (e.kind !== "hide" && ro.some((d) => d !== e.dest && inside(e.dest, d))) ||
    (e.kind === "pin" && entries.some((o) => o.kind !== "pin" && o.dest === e.dest));
  const unique = new Map(entries.filter((e) => !covered(e)).map((e) => [`${e.kind} ${e.dest}`, e]));
  const kept = [...unique.values()].sort((x, y) => depth(x.dest) - depth(y.dest) || (x.dest < y.dest ? -1 : x.dest > y.dest ? 1 : 0));
  const args: string[] = [];
  const pins: string[] = [];
  for (const e of kept) {
    if (e.kind === "pin") {
      args.push("--bind-fd", String(firstFd + pins.length), e.dest);
      pins.push(e.src);
    } else if (e.kind === "ro") args.push("--ro-bind-try", e.src, e.dest);
    else args.push("--tmpfs", e.dest, "--remount-ro", e.dest);
  }
  return { args, pins };
}

function mountArgs(m: Mount): string[] {
  switch (m.kind) {
    case "bind":
      return [m.writable ? "--bind" : "--ro-bind", m.src, m.dest];
    case "tmpfs":
      return [...(m.perms ? ["--perms", m.perms] : []), "--tmpfs", m.dest];
    case "dir":
      return ["--dir", m.dest];
  }
}

/** What a mount shows: a host folder, or (a tmpfs, a folder in one) something writable of the sandbox's own. */
function viewOfMount(m: Mount): View {
  return m.kind === "bind" ? { dest: m.dest, src: m.src, writable: m.writable } : { dest: m.dest, writable: true };
}

/** A policy's bubblewrap command line, the folders it pins and what it shows where. Pure. */
export function bwrapArgv(policy: SandboxPolicy): BwrapCommand {
  const a = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  for (const p of PROC_READONLY) a.push("--ro-bind-try", p, p);
  const views: View[] = [{ dest: "/", src: "/", writable: false }];
  for (const m of policy.mounts) {
    a.push(...mountArgs(m));
    views.push(viewOfMount(m));
  }
  // After every mount, so the guards win over them; sorted, so the line is the same whatever order they were found in.
  const guard = guardMounts(views, [...new Set(policy.readOnly)].sort(), policy.hide);
  a.push(...guard.args);
  a.push("--chdir", policy.cwd, "--unshare-all");
  if (policy.disableUserns) a.push("--unshare-user", "--disable-userns");
  if (policy.network) a.push("--share-net");
  // --cap-drop ALL: as root, a sandbox that kept its capabilities can `mount -o remount,rw /`. bwrap always sets
  // no_new_privs, so setuid binaries cannot give them back. --die-with-parent: bwrap's init dies with the daemon (or
  // the step that started it), and with it the PID namespace, whatever the command started.
  a.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  if (policy.statusFd !== undefined) a.push("--json-status-fd", String(policy.statusFd));
  a.push("--", ...policy.command);
  return { argv: a, pins: guard.pins, views };
}
