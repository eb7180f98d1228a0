/**
 * Language servers inside bubblewrap (SPEC 10: "where the sandbox of section 11 works the servers run inside it,
 * workspace read-only, no network"). Not the terminal's argv: that one binds the workspace read-write and runs bash.
 * Here the whole system is read-only, /tmp private, /run hidden (unix sockets on a read-only mount still accept
 * connections), no network and no capabilities, and the server dies with the daemon (--die-with-parent).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Supervisor } from "../platform/supervisor.js";
import { hasDisableUserns, hostSandboxPaths } from "../terminal/sandbox-probe.js";
import { PROC_READONLY, type View, guardMounts } from "../terminal/sandbox.js";
import type { ServerWrapper } from "./supervised-spawn.js";

/** `--lsp-sandbox`: auto runs the servers sandboxed where bwrap works, on requires it, off never uses it. */
export type LspSandboxMode = "auto" | "on" | "off";

/** The private /tmp every sandboxed server gets (lspSandboxArgv). */
const PRIVATE_TMP = "/tmp";

/** bwrap and node start in tens of milliseconds; much longer means something is wrong, not slow. */
const PROBE_TIMEOUT_MS = 10_000;

export interface LspSandboxOptions {
  /** The workspace (absolute real path): read-only, bound again after the private /tmp in case it lies there. */
  root: string;
  /** Other paths bound again read-only after the tmpfs mounts: our node_modules and node itself, wherever they are. */
  keep: readonly string[];
  /** Directories hidden behind an empty tmpfs (the existing ones of /run and /var/run). */
  hidden: readonly string[];
  /** `--unshare-user --disable-userns` (bwrap 0.8 and later): no nested user namespaces. */
  disableUserns: boolean;
  /** Host folders covered by an empty read-only tmpfs wherever they show (the daemon's state folder: approvals). */
  hide?: readonly string[];
}

/** The bwrap command line around a server's own (argv[0] is `bwrap`). */
export function lspSandboxArgv(opts: LspSandboxOptions, command: string, args: readonly string[]): string[] {
  const a = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  for (const p of PROC_READONLY) a.push("--ro-bind-try", p, p);
  a.push("--perms", "1777", "--tmpfs", PRIVATE_TMP);
  for (const d of opts.hidden) a.push("--tmpfs", d);
  const bound = [...new Set([opts.root, ...opts.keep])];
  for (const p of bound) a.push("--ro-bind", p, p);
  // Nothing is writable but the private tmpfs mounts, so the guard pins nothing.
  const views: View[] = [{ dest: "/", src: "/", writable: false }, ...["/tmp", ...opts.hidden].map((dest) => ({ dest, writable: true })), ...bound.map((p) => ({ dest: p, src: p, writable: false }))];
  a.push(...guardMounts(views, [], opts.hide ?? []).args);
  a.push("--chdir", opts.root, "--unshare-all");
  if (opts.disableUserns) a.push("--unshare-user", "--disable-userns");
  a.push("--die-with-parent", "--new-session", "--cap-drop", "ALL", "--", command, ...args);
  return a;
}

/**
 * Whether a sandboxed server sees nothing of the host's `abs` (a real path): it is under the private /tmp or a hidden
 * folder and not bound again (the root, the kept paths). A link from the root to such a place dangles in there.
 */
export function hiddenInSandbox(opts: Pick<LspSandboxOptions, "root" | "keep" | "hidden">, abs: string): boolean {
  const under = (dir: string) => abs === dir || abs.startsWith(`${dir}/`);
  if ([opts.root, ...opts.keep].some(under)) return false;
  return [PRIVATE_TMP, ...opts.hidden].some(under);
}

/** What the servers need to see wherever the daemon is installed: our node_modules and node's own folder. */
export function keptPaths(): string[] {
  const require = createRequire(import.meta.url);
  const nodeModules = path.dirname(path.dirname(require.resolve("typescript/package.json")));
  return [nodeModules, path.dirname(path.dirname(process.execPath))];
}

export type SandboxProbe =
  | { available: true; wrapper: ServerWrapper; version: string; hides: (abs: string) => boolean }
  | { available: false; reason: string };

/** Runs node inside the sandbox once: if that works, every server can run there. */
export async function probeLspSandbox(processes: Pick<Supervisor, "run">, root: string, hide: readonly string[] = []): Promise<SandboxProbe> {
  const run = (args: string[]) => processes.run({ cmd: "bwrap", args, cwd: root, group: false, label: "lsp sandbox probe" }, { timeoutMs: PROBE_TIMEOUT_MS })
    .catch((e: NodeJS.ErrnoException) => ({ code: null, stdout: "", stderr: e.code === "ENOENT" ? "bubblewrap (bwrap) is not installed" : e.message }));
  const version = await run(["--version"]);
  if (version.code !== 0) return { available: false, reason: (version.stderr.trim() || `bwrap --version exited ${version.code}`).split("\n")[0] };
  const host = await hostSandboxPaths();
  const base = { root, keep: keptPaths(), hidden: host.hidden, hide: hide.filter((d) => existsSync(d)) };
  const attempt = async (disableUserns: boolean) => {
    const argv = lspSandboxArgv({ ...base, disableUserns }, process.execPath, ["-e", ""]);
    return run(argv.slice(1));
  };
  let disableUserns = hasDisableUserns(version.stdout);
  let r = await attempt(disableUserns);
  if (r.code !== 0 && disableUserns) {
    // A kernel where the nested-namespace guard fails: the sandbox still holds without it.
    const without = await attempt(false);
    if (without.code === 0) [r, disableUserns] = [without, false];
  }
  if (r.code !== 0) return { available: false, reason: `bwrap failed: ${(r.stderr.trim().split("\n")[0] || `exit ${r.code}`).slice(0, 300)}` };
  const opts: LspSandboxOptions = { ...base, disableUserns };
  return {
    available: true,
    version: version.stdout.trim(),
    hides: (abs) => hiddenInSandbox(opts, abs),
    wrapper: {
      isolated: true,
      wrap: (command, args, env) => {
        const argv = lspSandboxArgv(opts, command, args);
        // The private /tmp is the only writable place (tsserver's cancellation files live in the temp folder).
        return { command: argv[0], args: argv.slice(1), env: { ...env, TMPDIR: "/tmp" } };
      },
    },
  };
}
