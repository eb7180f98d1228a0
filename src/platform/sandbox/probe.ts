/**
 * Whether bubblewrap works here, asked once per kind of sandbox: `bwrap --version`, then the caller's own policy on a
 * command that does nothing the workspace controls, with `--disable-userns` where bwrap has it and, if that fails, once
 * more without it. The terminal, the checks (the terminal's runner) and the language servers all ask this way.
 */
import { readFile } from "node:fs/promises";
import { isNodeError } from "../../errors.js";
import type { Supervisor } from "../supervisor.js";
import { type SandboxPolicy, bwrapArgv } from "./bwrap-argv.js";

export interface ProbeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Set when the program could not be started (ENOENT: not installed). */
  error?: NodeJS.ErrnoException;
}

/** Runs a short-lived program to completion: injected, so the probe goes through the daemon's process supervisor. */
export type RunFn = (file: string, args: readonly string[], opts: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs: number }) => Promise<ProbeRun>;

/** A sandbox that starts in tens of milliseconds; much longer means something is wrong, not slow. */
export const PROBE_TIMEOUT_MS = 10_000;

export interface BwrapProbe {
  available: boolean;
  /** Why the sandbox is not available: bwrap missing, user namespaces off, or bwrap's own words. */
  reason?: string;
  /** `bubblewrap 0.8.0`. */
  version?: string;
  /** Whether `--disable-userns` works here (bwrap 0.8 and later): pass it on in SandboxPolicy.disableUserns. */
  disableUserns: boolean;
}

/** What the probe tries: the caller's sandbox, as it will run it. */
export interface ProbeTrial {
  cwd: string;
  /** The whole environment of the try. */
  env: NodeJS.ProcessEnv;
  /** The policy to try, with or without `--disable-userns`. */
  policy(disableUserns: boolean): SandboxPolicy;
  /**
   * How the first try runs, given the policy's argv and how to run an argv as the probe does (the terminal's: inside a
   * command's cgroup, so a cgroup that cannot be joined shows); default: as it is.
   */
  first?: (argv: readonly string[], run: (argv: readonly string[]) => Promise<ProbeRun>) => Promise<ProbeRun>;
}

/** The probe's runner on the process supervisor: even the probe is a child the daemon owns. */
export function supervisedRun(processes: Pick<Supervisor, "run">, label: string): RunFn {
  return async (file, args, opts) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.env)) if (v !== undefined) env[k] = v;
    try {
      // bwrap starts nothing outside its PID namespace, which ends with it: no process group needed.
      const r = await processes.run({ cmd: file, args, cwd: opts.cwd, exactEnv: env, group: false, label }, { timeoutMs: opts.timeoutMs });
      return { code: r.code, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
    } catch (e) {
      if (isNodeError(e)) return { code: null, signal: null, stdout: "", stderr: "", error: e };
      throw e;
    }
  };
}

/** bwrap learned `--disable-userns` in 0.8.0. */
export function hasDisableUserns(version: string): boolean {
  const m = /(\d+)\.(\d+)/.exec(version);
  return !!m && (Number(m[1]) > 0 || Number(m[2]) >= 8);
}

export async function probeBwrap(run: RunFn, trial: ProbeTrial): Promise<BwrapProbe> {
  const version = await run("bwrap", ["--version"], { env: trial.env, cwd: trial.cwd, timeoutMs: PROBE_TIMEOUT_MS });
  if (version.error || version.code !== 0) return { available: false, reason: await failureReason(version), disableUserns: false };
  const runOpts = { env: trial.env, cwd: trial.cwd, timeoutMs: PROBE_TIMEOUT_MS };
  const plain = (argv: readonly string[]) => run(argv[0], argv.slice(1), runOpts);
  const argvFor = (disableUserns: boolean) => bwrapArgv(trial.policy(disableUserns)).argv;
  let disableUserns = hasDisableUserns(version.stdout);
  let r = await (trial.first ?? plain)(argvFor(disableUserns), plain);
  if (r.code !== 0 && disableUserns) {
    // A kernel or setup where the nested namespace guard fails: the sandbox still holds without it.
    const without = await plain(argvFor(false));
    if (without.code === 0) [r, disableUserns] = [without, false];
  }
  const out: BwrapProbe = { available: r.code === 0, version: version.stdout.trim(), disableUserns };
  if (!out.available) out.reason = await failureReason(r);
  return out;
}

async function sysctl(name: string): Promise<string | undefined> {
  return (await readFile(`/proc/sys/${name.replaceAll(".", "/")}`, "utf8").catch(() => undefined))?.trim();
}

/** What the kernel says about user namespaces, for a reason a person can act on. */
async function usernsHint(): Promise<string> {
  const hints: string[] = [];
  if ((await sysctl("user.max_user_namespaces")) === "0") hints.push("user.max_user_namespaces=0");
  if ((await sysctl("kernel.unprivileged_userns_clone")) === "0") hints.push("kernel.unprivileged_userns_clone=0");
  if ((await sysctl("kernel.apparmor_restrict_unprivileged_userns")) === "1") hints.push("kernel.apparmor_restrict_unprivileged_userns=1");
  return hints.length ? ` (${hints.join(", ")})` : "";
}

const USERNS_FAILURE = /new namespace|uid map|unshare|clone|Operation not permitted|Permission denied/i;

async function failureReason(r: ProbeRun): Promise<string> {
  if (r.error?.code === "ENOENT") return "bubblewrap (bwrap) is not installed: install the bubblewrap package";
  if (r.error) return `bwrap could not be started: ${r.error.message}`;
  const said = r.stderr.trim().split("\n")[0] || (r.signal ? `killed by ${r.signal}` : `exit ${r.code}`);
  if (USERNS_FAILURE.test(said)) return `bwrap cannot create its namespaces here: user namespaces are off or restricted${await usernsHint()}: ${said}`;
  return `bwrap failed: ${said}`;
}
