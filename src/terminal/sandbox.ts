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
 *   descriptor (the output file opened for appending, tailed for the live stream) so their order is the order written.
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
  /** `--json-status-fd`: bwrap writes `{"child-pid":…}` then `{"exit-code":…}` as JSON lines to this descriptor. */
  statusFd?: number;
}

function inside(p: string, dir: string): boolean {
  const rel = path.posix.relative(dir, p);
  return rel === "" || (!rel.startsWith("..") && !path.posix.isAbsolute(rel));
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

/** The bubblewrap command line for one terminal command (argv[0] is `bwrap`). */
export function buildSandboxArgv(opts: SandboxOptions): string[] {
  for (const [name, p] of [["root", opts.root], ["cwd", opts.cwd]] as const) {
    if (!path.posix.isAbsolute(p)) throw new Error(`sandbox ${name} must be absolute: ${p}`);
  }
  const home = sandboxHome(opts);
  const a = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  for (const p of PROC_READONLY) a.push("--ro-bind-try", p, p);
  if (opts.tmpDir) a.push("--bind", opts.tmpDir, "/tmp");
  else a.push("--perms", "1777", "--tmpfs", "/tmp");
  for (const d of opts.hidden ?? ["/run"]) a.push("--tmpfs", d);
  for (const k of opts.keep ?? []) a.push("--ro-bind", k, k);
  if (opts.home) a.push("--bind", opts.home, home);
  else if (home === FALLBACK_HOME) a.push("--dir", home); // an empty folder in the private /tmp
  else a.push("--tmpfs", home);
  // After /tmp and HOME, so a workspace under either is still there, and git dirs after it, so they win over it.
  // `-try`: a git dir removed since it was found (between a preview and its run) has nothing left to protect, and a
  // missing source would stop bwrap before the command starts.
  a.push("--bind", opts.root, opts.root);
  for (const g of [...new Set(opts.gitDirs)].sort()) a.push("--ro-bind-try", g, g);
  a.push("--chdir", opts.cwd);
  a.push("--unshare-all");
  if (opts.disableUserns ?? true) a.push("--unshare-user", "--disable-userns");
  if (opts.network) a.push("--share-net");
  // --cap-drop ALL: as root, a sandbox that kept its capabilities can `mount -o remount,rw /`. bwrap always sets
  // no_new_privs, so setuid binaries cannot give them back.
  a.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  if (opts.statusFd !== undefined) a.push("--json-status-fd", String(opts.statusFd));
  a.push("--", ...(typeof opts.command === "string" ? bashArgv(opts.command) : opts.command));
  return a;
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
