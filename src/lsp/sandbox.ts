/**
 * Language servers inside bubblewrap (SPEC 10: "where the sandbox of section 11 works the servers run inside it,
 * workspace read-only, no network"). Not the terminal's policy: that one binds the workspace read-write and runs bash.
 * Here (lspPolicy, built into bwrap's argv as every sandbox is) the whole system is read-only, /tmp private, /run hidden (unix sockets on a read-only mount still accept
 * connections), no network and no capabilities, and the server dies with the daemon (--die-with-parent).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { childEnv } from "../platform/child-env.js";
import { type Mount, type SandboxPolicy, bwrapArgv } from "../platform/sandbox/bwrap-argv.js";
import { hostSandboxPaths } from "../platform/sandbox/host.js";
import { probeBwrap, supervisedRun } from "../platform/sandbox/probe.js";
import type { Supervisor } from "../platform/supervisor.js";
import type { ServerWrapper } from "./supervised-spawn.js";

/** `--lsp-sandbox`: auto runs the servers sandboxed where bwrap works, on requires it, off never uses it. */
export type LspSandboxMode = "auto" | "on" | "off";

/** The private /tmp every sandboxed server gets (lspPolicy). */
const PRIVATE_TMP = "/tmp";

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

/** A language server's sandbox: nothing writable but the private tmpfs mounts, so the guard pins nothing. */
export function lspPolicy(opts: LspSandboxOptions, command: string, args: readonly string[]): SandboxPolicy {
  const mounts: Mount[] = [{ kind: "tmpfs", dest: PRIVATE_TMP, perms: "1777" }, ...opts.hidden.map((dest): Mount => ({ kind: "tmpfs", dest }))];
  for (const p of new Set([opts.root, ...opts.keep])) mounts.push({ kind: "bind", src: p, dest: p, writable: false });
  return { mounts, readOnly: [], hide: opts.hide ?? [], cwd: opts.root, network: false, disableUserns: opts.disableUserns, command: [command, ...args] };
}

/** The bwrap command line around a server's own (argv[0] is `bwrap`). */
export function lspSandboxArgv(opts: LspSandboxOptions, command: string, args: readonly string[]): string[] {
  return bwrapArgv(lspPolicy(opts, command, args)).argv;
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

export type SandboxProbe = { available: true; wrapper: ServerWrapper; version: string; hides: (abs: string) => boolean } | { available: false; reason: string };

/** The one bubblewrap probe (platform/sandbox/probe.ts) on node in a server's sandbox: if that works, every server can run there. */
export async function probeLspSandbox(processes: Pick<Supervisor, "run">, root: string, hide: readonly string[] = []): Promise<SandboxProbe> {
  const host = await hostSandboxPaths();
  const base = { root, keep: keptPaths(), hidden: host.hidden, hide: hide.filter((d) => existsSync(d)) };
  const probe = await probeBwrap(supervisedRun(processes, "lsp sandbox probe"), {
    cwd: root,
    env: childEnv(),
    policy: (disableUserns) => lspPolicy({ ...base, disableUserns }, process.execPath, ["-e", ""]),
  });
  if (!probe.available) return { available: false, reason: probe.reason ?? "bwrap failed" };
  const opts: LspSandboxOptions = { ...base, disableUserns: probe.disableUserns };
  return {
    available: true,
    version: probe.version ?? "",
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
