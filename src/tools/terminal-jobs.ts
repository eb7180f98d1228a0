import { defineTool } from "../dispatch/tool.js";

export const terminalJobsTool = defineTool({
  id: "terminal_jobs",
  description:
    "Lists the background jobs terminal_run started (running ones, and finished ones while their output is kept): id, command, folder, session, pid, status and output file.",
  params: {},
  mutating: false,
  async run(_p, ctx) {
    const jobs = [...ctx.services.terminal.jobs.values()];
    const text = jobs.length ? jobs.map((j) => `${j.id}  ${j.status()}  ${j.info().cwd}  ${j.command}`).join("\n") : "no background jobs";
    return { jobs: jobs.map((j) => j.info()), text };
  },
});
