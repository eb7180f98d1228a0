import { z } from "zod";
import { defineTool } from "../dispatch/tool.js";

export const terminalKillTool = defineTool({
  id: "terminal_kill",
  description: "Stops a background job and everything it started (SIGTERM, SIGKILL two seconds later), and answers with its exit.",
  params: { job: z.string().min(1).describe('The job id terminal_run gave, e.g. "job-1".') },
  mutating: true,
  async run({ job: id }, ctx) {
    const job = ctx.services.terminal.job(id);
    const running = job.running;
    const { pid, command } = job.info();
    if (ctx.dryRun)
      return {
        job: id,
        pid,
        command,
        running,
        text: running ? `would stop ${id} (pid ${pid}): ${command}` : `${id} has already ended (${job.status()}); nothing to stop`,
      };
    const exit = await job.kill();
    return {
      job: id,
      killed: running,
      exit_code: exit.code,
      signal: exit.signal,
      text: running ? `stopped ${id}: ${job.status()}` : `${id} had already ended (${job.status()})`,
    };
  },
});
