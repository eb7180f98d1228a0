/** How a language server process is started and stopped (supervised-spawn.ts makes one on the process supervisor). */
import type { ServerChild, StopOptions } from "../platform/supervisor.js";

export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface SpawnedServer {
  process: ServerChild;
  /**
   * Ends the server and everything it started (tsserver under typescript-language-server, the sandbox's namespace):
   * the supervisor's stop, resolved once all of it is gone or with the pids still running after its bounded wait.
   */
  stop(opts?: StopOptions): Promise<number[]>;
  /** In a PID namespace of its own (the sandbox): the daemon's pid means nothing there, so initialize sends none. */
  isolated?: boolean;
}

export type SpawnServer = (command: string, args: readonly string[], options: SpawnOptions) => SpawnedServer;
