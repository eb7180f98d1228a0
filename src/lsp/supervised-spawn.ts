/**
 * Language servers as children of the daemon's process supervisor (SPEC 1): registered with the watchdog the moment
 * they are spawned, in a process group of their own and, unsandboxed, a cgroup of their own (sandboxed, bwrap's PID
 * namespace does that part), ended by the supervisor's stop (the server's, the daemon's) and after a SIGKILL of the
 * daemon. The environment is the one the client chose (serverEnv over the workspace environment), used as it is.
 */
import type { Supervisor } from "../platform/supervisor.js";
import type { SpawnServer } from "./spawn.js";

/** Turns a server's command line into the one to run (the sandbox's bwrap around it); `isolated`: its own PID namespace. */
export interface ServerWrapper {
  wrap(command: string, args: readonly string[], env: NodeJS.ProcessEnv): { command: string; args: string[]; env: NodeJS.ProcessEnv };
  isolated: boolean;
}

export function supervisedSpawn(processes: Pick<Supervisor, "attach">, wrapper?: ServerWrapper): SpawnServer {
  return (command, args, options) => {
    const run = wrapper ? wrapper.wrap(command, args, options.env) : { command, args: [...args], env: options.env };
    const exactEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(run.env)) if (v !== undefined) exactEnv[k] = v;
    const attached = processes.attach({
      cmd: run.command,
      args: run.args,
      cwd: options.cwd,
      exactEnv,
      stdin: "pipe",
      isolated: wrapper?.isolated,
      label: `language server ${args[0] ?? command}`,
    });
    // The whole tree: tsserver goes with its typescript-language-server, the sandbox with its bwrap, and what a
    // server's child started in a session of its own (pyright's python3) too.
    return { process: attached.child, isolated: wrapper?.isolated ?? false, stop: (opts) => attached.stop(opts) };
  };
}
