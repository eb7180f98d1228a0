/**
 * The terminal sandbox (SPEC 11) as pure functions: the bubblewrap policy (its argv built by platform/sandbox's
 * bwrapArgv, as every sandbox's is) and the environment a command runs with.
 *
 * What the runner (on the process supervisor) must do with them:
 * - Once at start: `hostSandboxPaths()` (hidden dirs, kept paths, the home path; platform/sandbox/host.ts) and
 *   `probeSandbox()` (available or why not, `disableUserns`, which limits hold) from sandbox-probe.ts; `sweepStaleCgroups()` for a previous daemon's leftovers.
 *   Without a working sandbox, answer SANDBOX_UNAVAILABLE unless `--terminal-sandbox off`.
 * - Per command: `checkCommand` first (shell-parse.ts; a refusal is `shellWriteRefused(reason)`, in a dry run too), then
 *   `buildSandboxArgv` (show it in the preview, digest it into preview_id) and `sandboxEnv` (never in the argv, never
 *   shown: it changes with the daemon's environment).
 * - Open the pins (`openPins`, platform/sandbox/host.ts) and hand them over as descriptors 3, 4, …; spawn `argv[0]`
 *   with `argv.slice(1)` and that env as the whole environment. When cgroup limits hold, spawn
 *   `heldBwrapArgv(argv, 3 + pins)` with HELD_PIPES socket pairs after the pins and `CommandCgroup.admit` it
 *   (cgroup-limits.ts), so the sandbox is in its cgroup before the command starts, and `release()` the cgroup after it
 *   exits.
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
import { type BwrapCommand, type Mount, type SandboxPolicy, type View, bwrapArgv, inside, viewOf } from "../platform/sandbox/bwrap-argv.js";
import { FALLBACK_HOME, HIDDEN_DIRS } from "../platform/sandbox/host.js";

export { PROC_READONLY, type View } from "../platform/sandbox/bwrap-argv.js";
export { FALLBACK_HOME } from "../platform/sandbox/host.js";

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

/**
 * A terminal command's sandbox (a custom check's too): the workspace read-write, its git dirs read-only, a private
 * /tmp, an empty HOME (or --terminal-home's), /run hidden, the state folder hidden, no network unless asked.
 */
export function terminalPolicy(opts: SandboxOptions): SandboxPolicy {
  for (const [name, p] of [
    ["root", opts.root],
    ["cwd", opts.cwd],
  ] as const) {
    if (!path.posix.isAbsolute(p)) throw new Error(`sandbox ${name} must be absolute: ${p}`);
  }
  const home = sandboxHome(opts);
  const mounts: Mount[] = [opts.tmpDir ? { kind: "bind", src: opts.tmpDir, dest: "/tmp", writable: true } : { kind: "tmpfs", dest: "/tmp", perms: "1777" }];
  for (const d of opts.hidden ?? ["/run"]) mounts.push({ kind: "tmpfs", dest: d });
  for (const k of opts.keep ?? []) mounts.push({ kind: "bind", src: k, dest: k, writable: false });
  if (opts.home) mounts.push({ kind: "bind", src: opts.home, dest: home, writable: true });
  else if (home === FALLBACK_HOME)
    mounts.push({ kind: "dir", dest: home }); // an empty folder in the private /tmp
  else mounts.push({ kind: "tmpfs", dest: home });
  // After /tmp and HOME, so a workspace under either is still there; the git dirs' guards come after it and win.
  mounts.push({ kind: "bind", src: opts.root, dest: opts.root, writable: true });
  return {
    mounts,
    readOnly: opts.gitDirs,
    hide: opts.hide ?? [],
    cwd: opts.cwd,
    network: opts.network,
    disableUserns: opts.disableUserns ?? true,
    statusFd: opts.statusFd,
    command: typeof opts.command === "string" ? bashArgv(opts.command) : opts.command,
  };
}

/** One terminal command's bubblewrap command line (argv[0] is `bwrap`), the folders it pins (Guard.pins) and what its
 * file system shows where. */
export function buildSandbox(opts: SandboxOptions): BwrapCommand {
  return bwrapArgv(terminalPolicy(opts));
}

/** The bubblewrap command line alone (a sandbox that pins nothing, or a preview). */
export function buildSandboxArgv(opts: SandboxOptions): string[] {
  return buildSandbox(opts).argv;
}

/** What a hidden place is called in a hint, and what to do about it. */
function hiddenPlace(dest: string, homeFlag: boolean): string {
  if (dest === "/tmp") return "/tmp is private in the sandbox (an empty tmpfs of its own)";
  if (dest === FALLBACK_HOME || !HIDDEN_DIRS.includes(dest))
    return `HOME (${dest}) is an empty folder in the sandbox${homeFlag ? " (--terminal-home DIR binds a real one)" : ""}`;
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
  const said = [...byPlace].map(
    ([dest, paths]) => `${hiddenPlace(dest, opts.homeFlag)}, so ${[...paths].join(", ")} ${paths.size === 1 ? "is" : "are"} not there`,
  );
  return `hint: ${said.join("; ")}. Put the toolchain outside those places (under the workspace, or a system folder such as /opt or /usr/local), or start the daemon with --terminal-sandbox off.`;
}

/** Repository variables: the root decides the repository (SPEC 1). */
const REPOSITORY_VARS = new Set([
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
  "GIT_CONFIG",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG_COUNT",
]);
/** Secrets by name beyond the patterns: the ones the daemon itself uses, and credential channels that are not values. */
const SECRET_VARS = new Set([
  "EXA_API_KEY",
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "GH_ENTERPRISE_TOKEN",
  "GITHUB_ENTERPRISE_TOKEN",
  "SSH_AUTH_SOCK",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
]);
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
  PAGER: "cat",
  GIT_PAGER: "cat",
  MANPAGER: "cat",
  SYSTEMD_PAGER: "cat",
  EDITOR: ":",
  VISUAL: ":",
  GIT_EDITOR: ":",
  GIT_SEQUENCE_EDITOR: ":",
  GIT_MERGE_AUTOEDIT: "no",
  GIT_TERMINAL_PROMPT: "0",
  GCM_INTERACTIVE: "never",
  DEBIAN_FRONTEND: "noninteractive",
  TERM: "dumb",
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
