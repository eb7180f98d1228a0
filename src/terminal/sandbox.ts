/**
 * The terminal sandbox (SPEC 11) as pure functions: the bubblewrap argv and the environment a command runs with.
 *
 * What the runner (on the process supervisor) must do with them:
 * - Once at start: `hostSandboxPaths()` (hidden dirs, kept paths, the home path) and `probeSandbox()` (available or why
 *   not, `disableUserns`, which limits hold) from sandbox-probe.ts; `sweepStaleCgroups()` for a previous daemon's leftovers.
 *   Without a working sandbox, answer SANDBOX_UNAVAILABLE unless `--terminal-sandbox off`.
 * - Per command: `checkCommand` first (shell-parse.ts; a refusal is `shellWriteRefused(reason)`, in a dry run too), then
 *   `buildSandboxArgv` (show it in the preview, digest it into preview_id) and `sandboxEnv` (never in the argv, never
 *   shown: it changes with the daemon's environment).
 * - Spawn `argv[0]` with `argv.slice(1)` and that env as the whole environment. When cgroup limits hold, spawn
 *   `CommandCgroup.wrap(argv)` instead (cgroup-limits.ts), so the process is in its cgroup before bwrap starts, and
 *   `release()` the cgroup after it exits.
 * - `detached: true` (its own process group). On timeout or cancel, SIGKILL the group (`process.kill(-pid)`): killing
 *   the outer bwrap is enough, because `--die-with-parent` kills the sandbox's init and, with it, its PID namespace
 *   (every process the command started, background ones included). The same happens when the daemon dies, SIGKILL
 *   included. A foreground command that leaves `sleep 1000 &` behind needs nothing: bwrap's init exits with the
 *   command, and the kernel kills the rest of the namespace. `CommandCgroup.kill()` is a second net.
 * - stdin: `ignore` unless the call gave `stdin` (then a pipe, written and closed). stdout and stderr: hand both the same
 *   descriptor (a pipe the daemon copies into the output file, output-pipe.ts) so their order is the order written.
 * - Exit status: bwrap exits with the command's code; a command killed by signal N exits 128+N. bwrap's own failure
 *   (a bind source gone) is exit 1 with `bwrap: …` on stderr: pass `statusFd` to tell it apart (no `child-pid` line).
 */
import path from "node:path";

/** Directories hidden behind an empty tmpfs: unix sockets on a read-only mount still accept connections (a Docker or
 * D-Bus socket under /run would be a way out of the sandbox). /var/run is a link to /run on most systems; where it is a
 * directory of its own the host side adds it (hostSandboxPaths), since bwrap cannot mount over a path that is missing. */
export const HIDDEN_DIRS = ["/run", "/var/run"];
/**
 * Parts of the sandbox's /proc bound read-only from the host's, as Docker does: root without capabilities still passes
 * file permission checks, and bwrap 0.8 left /proc/sys writable, where `kernel.core_pattern` names a program the kernel
 * runs as root outside any sandbox. `--ro-bind-try`: a kernel without one of them is fine.
 */
export const PROC_READONLY = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", "/proc/acpi", "/proc/scsi"];
/** HOME inside the sandbox when the daemon's own home is the workspace or inside it (then an empty tmpfs would hide it). */
export const FALLBACK_HOME = "/tmp/home";

export interface SandboxOptions {
  /** The workspace (absolute, real path): bound read-write. */
  root: string;
  /** Every `.git` directory or file in the workspace (nested repositories' too), plus the git dirs their `gitdir:` lines
   * name and those dirs' common dirs: bound read-only on top, so history and refs change only through the git tools. */
  gitDirs: readonly string[];
  /** HOME as the command sees it: the daemon's own home path, so `~` names the same place, but empty. It must exist
   * (bwrap cannot create a mount point in the read-only system); the host side uses FALLBACK_HOME when it does not. */
  homePath: string;
  /** `--terminal-home DIR`: a folder bound read-write as HOME instead of the empty tmpfs. */
  home?: string;
  /** `--terminal-network`: keep the host's network; otherwise only a private loopback. */
  network: boolean;
  /** A host folder to be the private /tmp (default: a fresh tmpfs). */
  tmpDir?: string;
  /** The working directory (absolute). */
  cwd: string;
  /** A bash command line (run as `bash -c`), or an argv run as it is (a custom check's command). */
  command: string | readonly string[];
  /** The existing directories of HIDDEN_DIRS on this host (default: /run). */
  hidden?: readonly string[];
  /** Paths under the hidden dirs bound back read-only, such as /etc/resolv.conf's target under /run. */
  keep?: readonly string[];
  /** `--unshare-user --disable-userns` (bwrap 0.8 and later; the probe says whether it works here, default on): the
   * command cannot make user namespaces of its own, the kernel surface most sandbox escapes go through. */
  disableUserns?: boolean;
  /** `--json-status-fd`: bwrap writes `{"child-pid":…}` then `{"exit-code":…}` as JSON lines to this descriptor (one
   * after the pinned folders' descriptors, see Guard.pins). */
  statusFd?: number;
  /** Host folders no command may see or change (the daemon's state folder, SPEC 12): an empty read-only tmpfs over each,
   * wherever a bind shows it. Each must exist (bwrap cannot make a mount point in the read-only system). */
  hide?: readonly string[];
}

/** What a sandbox's file system shows at `dest`, in the order bwrap mounts it: a host folder (`src`), or something of
 * the sandbox's own (`src` undefined: a tmpfs, or a folder in one) that holds nothing of the host's. */
export interface View {
  dest: string;
  src?: string;
  writable: boolean;
}

/** The mounts that keep git dirs read-only and hidden folders hidden, and the folders they pin. */
export interface Guard {
  /** bwrap arguments, after every mount in `views`. */
  args: string[];
  /** Folders the host opens (O_DIRECTORY, no symlink anywhere in the path) and hands to bwrap as descriptors
   * `firstFd`, `firstFd + 1`, … in this order: `--bind-fd` takes the folder itself, where a path would follow a symlink
   * swapped in meanwhile (a relative one out of the workspace would bind a host folder such as /etc read-write). */
  pins: string[];
}

/** The descriptor of the first pinned folder: after stdin, stdout and stderr. */
export const FIRST_PIN_FD = 3;

function inside(p: string, dir: string): boolean {
  const rel = path.posix.relative(dir, p);
  return rel === "" || (rel !== ".." && !rel.startsWith("../") && !path.posix.isAbsolute(rel));
}

const depth = (p: string) => (p === "/" ? 0 : p.split("/").length - 1);

/** The last view that holds `p`: what the sandbox shows there. */
function viewOf(views: readonly View[], p: string): View | undefined {
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

/** The HOME path the command gets. */
export function sandboxHome(opts: Pick<SandboxOptions, "root" | "homePath">): string {
  const home = path.posix.resolve(opts.homePath || "/");
  return home === "/" || inside(home, opts.root) ? FALLBACK_HOME : home;
}

/**
 * How bash runs the line: no profile or rc file (the daemon's dotfiles must not decide what runs), and no `-o pipefail`
 * or `-e`: the exit code means what it means in any shell a model knows, so `cmd | head` is not a failure when `cmd`
 * gets SIGPIPE. `--` is not needed: `-c` takes the next word as the script whatever it starts with.
 */
export function bashArgv(command: string): string[] {
  return ["bash", "--noprofile", "--norc", "-c", command];
}

/** One terminal command's bubblewrap command line (argv[0] is `bwrap`), the folders it pins (Guard.pins) and what its
 * file system shows where. */
export function buildSandbox(opts: SandboxOptions): { argv: string[]; pins: string[]; views: View[] } {
  for (const [name, p] of [["root", opts.root], ["cwd", opts.cwd]] as const) {
    if (!path.posix.isAbsolute(p)) throw new Error(`sandbox ${name} must be absolute: ${p}`);
  }
  const home = sandboxHome(opts);
  const a = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  const views: View[] = [{ dest: "/", src: "/", writable: false }];
  for (const p of PROC_READONLY) a.push("--ro-bind-try", p, p);
  if (opts.tmpDir) a.push("--bind", opts.tmpDir, "/tmp");
  else a.push("--perms", "1777", "--tmpfs", "/tmp");
  views.push({ dest: "/tmp", src: opts.tmpDir, writable: true });
  for (const d of opts.hidden ?? ["/run"]) {
    a.push("--tmpfs", d);
    views.push({ dest: d, writable: true });
  }
  for (const k of opts.keep ?? []) {
    a.push("--ro-bind", k, k);
    views.push({ dest: k, src: k, writable: false });
  }
  if (opts.home) a.push("--bind", opts.home, home);
  else if (home === FALLBACK_HOME) a.push("--dir", home); // an empty folder in the private /tmp
  else a.push("--tmpfs", home);
  views.push({ dest: home, src: opts.home, writable: true });
  // After /tmp and HOME, so a workspace under either is still there, and the guards after it, so they win over it.
  // `-try`: a git dir removed since it was found has nothing left to protect, and a missing source would stop bwrap
  // before the command starts.
  a.push("--bind", opts.root, opts.root);
  views.push({ dest: opts.root, src: opts.root, writable: true });
  const guard = guardMounts(views, [...new Set(opts.gitDirs)].sort(), opts.hide ?? []);
  a.push(...guard.args);
  a.push("--chdir", opts.cwd);
  a.push("--unshare-all");
  if (opts.disableUserns ?? true) a.push("--unshare-user", "--disable-userns");
  if (opts.network) a.push("--share-net");
  // --cap-drop ALL: as root, a sandbox that kept its capabilities can `mount -o remount,rw /`. bwrap always sets
  // no_new_privs, so setuid binaries cannot give them back.
  a.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  if (opts.statusFd !== undefined) a.push("--json-status-fd", String(opts.statusFd));
  a.push("--", ...(typeof opts.command === "string" ? bashArgv(opts.command) : opts.command));
  return { argv: a, pins: guard.pins, views };
}

/** The bubblewrap command line alone (a sandbox that pins nothing, or a preview). */
export function buildSandboxArgv(opts: SandboxOptions): string[] {
  return buildSandbox(opts).argv;
}

/** What a hidden place is called in a hint, and what to do about it. */
function hiddenPlace(dest: string, homeFlag: boolean): string {
  if (dest === "/tmp") return "/tmp is private in the sandbox (an empty tmpfs of its own)";
  if (dest === FALLBACK_HOME || !HIDDEN_DIRS.includes(dest)) return `HOME (${dest}) is an empty folder in the sandbox${homeFlag ? " (--terminal-home DIR binds a real one)" : ""}`;
  return `${dest} is hidden in the sandbox (an empty tmpfs)`;
}

/** Absolute paths in a line, as a shell's or env's "not found" message quotes them. */
const ABSOLUTE_PATH = /(?<![\w.~-])\/[^\s'"`:]+/g;

/**
 * A program not found (exit 127) that may be on the host all the same: the path the message names, or for a bare name
 * the PATH entries, lie where the sandbox shows something of its own (the private /tmp, the empty HOME, /run). The hint
 * says so and what to do; undefined when nothing points there. `homeFlag`: HOME is empty for want of --terminal-home.
 * Pure.
 */
export function notFoundHint(output: string, pathVar: string, views: readonly View[], opts: { homeFlag: boolean }): string | undefined {
  const lines = output.split("\n").filter((l) => /command not found|No such file or directory/.test(l));
  const named = lines.flatMap((l) => l.match(ABSOLUTE_PATH) ?? []);
  const bareName = lines.some((l) => /command not found|env: '[^'/]+': No such file/.test(l));
  const candidates = [...named, ...(bareName ? pathVar.split(":").filter((p) => p.startsWith("/")) : [])];
  const byPlace = new Map<string, Set<string>>();
  for (const p of candidates) {
    const v = viewOf(views, path.posix.normalize(p));
    if (v && v.src === undefined) byPlace.set(v.dest, (byPlace.get(v.dest) ?? new Set()).add(p));
  }
  if (!byPlace.size) return undefined;
  const said = [...byPlace].map(([dest, paths]) => `${hiddenPlace(dest, opts.homeFlag)}, so ${[...paths].join(", ")} ${paths.size === 1 ? "is" : "are"} not there`);
  return `hint: ${said.join("; ")}. Put the toolchain outside those places (under the workspace, or a system folder such as /opt or /usr/local), or start the daemon with --terminal-sandbox off.`;
}

/** Repository variables: the root decides the repository (SPEC 1). */
const REPOSITORY_VARS = new Set([
  "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR",
  "GIT_NAMESPACE", "GIT_PREFIX", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
]);
/** Secrets by name beyond the patterns: the ones the daemon itself uses, and credential channels that are not values. */
const SECRET_VARS = new Set(["EXA_API_KEY", "GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "SSH_AUTH_SOCK", "GIT_ASKPASS", "SSH_ASKPASS"]);
const SECRET_NAME = /(_KEY|_TOKEN|_SECRET|_PAT|_PASSWD|_CREDENTIALS)$|PASSWORD/i;
/** Startup code bash would run despite --norc (BASH_ENV, ENV) and functions exported into the environment. */
const STARTUP_VAR = /^(BASH_ENV|ENV|PROMPT_COMMAND|BASH_FUNC_.*)$/;

export function isSecretName(name: string): boolean {
  return SECRET_VARS.has(name) || SECRET_NAME.test(name);
}

function isWithheld(name: string, passThrough: ReadonlySet<string>): boolean {
  if (REPOSITORY_VARS.has(name) || /^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(name) || STARTUP_VAR.test(name)) return true;
  return isSecretName(name) && !passThrough.has(name);
}

/** Nothing may page, open an editor or wait for a password: there is no terminal and stdin is not a person. CI is not
 * set: it changes what builds do (warnings as errors), and a call can set it in its own env. */
const NON_INTERACTIVE: Record<string, string> = {
  PAGER: "cat", GIT_PAGER: "cat", MANPAGER: "cat", SYSTEMD_PAGER: "cat",
  EDITOR: ":", VISUAL: ":", GIT_EDITOR: ":", GIT_SEQUENCE_EDITOR: ":", GIT_MERGE_AUTOEDIT: "no",
  GIT_TERMINAL_PROMPT: "0", GCM_INTERACTIVE: "never", DEBIAN_FRONTEND: "noninteractive", TERM: "dumb",
};

export interface EnvOptions {
  /** The daemon's environment. */
  base: NodeJS.ProcessEnv;
  /** `--terminal-env NAME`: secrets passed through on purpose (repository variables never are). */
  passThrough?: readonly string[];
  /** The call's `env`: the caller's explicit choice, applied last. */
  callEnv?: Record<string, string>;
  /** HOME inside the sandbox (sandboxHome). */
  home: string;
}

/** The whole environment of a sandboxed command. */
export function sandboxEnv(opts: EnvOptions): Record<string, string> {
  const pass = new Set(opts.passThrough ?? []);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.base)) if (v !== undefined && !isWithheld(k, pass)) env[k] = v;
  return { ...env, ...NON_INTERACTIVE, HOME: opts.home, TMPDIR: "/tmp", ...opts.callEnv };
}
